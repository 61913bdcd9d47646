"""Mutation fuzzing of actions: random positions of every game, and hostile variants of their legal actions.

A position comes from random legal play (a seeded `random.Random`, so every case can be rebuilt):
random seed, options and player count, then random legal actions up to a random step. A case takes
a legal action of that position (or of another game) and mutates it: fields moved between action
types and games, foreign card codes in every card field, out-of-range, negative, boolean and huge
ids and seats, fields dropped and added, and `then` / `meld` objects nested wrongly.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from domain import engine
from domain.errors import DomainError, InvalidInput, RuleViolation
from domain.events import Event

GAMES = ("golf", "romme", "switch", "go5")
SEED_VARIABLE = "ACTION_FUZZ_SEED"
CASES_VARIABLE = "ACTION_FUZZ_CASES"
DEFAULT_SEED = 20261201
MIN_CASES = 10_000
RULE_ID = re.compile(r"^[A-Z]+-\d+$")
CODE = re.compile(r"^[a-z][a-z0-9_]*$")

# Options that keep random games short enough to reach their late positions.
OPTION_CHOICES: dict[str, list[dict[str, Any]]] = {
    "golf": [{"rounds": 1}, {"rounds": 2, "layout": "3x3"}, {"rounds": 1, "initial_flips": 0}, {}],
    "romme": [{"target": 60}, {"target": 30, "hand_aus_doubles": True}, {"target": 100, "strict_1000": True}],
    "switch": [{"target": 40}, {"target": 25, "match_rank": True}, {"target": 40, "extra_jokers": 2, "extra_twos": 2}],
    "go5": [{"target": 30}, {"target": 20, "joker_value": 0}, {"target": 40, "pattern_values": [5] * 7}],
}
MOST_PLAYERS = 6
"""Random games have from the game's fewest players up to this many (or the game's most)."""

FOREIGN_CARDS: tuple[Any, ...] = (
    "stop",
    "joker",
    "JK",
    "jk",
    "Joker",
    "AS",
    "as",
    "10H",
    "TH",
    "1H",
    "QS",
    "KC",
    "ZZ",
    "",
    " ",
    "A",
    "S",
    "1-dots-red",
    "1-DOTS-RED",
    "7-rings-yellow",
    "8-dots-red",
    "0-dots-red",
    "1-dots-blue",
    "1-waves",
    "stop ",
    "\u0000",
    "x" * 300,
    0,
    1,
    -1,
    1.5,
    True,
    None,
    [],
    ["AS"],
    ["stop"],
    {},
    {"card": "AS"},
)
HOSTILE_INTS: tuple[Any, ...] = (
    0,
    1,
    2,
    3,
    4,
    5,
    8,
    9,
    12,
    -1,
    -2,
    -9,
    2**31,
    -(2**31),
    2**63,
    10**30,
    -(10**30),
    True,
    False,
    1.0,
    1.5,
    float("nan"),
    float("inf"),
    "1",
    "0",
    "",
    None,
    [],
    [0],
    [1, 2],
    [-1, 10**30],
    [True],
    {},
    {"set": 1},
)
KEY_CARDS: tuple[Any, ...] = ("stop", "joker", "JK", "jk", "AS", "1-dots-red", "", None, 0, True, [], {})
"""What every string field of a legal action is replaced by, one at a time."""
KEY_INTS: tuple[Any, ...] = (-1, 0, 1, 2, 9, 10**30, -(10**30), True, None, "1", 1.5, [], {"set": 1})
"""What every other field of a legal action is replaced by, one at a time."""
HOSTILE_TEXT: tuple[Any, ...] = (
    "stock",
    "discard",
    "set",
    "run",
    "low",
    "high",
    "number",
    "pattern",
    "colour",
    "S",
    "H",
    "D",
    "C",
    "JK",
    "s",
    "",
    "STOCK",
    "spades",
    None,
    0,
    True,
    [],
    ["set"],
    {},
)
JUNK_NAMES: tuple[str, ...] = (
    "card",
    "cards",
    "set",
    "meld",
    "then",
    "take",
    "give",
    "from_seat",
    "position",
    "positions",
    "flip",
    "suit",
    "by",
    "kind",
    "end",
    "from",
    "seat",
    "actor",
    "expected_version",
    "__class__",
    "",
    "lay_off",
)
THEN_FORMS: tuple[Any, ...] = (
    {"lay_off": {"set": 0}},
    {"lay_off": {"set": -1}},
    {"lay_off": {"set": 10**30}},
    {"lay_off": {"set": True}},
    {"lay_off": {"set": None}},
    {"lay_off": {"set": "1"}},
    {"lay_off": {"set": 1, "card": "joker"}},
    {"lay_off": {}},
    {"lay_off": None},
    {"lay_off": []},
    {"lay_off": {"set": {"set": 1}}},
    {"meld": {"cards": ["stop", "stop", "stop"]}},
    {"meld": {"cards": ["joker", "joker", "joker"], "by": "number"}},
    {"meld": {"cards": []}},
    {"meld": {"cards": None}},
    {"meld": {"cards": "1-dots-red"}},
    {"meld": {"cards": [1, 2, 3]}},
    {"meld": {"cards": [None]}},
    {"meld": {"cards": [["1-dots-red"]]}},
    {"meld": {"cards": [{}]}},
    {"meld": {"cards": ["AS", "AH", "AD"]}},
    {"meld": {"cards": ["1-dots-red"] * 3, "by": "suit"}},
    {"meld": {"cards": ["1-dots-red"] * 3, "by": None}},
    {"meld": {"cards": ["1-dots-red"] * 3, "by": 1}},
    {"meld": {"kind": "set", "cards": ["AS", "AH", "AD"]}},
    {"meld": {}},
    {"meld": None},
    {"meld": {"meld": {"cards": ["1-dots-red"]}}},
    {"meld": {"cards": ["1-dots-red"]}, "lay_off": {"set": 1}},
    {"kind": "set", "cards": ["AS", "AH", "AD"]},
    {"kind": "run", "cards": ["AS", "2S", "3S", "JK"]},
    {"kind": "run", "cards": []},
    {"kind": "run", "cards": ["JK"] * 14},
    {"kind": "set", "cards": ["AS", "AH", "AD"], "end": "low"},
    {"kind": None, "cards": None},
    {"kind": ["set"], "cards": ["AS"]},
    {"cards": ["AS", "AH", "AD"]},
    {"then": {"lay_off": {"set": 1}}},
    {},
    {"": None},
    {"a": {"b": {"c": {"d": {"e": {}}}}}},
)


def fuzz_settings(environ: Mapping[str, str]) -> tuple[int, int]:
    """The run's seed and cases per game: `ACTION_FUZZ_SEED` and `ACTION_FUZZ_CASES` (at least 10,000)."""
    seed = int(environ.get(SEED_VARIABLE, DEFAULT_SEED))
    return seed, max(MIN_CASES, int(environ.get(CASES_VARIABLE, MIN_CASES)))


def all_foreign_codes() -> list[Any]:
    """Hostile card codes plus every real code of every game (each one foreign to some game)."""
    codes = list(FOREIGN_CARDS)
    for game_id in GAMES:
        codes += deck_of(game_id)[:12]
    return codes


def deck_of(game_id: str) -> list[str]:
    """The distinct card codes of a game's default deck, in C-3 order."""
    game = engine.get_game(game_id)
    return sorted(set(game.canonical_deck(game.min_players, game.resolve_options(game.min_players, {}))))


@dataclasses.dataclass(frozen=True)
class Position:
    """A snapshot of a game in progress (or ended), with how it was reached."""

    snap: engine.Snapshot[Any]
    origin: str

    @property
    def players(self) -> int:
        return self.snap.config.players


def positions(game_id: str, rng: random.Random, games: int, per_game: int, max_steps: int) -> list[Position]:
    """`per_game` positions of each of `games` random games: random seed, options and player count.

    Each game is played to its end (or `max_steps` actions) by random legal actions of random seats
    that are to act. Of twice as many random steps, half the positions are the richest (most kinds
    of legal action), the rest the others in random order; the first game also gives its start and
    its last position (usually its end)."""
    out: list[Position] = []
    game = engine.get_game(game_id)
    low, high = game.min_players, min(game.max_players, MOST_PLAYERS)
    for number in range(games):
        seed = f"fuzz-{game_id}-{number}-{rng.randrange(10**6)}"
        players = rng.randint(low, high)
        options = rng.choice(OPTION_CHOICES[game_id])
        snap, _ = engine.start(engine.make_config(game_id, players, options, seed))
        played = [snap]
        while not snap.finished and len(played) <= max_steps:
            seat = rng.choice(snap.to_act())
            snap, _ = engine.act(snap, seat, rng.choice(engine.legal_actions(snap, seat)))
            played.append(snap)
        candidates = rng.sample(range(len(played) - 1), min(2 * per_game, len(played) - 1))
        richest = sorted(candidates, key=lambda step: -_richness(played[step]))[: per_game // 2]
        steps = richest + [step for step in candidates if step not in richest][: per_game - len(richest)]
        if number == 0:
            steps[-2:] = [0, len(played) - 1]
        origin = f"{game_id} players={players} options={options} seed={seed!r}"
        out += [Position(played[step], f"{origin} step={step}") for step in sorted(steps)]
    return out


def _richness(snap: engine.Snapshot[Any]) -> int:
    """How many kinds of action the seats to act have."""
    return len({a["type"] for seat in snap.to_act() for a in engine.legal_actions(snap, seat)})


class Mutator:
    """Hostile variants of legal actions; `vocabulary` holds legal actions of every game."""

    def __init__(self, rng: random.Random, vocabulary: dict[str, list[dict[str, Any]]]) -> None:
        self.rng = rng
        self.vocabulary = vocabulary
        self.codes = all_foreign_codes()
        self.decks = {game_id: deck_of(game_id) for game_id in GAMES}
        self.types = sorted({a["type"] for actions in vocabulary.values() for a in actions})
        self.operators: list[Callable[[dict[str, Any], str], None]] = [
            *[self.plausible] * 5,
            *[self.foreign_card] * 3,
            *[self.hostile_value] * 2,
            self.graft,
            self.retype,
            self.drop,
            self.add,
            self.nest,
            self.splice,
        ]

    def base(self, game_id: str, legal: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """A legal action of the position, or now and then one of any game."""
        if legal and self.rng.random() < 0.85:
            return copy.deepcopy(self.rng.choice(list(legal)))
        return copy.deepcopy(self.rng.choice(self.vocabulary[self.rng.choice(GAMES)]))

    def cases(self, game_id: str, position: Position, count: int) -> Iterator[tuple[int, dict[str, Any]]]:
        """`count` (seat, action) cases at `position`: first, up to a third of them, single-field
        substitutions of a key hostile value into legal actions; then random mutations."""
        legal = {seat: engine.legal_actions(position.snap, seat) for seat in range(position.players)}
        single = [
            (seat, action, path, value)
            for seat, actions in legal.items()
            for action in actions
            for path in self._slots(action)
            for value in (KEY_CARDS if isinstance(self._get(action, path), str) else KEY_INTS)
        ]
        chosen = self.rng.sample(single, min(len(single), count // 3))
        for seat, action, path, value in chosen:
            yield seat, self._substituted(action, path, value)
        for _ in range(count - len(chosen)):
            seat = self.seat(position)
            yield seat, self.mutate(game_id, self.base(game_id, legal.get(seat, [])))

    def _substituted(self, action: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
        changed = copy.deepcopy(action)
        self._set(changed, path, copy.deepcopy(value))
        return changed

    def mutate(self, game_id: str, action: dict[str, Any]) -> dict[str, Any]:
        """One to three mutations of `action` (changed in place and returned)."""
        for _ in range(self.rng.choice((1, 1, 1, 2, 3))):
            self.rng.choice(self.operators)(action, game_id)
        return action

    # ---- where to mutate

    def _slots(self, value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        """Every path to a value inside an action (dict keys and list indexes), `type` left out."""
        if isinstance(value, dict):
            for key, item in value.items():
                if path or key != "type":
                    yield (*path, key)
                    yield from self._slots(item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield (*path, index)
                yield from self._slots(item, (*path, index))

    def _set(self, action: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
        holder: Any = action
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = value

    def _pick(self, action: dict[str, Any], want: Callable[[Any], bool] | None = None) -> tuple[Any, ...] | None:
        slots = [p for p in self._slots(action) if want is None or want(self._get(action, p))]
        return self.rng.choice(slots) if slots else None

    def _get(self, action: dict[str, Any], path: tuple[Any, ...]) -> Any:
        value: Any = action
        for key in path:
            value = value[key]
        return value

    def _any(self, pool: Sequence[Any]) -> Any:
        """A copy of one value of `pool` (the pools are shared: never mutate them)."""
        return copy.deepcopy(self.rng.choice(pool))

    # ---- the operators

    def foreign_card(self, action: dict[str, Any], game_id: str) -> None:
        """A foreign, mis-cased or non-string code in a card field (or anywhere a string is)."""
        path = self._pick(action, lambda v: isinstance(v, str))
        if path is None:
            action[self.rng.choice(("card", "cards", "take", "give"))] = self._any(self.codes)
        else:
            self._set(action, path, self._any(self.codes))

    def plausible(self, action: dict[str, Any], game_id: str) -> None:
        """A well-formed value the rules must judge: another card of the game, a small id, a list
        with an item repeated or left out."""
        path = self._pick(action)
        if path is None:
            return
        current = self._get(action, path)
        if isinstance(current, str):
            self._set(action, path, self.rng.choice(self.decks[game_id]))
        elif isinstance(current, list) and current and self.rng.random() < 0.5:
            current.insert(self.rng.randrange(len(current) + 1), copy.deepcopy(self.rng.choice(current)))
        elif isinstance(current, list) and current:
            current.pop(self.rng.randrange(len(current)))
        elif isinstance(current, int) and not isinstance(current, bool):
            self._set(action, path, self.rng.randrange(-1, 13))

    def hostile_value(self, action: dict[str, Any], game_id: str) -> None:
        """An out-of-range, negative, boolean, huge or wrongly typed value in some field."""
        path = self._pick(action)
        if path is None:
            action[self.rng.choice(JUNK_NAMES)] = self._any(HOSTILE_INTS)
            return
        current = self._get(action, path)
        pool = HOSTILE_TEXT if isinstance(current, str) else HOSTILE_INTS
        if isinstance(current, int) and not isinstance(current, bool) and self.rng.random() < 0.3:
            self._set(action, path, current + self.rng.choice((-1, 1, 7, -7, 50)))
        else:
            self._set(action, path, self._any(pool + FOREIGN_CARDS))

    def graft(self, action: dict[str, Any], game_id: str) -> None:
        """A field of another action type (of this game or another) added or put over one of ours."""
        donor_game = game_id if self.rng.random() < 0.6 else self.rng.choice(GAMES)
        donor = self.rng.choice(self.vocabulary[donor_game])
        fields = [k for k in donor if k != "type"]
        if fields:
            name = self.rng.choice(fields)
            action[name] = copy.deepcopy(donor[name])

    def retype(self, action: dict[str, Any], game_id: str) -> None:
        """Another action type (of any game, or none) with the fields kept."""
        roll = self.rng.random()
        if roll < 0.5:
            action["type"] = self.rng.choice([spec.type for spec in engine.get_game(game_id).actions])
        elif roll < 0.8:
            action["type"] = self.rng.choice(self.types)
        elif roll < 0.9:
            action.pop("type", None)
        else:
            action["type"] = self._any((*HOSTILE_TEXT, "Draw", "draw ", "go5 ", "lay-off"))

    def drop(self, action: dict[str, Any], game_id: str) -> None:
        """A field (or an item of a nested object) left out."""
        path = self._pick(action, None)
        if path is None:
            action.pop("type", None)
            return
        holder = self._get(action, path[:-1]) if len(path) > 1 else action
        if isinstance(holder, dict):
            holder.pop(path[-1], None)
        else:
            del holder[path[-1]]

    def add(self, action: dict[str, Any], game_id: str) -> None:
        """A field no action of this type takes, or a field at the wrong depth."""
        name = self.rng.choice(JUNK_NAMES)
        value = self._any(HOSTILE_INTS + FOREIGN_CARDS + THEN_FORMS)
        nested = self._pick(action, lambda v: isinstance(v, dict))
        if nested is not None and self.rng.random() < 0.5:
            self._get(action, nested)[name] = value
        else:
            action[name] = value

    def nest(self, action: dict[str, Any], game_id: str) -> None:
        """`then` / `meld` objects nested wrongly, or put where a flat value belongs."""
        path = self._pick(action)
        form = self._any(THEN_FORMS)
        if path is None or self.rng.random() < 0.3:
            action[self.rng.choice(("then", "meld", "cards", "card", "set"))] = form
        else:
            self._set(action, path, form)

    def splice(self, action: dict[str, Any], game_id: str) -> None:
        """Fields of a second legal action (any game) merged in, its type or ours kept."""
        other = copy.deepcopy(self.rng.choice(self.vocabulary[self.rng.choice(GAMES)]))
        keep = action.get("type")
        action.update(other)
        if self.rng.random() < 0.5 and keep is not None:
            action["type"] = keep

    # ---- seats

    def seat(self, position: Position) -> int:
        """Mostly a seat that may act; sometimes another seat, or one that does not exist."""
        to_act = position.snap.to_act()
        roll = self.rng.random()
        if to_act and roll < 0.75:
            return self.rng.choice(to_act)
        if roll < 0.93:
            return self.rng.randrange(position.players)
        return self.rng.choice((-1, -(10**9), position.players, position.players + 1, 10**30))


def vocabulary(all_positions: dict[str, list[Position]]) -> dict[str, list[dict[str, Any]]]:
    """Every distinct legal action (any seat) seen at the positions of each game."""
    out: dict[str, list[dict[str, Any]]] = {}
    for game_id, found in all_positions.items():
        seen: dict[str, dict[str, Any]] = {}
        for position in found:
            for seat in range(position.players):
                for action in engine.legal_actions(position.snap, seat):
                    seen.setdefault(repr(sorted(action.items())), action)
        out[game_id] = [seen[key] for key in sorted(seen)]
    return out


def check_replay(snap: engine.Snapshot[Any], seat: int, events: Sequence[Event]) -> str | None:
    """Why an accepted action would fail an audit (None when it would not).

    The verifier re-decides each action from its event's `to_action()` (domain/verify.py): that
    must give the same events, JSON for JSON (so `true` never stands in for `1`)."""
    own = [event for event in events if event.actor == seat]
    if len(own) != 1:
        return f"{len(own)} events of seat {seat} for one action: {[e.type_name() for e in own]}"
    action = own[0].to_action()
    if action is None:
        return f"{own[0].type_name()} names no action"
    try:
        _, again = engine.act(snap, seat, action)
    except DomainError as error:
        return f"its event's action {action} is refused: {error.code} {error.detail}"
    first, second = (
        json.dumps([(e.type_name(), e.actor, e.data()) for e in x], sort_keys=True) for x in (events, again)
    )
    return None if first == second else f"its event's action {action} gives other events: {second} not {first}"


def check_refusal(error: DomainError) -> str | None:
    """Why a refusal is not of the promised shape (None when it is)."""
    if not CODE.match(error.code) or not error.detail.strip():
        return f"refusal without a code or detail: {error.code!r} {error.detail!r}"
    if isinstance(error, RuleViolation):
        if error.rule is None or not RULE_ID.match(error.rule):
            return f"rule violation {error.code!r} without a rule id: {error.rule!r}"
        return None
    if isinstance(error, InvalidInput):
        return None
    return f"a DomainError that is neither a RuleViolation nor an InvalidInput: {type(error).__name__}"


# ---------------------------------------------------------------- the Go5 swap that gave a 500

# Go5, seed `repro-1`, two people: seat 1 melds a zigzag set in the first turn; then seat 0 draws.
REPRO_SEED = "repro-1"
REPRO_OPENING: list[tuple[int, dict[str, Any]]] = [
    (1, {"type": "draw", "from": "stock"}),
    (1, {"type": "meld", "cards": ["2-zigzag-violet", "3-zigzag-black", "4-zigzag-red"], "by": "pattern"}),
    (1, {"type": "discard", "card": "2-waves-green"}),
    (0, {"type": "draw", "from": "stock"}),
]
STOP_SWAPS: list[dict[str, Any]] = [
    {"type": "swap", "from_seat": 1, "set": 1, "take": "3-zigzag-black", "give": "stop", "then": then}
    for then in (
        {"lay_off": {"set": 0}},
        {"lay_off": {"set": 1}},
        {"meld": {"cards": ["3-zigzag-black", "3-waves-blue", "3-checks-violet"]}},
    )
]


def repro_position() -> engine.Snapshot[Any]:
    """Go5 `repro-1`: seat 0 in its play phase, seat 1 owns set 1, no stop card lies before seat 0."""
    snap, _ = engine.start(engine.make_config("go5", 2, {}, REPRO_SEED))
    for seat, action in REPRO_OPENING:
        snap, _ = engine.act(snap, seat, action)
    return snap
