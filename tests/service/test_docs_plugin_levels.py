"""docs/bots.md, "House levels from plug-ins": the example package it shows (its module and its `pyproject.toml`
entry point), installed as pip would install it, is found, listed by the catalog for the games it names, taken
by the seat the page shows and played to the end of a game with no warning."""

from __future__ import annotations

import json
import logging
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fakeredis
import pytest

from domain import bots
from domain.bots import LEVELS
from service.app import create_app
from service.play.plugin_levels import GROUP
from tests.conftest import RecordingDispatcher

ROOT = Path(__file__).resolve().parents[2]


def section() -> str:
    text = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    start = text.index("## House levels from plug-ins")
    return text[start : text.index("\n## ", start + 1)]


def block(language: str) -> str:
    (found,) = re.findall(rf"```{language}\n(.*?)```", section(), re.DOTALL)
    return found


def entry_points() -> dict[str, str]:
    """The entry points of the page's `pyproject.toml` snippet, in its group."""
    found: dict[str, str] = tomllib.loads(block("toml"))["project"]["entry-points"][GROUP]
    return found


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The page's example package, as pip installs it: its module and a dist-info with its entry points."""
    ((name, target),) = entry_points().items()
    module_path = tmp_path.joinpath(*target.split(":")[0].split("."))
    module_path.parent.mkdir(parents=True)
    (module_path.parent / "__init__.py").write_text("", encoding="utf-8")
    module_path.with_suffix(".py").write_text(block("python"), encoding="utf-8")
    dist = tmp_path / "my_bots-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-bots\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(f"[{GROUP}]\n{name} = {target}\n", encoding="utf-8")
    before = bots.plugin_levels()
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    bots.use_plugin_levels(before)
    sys.modules.pop(target.split(".")[0], None)
    sys.modules.pop(target.split(":")[0], None)


def test_the_page_shows_one_entry_point_in_the_group_and_the_seat_that_takes_it() -> None:
    assert GROUP == "cardtable.bots" and f'[project.entry-points."{GROUP}"]' in block("toml")
    assert entry_points() == {"last-legal": "my_bots.last_legal"}
    assert '{"kind": "bot", "level": "last-legal"}' in section()
    assert "`my_bots/last_legal.py`" in section()


def test_the_page_s_example_is_found_listed_and_plays_a_game_to_its_end(
    installed: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dispatcher = RecordingDispatcher()
    with caplog.at_level(logging.INFO, logger="service.play.plugin_levels"):
        app = create_app(
            {"TESTING": True}, redis_client=fakeredis.FakeRedis(decode_responses=True), dispatcher=dispatcher
        )
    dispatcher.service = app.extensions["games"]
    client = app.test_client()
    games = {game["id"]: game["bot_levels"] for game in client.get("/v1/catalog").get_json()["games"]}
    assert games["golf"] == [*LEVELS, "last-legal"], "listed after the built-in levels"
    assert all(levels == list(LEVELS) for game, levels in games.items() if game != "golf")

    seat: dict[str, Any] = json.loads('{"kind": "bot", "level": "last-legal"}')
    created = client.post("/v1/games", json={"game": "golf", "seats": [seat, seat], "options": {"rounds": 1}})
    assert created.status_code == 201, created.get_json()
    dispatcher.drain()
    view = client.get(f"/v1/games/{created.get_json()['id']}").get_json()
    assert view["status"] == "finished"
    assert [r.levelno for r in caplog.records] == [logging.INFO], [r.getMessage() for r in caplog.records]
    assert caplog.records[0].getMessage() == "bot plug-in 'last-legal' (my_bots.last_legal) plays golf"
    elsewhere = client.post("/v1/games", json={"game": "go5", "seats": [seat, seat]})
    assert (elsewhere.status_code, elsewhere.get_json()["code"]) == (422, "invalid_bot_seat")
