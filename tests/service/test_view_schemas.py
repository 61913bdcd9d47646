"""The typed game-specific parts of a view (service/api/view_schemas) against real games.

Bots play whole games (every seat count, the options that change what the table shows, abandoned
games too), and every version of each game is folded again as a replay does. At every version,
the public `table`, every seat's `you`, the `result` and the full view's table (a finished game's
replay shows it at any step) must:
- validate against the JSON Schema that apispec makes of their schema, objects closed
  (`additionalProperties: false`), so a field the schema lacks fails;
- come back unchanged from a dump through their schema, as flask-smorest answers: nothing dropped,
  nothing converted.
A few fixed games also show that each schema's `required` and `allow_none` say what the values do,
and that `phases` lists exactly the phases a game goes through.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from domain import engine, switch
from domain.bots import LEVELS
from service.api.view_schemas import VIEW_SCHEMAS
from tests.service.view_parts import PARTS, FieldUse, Validators, dumped_unchanged, parts, play, schema_of, versions

SEEDS = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=12)
BOT_LEVELS = [level for level in LEVELS if level != "expert"]  # the expert thinks for seconds a move
LONG_GAME = 1000  # actions, after which the game is abandoned: most games end before (low targets, few rounds)
PROPERTY_SETTINGS = settings(max_examples=10, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
VALIDATORS = Validators()


def options_of(game: str, draw: st.DrawFn) -> dict[str, Any]:
    """Options that change what the views show, with short games (low targets, few rounds)."""
    if game == "golf":
        return {
            "layout": draw(st.sampled_from(["2x3", "3x3"])),
            "initial_flips": draw(st.integers(0, 3)),
            "rounds": draw(st.integers(1, 3)),
        }
    if game == "romme":
        return {
            "target": draw(st.integers(50, 400)),
            "hand_aus_doubles": draw(st.booleans()),
            "strict_1000": draw(st.booleans()),
        }
    if game == "switch":
        return {
            "hand_size": draw(st.integers(7, 15)),
            "match_rank": draw(st.booleans()),
            "extra_jokers": draw(st.integers(0, 8)),
            "extra_twos": draw(st.integers(0, 8)),
            "target": draw(st.integers(1, 200)),
        }
    options: dict[str, Any] = {"target": draw(st.integers(1, 150))}
    if draw(st.booleans()):
        options["pattern_values"] = draw(st.lists(st.integers(1, 100), min_size=7, max_size=7))
    if draw(st.booleans()):
        options["joker_value"] = draw(st.integers(-100, 0))
    return options


@st.composite
def games(draw: st.DrawFn, game_id: str) -> tuple[engine.GameConfig, list[str], str, int]:
    """A game of `game_id`: any seat count, bots of any level but the expert; abandoned after a few
    actions at times, and when it runs long (random bots may play Switch for ever)."""
    game = engine.get_game(game_id)
    players = draw(st.integers(game.min_players, game.max_players))
    options = options_of(game_id, draw)
    version = draw(st.integers(1, game.rules_version))
    config = engine.make_config(game_id, players, options, draw(SEEDS), rules_version=version)
    levels = draw(st.lists(st.sampled_from(BOT_LEVELS), min_size=players, max_size=players))
    abandon_after = draw(st.integers(0, 60)) if draw(st.integers(0, 3)) == 0 else LONG_GAME
    return config, levels, draw(SEEDS), abandon_after


def check_game(config: engine.GameConfig, levels: list[str], chooser: str, abandon_after: int) -> None:
    """Every part of every version of one game against its schema (each distinct value once)."""
    views = VIEW_SCHEMAS[config.game]
    checked: set[tuple[str, str]] = set()
    for snap in versions(config, play(config, levels, chooser, abandon_after)):
        for part, value in parts(snap):
            where = f"{config.game} version {snap.version}, {part}"
            if part == "phase":
                assert value in views.phases, f"{where}: {value!r} is not among {views.phases}"
                continue
            key = (part, json.dumps(value, sort_keys=True))
            if key in checked:
                continue
            checked.add(key)
            schema = schema_of(views, part)
            errors = VALIDATORS.errors(schema, value)
            assert not errors, f"{where} does not match {schema.__name__}: {errors[:5]}"
            assert dumped_unchanged(schema, value), f"{where}: a dump through {schema.__name__} changes it"


@pytest.mark.parametrize("game_id", sorted(VIEW_SCHEMAS))
def test_every_view_part_of_real_games_matches_its_schema(game_id: str) -> None:
    @PROPERTY_SETTINGS
    @given(games(game_id))
    def run(example: tuple[engine.GameConfig, list[str], str, int]) -> None:
        check_game(*example)

    run()


def test_every_game_of_the_catalog_declares_its_view_schemas() -> None:
    assert set(VIEW_SCHEMAS) == {game.id for game in engine.all_games()}
    names = [schema_of(views, part).__name__ for views in VIEW_SCHEMAS.values() for part in PARTS]
    assert len(set(names)) == len(names), f"two parts share a component name: {names}"


def test_every_view_object_is_closed_in_the_document() -> None:
    """`additionalProperties: false` on every component, so that the JSON Schema check fails on a
    field that the schema does not declare."""
    open_ones = [
        name for name, schema in VALIDATORS.components.items() if schema.get("additionalProperties") is not False
    ]
    assert not open_ones, f"components that allow undeclared fields: {open_ones}"
    assert {"GolfSlot", "RommeMeld", "SwitchTable", "Go5Set"} <= set(VALIDATORS.components)


@dataclasses.dataclass(frozen=True)
class Fixed:
    """One fixed game: bots of the `turns` levels by seat, turn and turn about; maybe abandoned."""

    players: int
    options: dict[str, Any]
    turns: tuple[str, ...] = ("greedy", "random")
    seed: str = "views"
    abandon_after: int | None = None
    start_card: str | None = None  # Switch: a first deck (C-5) that turns up this start card (S-2)

    def config(self, game_id: str) -> engine.GameConfig:
        decks = () if self.start_card is None else (self._starting_deck(),)
        return engine.make_config(game_id, self.players, self.options, self.seed, decks)

    def _starting_deck(self) -> tuple[str, ...]:
        options = switch.SWITCH.resolve_options(self.players, self.options)
        deck = list(switch.switch_deck(options))
        start, card = self.players * options["hand_size"], deck.index(str(self.start_card))
        deck[start], deck[card] = deck[card], deck[start]
        return tuple(deck)


FIXED_GAMES: dict[str, list[Fixed]] = {
    # The fewest and the most players, the options that change the table, an abandoned game, and
    # games that meet what a field's null stands for.
    "golf": [
        Fixed(2, {"layout": "3x3", "rounds": 2, "initial_flips": 2}),
        Fixed(12, {"layout": "3x3", "rounds": 1, "initial_flips": 0}),
        Fixed(4, {"layout": "2x3", "rounds": 2}, ("greedy",)),
        Fixed(3, {}, ("random",), abandon_after=5),
    ],
    "romme": [
        Fixed(2, {"target": 150}),
        Fixed(4, {"target": 100, "hand_aus_doubles": True}, ("greedy",)),
        Fixed(4, {"target": 150}, ("random",), seed="views-5"),  # nobody goes out: the stock runs out
        Fixed(3, {}, ("random",), abandon_after=10),
    ],
    "switch": [
        Fixed(4, {"target": 40}),
        Fixed(10, {"target": 30, "extra_jokers": 8}, start_card="JH"),  # the first player names the suit (S-3)
        Fixed(5, {}, ("random",), abandon_after=12),
    ],
    "go5": [
        Fixed(2, {"target": 40}),
        Fixed(4, {"target": 30}),
        Fixed(3, {}, ("random",), abandon_after=6),
    ],
}


@pytest.mark.parametrize("game_id", sorted(FIXED_GAMES))
def test_required_and_nullable_fields_and_phases_are_what_games_show(game_id: str) -> None:
    """A field that is always there is required, one that is not is optional and appears at times,
    and a field that may be null is null at times; every phase of `phases` occurs, and no other."""
    views = VIEW_SCHEMAS[game_id]
    use, phases = FieldUse(), set()
    for number, fixed in enumerate(FIXED_GAMES[game_id]):
        config = fixed.config(game_id)
        levels = [fixed.turns[seat % len(fixed.turns)] for seat in range(fixed.players)]
        for snap in versions(config, play(config, levels, f"chooser-{number}", fixed.abandon_after)):
            for part, value in parts(snap):
                if part == "phase":
                    phases.add(value)
                else:
                    use.record(schema_of(views, part)(), value)
    assert phases == set(views.phases)
    assert not use.misdeclared()
