"""The page's move composer (service/api/web_page/static/composer.js) against the rules' own legal actions.

Random positions of all four games are played with the domain engine; each seat's `you.legal` is
dumped to JSON and the composer is run on it under Node (tests/web/composer_check.mjs): every legal
action can be built by picking cards and places, and no sequence of picks builds an illegal one.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

from domain import engine

ROOT = Path(__file__).resolve().parents[2]
COMPOSER = ROOT / "service" / "api" / "web_page" / "static" / "composer.js"
CHECK = ROOT / "tests" / "web" / "composer_check.mjs"
POSITIONS_PER_GAME = 600
TABLES: dict[str, list[tuple[int, dict[str, Any]]]] = {
    "golf": [(2, {}), (4, {"layout": "3x3", "initial_flips": 3}), (3, {"initial_flips": 0}), (6, {"layout": "3x3"})],
    "switch": [(4, {}), (5, {"target": 50}), (6, {})],
    "romme": [(2, {}), (3, {}), (4, {})],
    "go5": [(2, {}), (3, {}), (4, {})],
}


def shown(view: dict[str, Any], seat: int) -> dict[str, int]:
    """What the play page draws for `seat` to pick, with how many of each: its cards and places."""
    table, you = view["table"], view["you"]
    things = ["stock", "discard", "pass", "newmeld", "newset", "stop", *(f"suit:{s}" for s in "SHDC")]
    things += [f"cut:{n}" for n in range(1, 200)]
    hand = [c for c in you.get("hand", []) if isinstance(c, str)]
    if you.get("drawn") and view["game"] == "switch" and you["drawn"] not in hand:
        hand.append(you["drawn"])
    things += [f"hand:{card}" for card in hand]
    for grid in table.get("grids", []):
        things += [f"grid:{p}" for p in range(len(grid["slots"])) if grid["seat"] == seat]
    for meld in table.get("melds", []):
        things += [f"meld:{meld['id']}", *([f"joker:{meld['id']}"] if "JK" in meld["cards"] else [])]
    for player in table.get("players", []):
        for set_ in player["sets"]:
            things.append(f"set:{set_['id']}")
            if player["seat"] != seat:
                things += [f"take:{set_['id']}:{card}" for card in set_["cards"]]
    counts: dict[str, int] = {}
    for thing in things:
        counts[thing] = counts.get(thing, 0) + 1
    return counts


def positions_of(game: str, count: int, rng: random.Random) -> list[dict[str, Any]]:
    """`count` positions met in random legal play: a seat's legal actions and what the composer reads."""
    found: list[dict[str, Any]] = []
    while len(found) < count:
        players, options = rng.choice(TABLES[game])
        config = engine.make_config(game, players, options, f"composer-{rng.random()}")
        snap, _ = engine.start(config)
        while not snap.finished and len(found) < count:
            seats = sorted({*snap.to_act(), *snap.out_of_turn()})
            for seat in seats:
                legal = engine.legal_actions(snap, seat)
                if legal and rng.random() < 0.25:
                    seen = engine.view(snap, seat)
                    view = {"table": {"discard_top": seen["table"].get("discard_top")}}
                    found.append(
                        {"id": len(found), "game": game, "view": view, "legal": legal, "shown": shown(seen, seat)}
                    )
            mover = rng.choice(list(snap.to_act()))
            snap, _ = engine.act(snap, mover, rng.choice(engine.legal_actions(snap, mover)))
    return found


def test_every_legal_action_can_be_built_by_picks_and_no_picks_build_an_illegal_one(tmp_path: Path) -> None:
    """C-6: the page offers exactly `you.legal`; checked on 2,400 random positions of the four games."""
    node = shutil.which("node")
    assert node, "the composer test runs the page's JavaScript under Node: install nodejs"
    rng = random.Random(20)
    positions = [p for game in TABLES for p in positions_of(game, POSITIONS_PER_GAME, rng)]
    dump = tmp_path / "positions.json"
    dump.write_text(json.dumps(positions))
    module = tmp_path / "composer.mjs"  # an ES module by its name, whatever package.json says
    shutil.copyfile(COMPOSER, module)
    run = subprocess.run([node, str(CHECK), str(module), str(dump)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout, run.stdout + run.stderr
    summary = json.loads(run.stdout)
    assert summary["failures"] == []
    assert summary["positions"] == len(positions) == 4 * POSITIONS_PER_GAME
    assert summary["built"] == sum(len(p["legal"]) for p in positions)
    assert summary["walks"] > 0 and summary["refused"] > 0
    assert {p["game"] for p in positions} == set(TABLES)
    assert any(a["type"] == "swap" for p in positions if p["game"] == "go5" for a in p["legal"])
    assert any(a["type"] == "reveal" for p in positions if p["game"] == "golf" for a in p["legal"])
