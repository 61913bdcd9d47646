"""A retry that races its own first request still gets the first answer (service/play/game_service.py)."""

from __future__ import annotations

from typing import Any

import flask
import pytest
from flask.testing import FlaskClient

from service.play.game_service import GameService
from tests.conftest import auth


@pytest.mark.parametrize("expected", [False, True], ids=["no-version", "expected-version"])
def test_a_retry_that_looked_before_the_first_append_gets_the_first_answer(
    app: flask.Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch, expected: bool
) -> None:
    seats = [{"kind": "human"}, {"kind": "human"}]
    created = client.post("/v1/games", json={"game": "golf", "seats": seats}).get_json()
    game_url = f"/v1/games/{created['id']}"
    token = created["seats"][1]["token"]
    version = client.get(game_url).get_json()["version"]
    action: dict[str, Any] = {"type": "reveal", "positions": [0, 1]}
    if expected:
        action["expected_version"] = version
    headers = {**auth(token), "Idempotency-Key": "k"}
    first = client.post(f"{game_url}/actions", json=action, headers=headers)
    assert first.status_code == 200

    service: GameService = app.extensions["games"]
    real = service.store.idempotent_answer
    looks: list[str] = []

    def looked_too_early(game_id: str, field: str) -> str | None:
        looks.append(field)
        return None if len(looks) == 1 else real(game_id, field)  # the first look-up ran before the append

    monkeypatch.setattr(service.store, "idempotent_answer", looked_too_early)
    retry = client.post(f"{game_url}/actions", json=action, headers=headers)
    assert (retry.status_code, retry.get_json()) == (200, first.get_json())
    assert len(looks) == 2
    assert client.get(game_url).get_json()["version"] == first.get_json()["version"], "nothing appended"
