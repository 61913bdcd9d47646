"""Expert bot seats over the API: their time budget is checked, shown, and used by the bot turns."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from domain.bots import expert
from tests.conftest import RecordingDispatcher, create_golf


@pytest.mark.parametrize(
    "seat",
    [
        {"kind": "bot", "level": "greedy", "think_ms": 300},
        {"kind": "bot", "think_ms": 300},
        {"kind": "human", "think_ms": 300},
        {"kind": "bot", "level": "expert", "think_ms": 9},
        {"kind": "bot", "level": "expert", "think_ms": 10_001},
        {"kind": "bot", "level": "expert", "think_ms": "300"},
        {"kind": "bot", "level": "expert", "think_ms": 1.5},
        {"kind": "bot", "level": "master"},
    ],
)
def test_a_bad_bot_seat_is_refused_and_creates_nothing(
    client: FlaskClient, fake_redis: Any, seat: dict[str, Any]
) -> None:
    before = set(fake_redis.keys())
    response = client.post("/v1/games", json={"game": "golf", "seats": [{"kind": "human"}, seat]})
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["code"] == "invalid_request"
    assert set(fake_redis.keys()) == before


def test_an_expert_seat_keeps_its_budget_and_plays_its_turns(
    client: FlaskClient, dispatcher: RecordingDispatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    budgets: list[expert.Budget] = []
    search = expert.search

    def recording_search(view: Any, legal: Any, rng: Any, budget: expert.Budget) -> dict[str, Any]:
        budgets.append(budget)
        return search(view, legal, rng, expert.Budget(samples=2, think_ms=budget.think_ms, max_candidates=2))

    monkeypatch.setattr(expert, "search", recording_search)
    seats = [{"kind": "bot", "level": "expert", "think_ms": 40}, {"kind": "bot", "level": "greedy"}]
    created = create_golf(client, seats, options={"rounds": 1})
    assert created["seats"][0]["think_ms"] == 40 and "think_ms" not in created["seats"][1]

    dispatcher.drain()

    view = client.get(f"/v1/games/{created['id']}").get_json()
    assert view["status"] == "finished"
    assert view["seats"][0]["level"] == "expert" and view["seats"][0]["think_ms"] == 40
    assert budgets and {b.think_ms for b in budgets} == {40}
