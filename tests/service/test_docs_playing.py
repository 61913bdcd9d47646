"""docs/playing.md shows what the service takes: its Golf moves are Golf's actions, and its loop plays a
whole game to the end with legal moves only."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from domain.golf import GOLF
from tests.conftest import RecordingDispatcher, auth

DOC = (Path(__file__).resolve().parents[2] / "docs" / "playing.md").read_text(encoding="utf-8")
EXTRA_FIELDS = {"expected_version"}  # any action may carry it


def section(title: str) -> str:
    return DOC.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_golf_moves_shown_are_golf_actions_with_their_fields() -> None:
    """G-6, G-7, G-8: each body the Moves section sends names a Golf action type and only its fields."""
    shapes = {spec.type: {field.name for field in spec.fields} for spec in GOLF.actions}
    bodies = [json.loads(b) for b in re.findall(r"-d '(\{.*?\})'", section("Moves"))]
    bodies += [json.loads(b) for b in re.findall(r"# or (\{.*?\})", section("Moves"))]
    assert {body["type"] for body in bodies} == set(shapes) - {"reveal"}
    for body in bodies:
        assert set(body) - {"type"} <= shapes[body["type"]] | EXTRA_FIELDS, body


def loop_program() -> str:
    """The Python the loop in "The end of a game" runs on each view."""
    found = re.search(r"python3 -c '\n(.*?)'\)", section("The end of a game"), re.DOTALL)
    assert found is not None, "the loop's program is missing"
    return found.group(1)


def run_program(program: str, view: dict[str, object]) -> str:
    """What the program prints for this view on its stdin (it may end with sys.exit())."""
    out = io.StringIO()
    stdin = sys.stdin
    sys.stdin = io.StringIO(json.dumps(view))
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            exec(compile(program, "docs/playing.md", "exec"), {})
    finally:
        sys.stdin = stdin
    return out.getvalue().strip()


@pytest.mark.parametrize("layout", ["2x3", "3x3"])
def test_the_loop_plays_a_person_seat_to_the_end(
    client: FlaskClient, dispatcher: RecordingDispatcher, layout: str
) -> None:
    """G-4 … G-15: the loop's moves are all accepted, and it stops when the game has ended."""
    seats = [{"kind": "human", "name": "Ana"}, {"kind": "bot", "level": "greedy"}, {"kind": "bot", "level": "random"}]
    body = {"game": "golf", "seed": "loop", "options": {"rounds": 2, "layout": layout}, "seats": seats}
    created = client.post("/v1/games", json=body).get_json()
    game, headers = f"/v1/games/{created['id']}", auth(created["seats"][0]["token"])
    program, moves = loop_program(), 0
    for _ in range(2000):
        said = run_program(program, client.get(game, headers=headers).get_json())
        kind, _, rest = said.partition(" ")
        if kind == "done":
            break
        if kind == "wait":
            assert dispatcher.drain(), "the loop waits, but no bot is due"
        else:
            assert kind == "move", said
            answer = client.post(f"{game}/actions", json=json.loads(rest), headers=headers)
            assert answer.status_code == 200, (rest, answer.get_json())
            moves += 1
    assert kind == "done" and moves > 4
    assert client.get(game, headers=headers).get_json()["status"] == "finished"
