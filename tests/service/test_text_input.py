"""Text a request carries must be Unicode text: JSON's `\\ud800` escape (a lone surrogate) is valid JSON but
no character, so it can never be stored or sent on as UTF-8. Each place a client's text enters (a body's
strings and keys, a seat's name, a dispute's reason, the Idempotency-Key header) refuses it with a 400
problem and stores nothing; before, a dispute's reason and an Idempotency-Key gave a 500, and a seat's name
was accepted and then broke every export and live stream of its game. An If-Match that is not an ASCII
version number is a 400 too (`"²"` passed `str.isdigit()` and gave a 500)."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest
from flask.testing import FlaskClient

from tests.conftest import auth, create_golf
from tests.service.helpers import assert_problem, assert_unchanged, stream_entries

LONE = "\\ud800"  # as it stands in the JSON text: a high surrogate with no low one after it
REVEAL = {"type": "reveal", "positions": [0, 1]}


def post_raw(client: FlaskClient, url: str, text: str, headers: dict[str, str] | None = None) -> Any:
    return client.post(url, data=text, content_type="application/json", headers=headers or {})


def test_a_seat_name_with_a_lone_surrogate_is_400_and_makes_no_game(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis
) -> None:
    body = f'{{"game": "golf", "seats": [{{"kind": "human", "name": "A{LONE}"}}, {{"kind": "bot"}}]}}'
    response = post_raw(client, "/v1/games", body)
    problem = assert_problem(response, 400, "invalid_request")
    assert "surrogate" in problem["detail"]
    assert not fake_redis.keys("game:*")


def test_a_dispute_reason_with_a_lone_surrogate_is_400_and_files_nothing(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis
) -> None:
    game = create_golf(client)
    url = f"/v1/games/{game['id']}/disputes"
    response = post_raw(client, url, f'{{"seq": 1, "reason": "x{LONE}"}}', auth(game["seats"][0]["token"]))
    assert_problem(response, 400, "invalid_request")
    assert client.get(url).get_json()["disputes"] == []


def refused_header(client: FlaskClient, fake_redis: fakeredis.FakeRedis, header: dict[str, str]) -> None:
    """An action with `header` (and the seat's token) is a 400 and leaves the game as it was."""
    game = create_golf(client)
    before = stream_entries(fake_redis, game["id"])
    headers = {**auth(game["seats"][0]["token"]), **header}
    response = client.post(f"/v1/games/{game['id']}/actions", json=REVEAL, headers=headers)
    assert_problem(response, 400, "invalid_request")
    assert_unchanged(client, fake_redis, game["id"], before)


@pytest.mark.parametrize("key", ["k\ud800", "caf\u00e9", "tab\tkey", ""])
def test_an_idempotency_key_that_is_not_printable_ascii_is_400_and_changes_nothing(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, key: str
) -> None:
    refused_header(client, fake_redis, {"Idempotency-Key": key})


@pytest.mark.parametrize("header", ['"²"', '"١٢"', '"3\u2075"', '"+3"', '" 3"', '"3 "'])
def test_an_if_match_that_is_not_ascii_digits_is_400_and_changes_nothing(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, header: str
) -> None:
    refused_header(client, fake_redis, {"If-Match": header})


def test_an_if_match_on_no_game_without_a_token_is_400_not_500(client: FlaskClient) -> None:
    response = client.post("/v1/games/NoSuchGame/actions", json=REVEAL, headers={"If-Match": '"²"'})
    assert_problem(response, 400, "invalid_request")


def test_printable_text_still_goes_through(client: FlaskClient) -> None:
    """The refusals above are of text that is not text: names in any script, and keys of printable ASCII, pass."""
    game = create_golf(client, seats=[{"kind": "human", "name": "Zoë 🂡 Ünal"}, {"kind": "bot"}])
    assert game["seats"][0]["name"] == "Zoë 🂡 Ünal"
    headers = {**auth(game["seats"][0]["token"]), "Idempotency-Key": "retry-1 ~!@#$%^&*()", "If-Match": '"2"'}
    response = client.post(f"/v1/games/{game['id']}/actions", json=REVEAL, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
