"""The game interface, the registry, and the generic fold: seed + events -> state."""

from __future__ import annotations

import abc
import dataclasses
import functools
import importlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from domain.cards import canonical_deck, is_card
from domain.errors import InvalidInput, RuleViolation
from domain.events import Event, EventCatalog
from domain.options import MAX_EVENTS, Action, ActionSpec, EventLimits, OptionSpec, parse_action, resolve_options
from domain.scores import highest_totals, lowest_totals
from domain.shuffle import SeededStream, commitment, derived_key, reshuffle_label, round_label, shuffle


class GameState(Protocol):
    """What every game's state has, whatever else it holds: the round under way (0 before the first),
    every seat's total so far, its phase and, once ended, the winners (C-7)."""

    @property
    def round(self) -> int: ...

    @property
    def totals(self) -> tuple[int, ...]: ...

    @property
    def phase(self) -> str: ...

    @property
    def winners(self) -> tuple[int, ...]: ...


class RoundScores(Protocol):
    """What every game's round-scoring event has: each seat's points of the round."""

    @property
    def scores(self) -> tuple[int, ...]: ...


S = TypeVar("S", bound=GameState)
FINISHED = "finished"
"""The phase of every game once it has ended by its rules."""
CARD_CODES: tuple[str, ...] = canonical_deck(jokers=1)
"""C-1's codes in C-3 order: 52 cards, then the joker."""
T = TypeVar("T")
EVENT_LIMIT: Literal["event_limit"] = "event_limit"
"""`GameEnded.reason` of a game that ran out of events (C-9)."""
CLOSING_EVENTS = 2
"""The events a game's end appends: GameEnded (or GameAbandoned), then SeedRevealed. C-9 keeps room for them."""
ACTION_EVENTS_MAX = 2
"""The most events one action may make: its own, after a reshuffle of the stock that it needed (Golf's and
Switch's draw). C-9 keeps room for one more action and the closing events, so no game outgrows `max_events`."""


@functools.cache
def _fields_of(cls: type) -> tuple[tuple[str, ...], frozenset[str]]:
    assert not hasattr(cls, "__post_init__"), f"{cls.__name__} has a __post_init__ that replaced() would skip"
    names = tuple(field.name for field in dataclasses.fields(cls))
    return names, frozenset(names)


def replaced(obj: T, **changes: Any) -> T:
    """`dataclasses.replace` for a frozen dataclass without `__post_init__`, a few times faster: the
    fold applies one per event. Only the fields are copied; what an instance caches is its own."""
    cls: type = type(obj)
    names, known = _fields_of(cls)
    assert known.issuperset(changes), f"{cls.__name__} has no field(s) {sorted(set(changes) - known)}"
    new: T = object.__new__(cls)
    fields = vars(obj)
    if len(fields) == len(names):  # nothing cached on the instance
        vars(new).update(fields, **changes)
    else:
        vars(new).update({name: fields[name] for name in names}, **changes)
    return new


@dataclasses.dataclass(frozen=True)
class GameConfig:
    """Everything fixed at creation: the game, seat count, options, the secret seed and nonce (C-4)
    and the version of the game's rules it is played under.

    `nonce` is None for a game made before the nonce existed (record format 1): its commitment is
    the seed's own hash, and with rules version 1 its events state no rules version either (it
    predates versioned rules). The service draws a nonce for every new game.
    """

    game: str
    players: int
    options: Mapping[str, Any]
    seed: str
    decks: tuple[tuple[str, ...], ...] = ()
    rules_version: int = 1
    nonce: str | None = None

    @property
    def max_events(self) -> int | None:
        """The most events the game may have (C-9); None under a rules version without the limit."""
        limit = self.options.get(MAX_EVENTS)
        return None if limit is None else int(limit)

    @property
    def stacked(self) -> bool:
        """True when explicit deck orders replace the shuffle for the first rounds (C-5)."""
        return bool(self.decks)

    @property
    def commitment(self) -> str:
        """The public commitment to the seed and nonce (C-4)."""
        return commitment(self.seed, self.nonce)

    def private_stream(self, label: str) -> SeededStream:
        """A random stream of the game's own that no one can foresee (a bot's choices): keyed by
        bytes derived from the secret seed and nonce, never by public facts nor the seed itself."""
        return SeededStream(derived_key(self.seed, self.nonce, label), "private")

    def round_deck(self, round_no: int, canonical: Sequence[str]) -> tuple[str, ...]:
        """The deck of a round, top first: a stacked deck (C-5) or the C-4 shuffle."""
        if round_no <= len(self.decks):
            return self.decks[round_no - 1]
        return shuffle(canonical, self.seed, round_label(round_no))

    def reshuffle(self, round_no: int, k: int, pile_bottom_first: Sequence[str]) -> tuple[str, ...]:
        """The k-th reshuffle of a pile inside a round (C-4)."""
        return shuffle(pile_bottom_first, self.seed, reshuffle_label(round_no, k))


@dataclasses.dataclass(frozen=True, kw_only=True)
class GameCreated(Event):
    """First event of every game: public facts, the seed's commitment and the rules version (None,
    left out of the record, in games made before versioned rules: version 1)."""

    game: str
    players: int
    options: Mapping[str, Any]
    seed_commitment: str
    stacked: bool
    rules_version: int | None = None

    def data(self) -> dict[str, Any]:
        return _stated(super().data(), "rules_version")


@dataclasses.dataclass(frozen=True, kw_only=True)
class SeedRevealed(Event):
    """Last event of every game: the seed and the nonce (C-4), so anyone can check the commitment
    and re-deal every round (no nonce, left out of the record, in games made before it)."""

    seed: str
    nonce: str | None = None

    def data(self) -> dict[str, Any]:
        return _stated(super().data(), "nonce")


def ends_the_game(record: Mapping[str, Any]) -> bool:
    """Whether a recorded event is the seed's reveal, the one every game ends with."""
    return record.get("type") == SeedRevealed.type_name()


def _stated(data: dict[str, Any], optional: str) -> dict[str, Any]:
    """An event's data without an optional field that older records do not have."""
    if data[optional] is None:
        del data[optional]
    return data


@dataclasses.dataclass(frozen=True, kw_only=True)
class GameAbandoned(Event):
    """A system event that ends a game nobody plays any more, without a winner; `reason` says why.

    Any game may end this way (the service decides when: no action for a long time). The seed's
    reveal follows it as after any game's end.
    """

    reason: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class GameEnded(Event):
    """A game's end: the totals and the winners (C-7), by the game's end rule (`Game.end_rule`) or C-9.

    `reason` is `event_limit` when the game ran out of events (C-9), and left out of the record
    when the game's own rules ended it.
    """

    totals: tuple[int, ...]
    winners: tuple[int, ...]
    reason: Literal["event_limit"] | None = None

    def data(self) -> dict[str, Any]:
        return _stated(super().data(), "reason")


ENGINE_EVENTS: tuple[type[Event], ...] = (GameCreated, SeedRevealed, GameAbandoned)


class Game(abc.ABC, Generic[S]):
    """What every game module provides: pure functions over its own state type S."""

    id: ClassVar[str]
    name: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    options: ClassVar[tuple[OptionSpec, ...]]
    actions: ClassVar[tuple[ActionSpec, ...]]
    events: ClassVar[tuple[type[Event], ...]]
    players_rule: ClassVar[str]  # the rule id of the player range
    lowest_wins: ClassVar[bool] = True  # C-7: whether the lowest or the highest total wins
    round_scored: ClassVar[type[RoundScores]]
    """The event that scores a round (a hand): its `scores` are what each seat adds to its total."""
    end_rule: ClassVar[str]  # the rule id of the game's end
    rules_version: ClassVar[int] = 1
    """The version of the game's rules that new games are played under. A rules change that would
    play an old game differently bumps it, and the game module keeps the old behaviour for games
    whose `config.rules_version` is older: a game keeps the rules it started under."""
    event_limit_since: ClassVar[int]
    """The first rules version with C-9's `max_events`: games of older versions have no such option."""
    bots: ClassVar[str | None] = None
    """The module of the game's own bots, if it has any: `POLICIES` by level (`greedy`) and the expert's
    hooks (`sample_world`, `EXPERT_BUDGET`, see domain/bots/expert.py); the `random` level plays every game."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every game's options end with C-9's `max_events` (the default of the domain, no ceiling:
        `describe` shows the operator's), and every game's events hold GameEnded (C-9 ends any game)."""
        super().__init_subclass__(**kwargs)
        if "options" in vars(cls):
            cls.options = (*cls.options, EventLimits().option())
        if "events" in vars(cls) and GameEnded not in cls.events:
            cls.events = (*cls.events, GameEnded)

    def bounded(self, rules_version: int) -> bool:
        """True when games of this rules version have `max_events` (C-9)."""
        return rules_version >= self.event_limit_since

    def resolve_options(self, players: int, given: Mapping[str, Any]) -> dict[str, Any]:
        """Options with defaults filled in; games override to derive and cross-check."""
        return resolve_options(self.options, given)

    @abc.abstractmethod
    def canonical_deck(self, players: int, options: Mapping[str, Any]) -> tuple[str, ...]:
        """The game's deck in C-3 order for these options."""

    @abc.abstractmethod
    def initial_state(self, config: GameConfig) -> S:
        """The state before the first round is dealt."""

    @abc.abstractmethod
    def decide(self, state: S, seat: int, action: Action) -> list[Event]:
        """The events an action produces, or a RuleViolation naming its rule."""

    @abc.abstractmethod
    def automatic(self, state: S) -> Event | None:
        """The system step due now (deal, scoring, game end), if any."""

    @abc.abstractmethod
    def evolve(self, state: S, event: Event) -> S:
        """Apply a recorded event of the game's own; trusts it and only asserts invariants.

        The engine applies its own events and the game's end (`ended`)."""

    def ended(self, state: S, event: GameEnded) -> S:
        """The state once the game has ended by its rules: phase `finished`, the end's winners."""
        return replaced(state, phase=FINISHED, winners=event.winners)

    @abc.abstractmethod
    def to_act(self, state: S) -> tuple[int, ...]:
        """Seats that may act now."""

    @abc.abstractmethod
    def is_finished(self, state: S) -> bool:
        """True once the game has ended."""

    @abc.abstractmethod
    def legal_actions(self, state: S, seat: int) -> list[dict[str, Any]]:
        """Every concrete action `seat` may send now, as request bodies."""

    @abc.abstractmethod
    def public_view(self, state: S) -> dict[str, Any]:
        """round, phase, scores, table and result: what everybody may see."""

    @abc.abstractmethod
    def seat_view(self, state: S, seat: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
        """The `you` part: what only this seat may see (`legal`: its actions now, as the engine lists them)."""

    @abc.abstractmethod
    def full_view(self, state: S) -> dict[str, Any]:
        """Everything, hidden cards and stock order included (finished games only)."""

    def out_of_turn(self, state: S) -> tuple[int, ...]:
        """Seats that may act now out of turn, whose chance ends with the turn player's next action
        (Go5's callers, V-13); none by default."""
        return ()

    def standing(self, state: S) -> tuple[int, tuple[int, ...]]:
        """The round under way and every seat's total so far (the expert bot's yardstick)."""
        return state.round, tuple(state.totals)

    def round_points(self, event: Event) -> tuple[int, ...] | None:
        """Each seat's points of a round when `event` scores one (better is lower when `lowest_wins`), else None."""
        if not isinstance(event, self.round_scored):
            return None
        return tuple(event.scores)

    def is_card(self, code: object) -> bool:
        """True for a card code of this game (C-1; Go5 overrides with its own codes)."""
        return is_card(code)

    def card_codes(self) -> tuple[str, ...]:
        """Every card code of this game once, in C-3 order (Go5 overrides with its own codes)."""
        return CARD_CODES

    def parse_action(self, raw: Mapping[str, Any]) -> Action:
        """Check an action's shape against this game's action types."""
        return parse_action(self.actions, raw, self.is_card)

    def describe(self, limits: EventLimits | None = None) -> dict[str, Any]:
        """The catalog entry of this game, `max_events` with the operator's default and ceiling."""
        shown = limits or EventLimits()
        options = [shown.option() if spec.name == MAX_EVENTS else spec for spec in self.options]
        return {
            "id": self.id,
            "name": self.name,
            "players": {"min": self.min_players, "max": self.max_players},
            "options": [spec.describe() for spec in options],
            "actions": [spec.type for spec in self.actions],
        }

    @property
    def catalog(self) -> EventCatalog:
        """All event types of this game, the engine's included."""
        return EventCatalog(ENGINE_EVENTS + self.events)


_REGISTRY: dict[str, Game[Any]] = {}
GAME_MODULES = ("domain.golf", "domain.romme", "domain.switch", "domain.go5")
"""The modules of the games that come with the domain, loaded with the registry; each registers itself."""


def _registry() -> dict[str, Game[Any]]:
    """The registry, with every built-in game module imported (each registers itself on import)."""
    _load_built_in_games()
    return _REGISTRY


@functools.cache
def _load_built_in_games() -> None:
    """Import GAME_MODULES, once a process: the registry is asked for on every request."""
    for module in GAME_MODULES:
        importlib.import_module(module)


def register(game: Game[Any]) -> Game[Any]:
    """Make a game known by its id: the one place a game is named (its module calls it)."""
    _REGISTRY[game.id] = game
    return game


def unregister(game_id: str) -> None:
    """Forget a registered game (one a test brought for itself)."""
    _REGISTRY.pop(game_id, None)


def registered(game_id: str) -> Game[Any] | None:
    """The registered game with this id, or None."""
    return _registry().get(game_id)


def get_game(game_id: str) -> Game[Any]:
    """The registered game with this id; InvalidInput when there is none."""
    game = registered(game_id)
    if game is None:
        known = ", ".join(sorted(_registry()))
        raise InvalidInput("unknown_game", f"no game {game_id!r}; known: {known}")
    return game


def all_games() -> list[Game[Any]]:
    """Every registered game, by id."""
    registry = _registry()
    return [registry[key] for key in sorted(registry)]


@dataclasses.dataclass(frozen=True)
class Snapshot(Generic[S]):
    """A game at one version: the config, the game's own state and engine bookkeeping."""

    game: Game[S]
    config: GameConfig
    state: S
    version: int = 0
    seed_revealed: bool = False
    abandoned: str | None = None  # why the game was abandoned (GameAbandoned), if it was
    out_of_events: bool = False  # True once the game has ended for its event limit (C-9)

    @property
    def finished(self) -> bool:
        """True once the game has ended, by its rules, abandoned or out of events (its seed may still be due)."""
        return self.abandoned is not None or self.out_of_events or self.game.is_finished(self.state)

    @property
    def out_of_room(self) -> bool:
        """True when the game has no room for one more action besides its closing events (C-9)."""
        limit = self.config.max_events
        return limit is not None and limit - self.version < ACTION_EVENTS_MAX + CLOSING_EVENTS

    def to_act(self) -> tuple[int, ...]:
        """Seats that may act now."""
        return () if self.finished else self.game.to_act(self.state)

    def out_of_turn(self) -> tuple[int, ...]:
        """Seats that may act now out of turn, until the turn player acts."""
        return () if self.finished else self.game.out_of_turn(self.state)


def make_config(
    game_id: str,
    players: int,
    options: Mapping[str, Any],
    seed: str,
    decks: Sequence[Sequence[str]] = (),
    *,
    nonce: str | None = None,
    rules_version: int | None = None,
    limits: EventLimits | None = None,
) -> GameConfig:
    """Validate a game's settings (players, options, stacked decks, rules version) into a config.

    `rules_version` None means the game's current rules (a new game); an older game names its own.
    `limits`: the operator's default and ceiling of `max_events` for a new game (C-9); None: the
    domain's default and no ceiling (a game already made, a simulation).
    """
    game = get_game(game_id)
    version = game.rules_version if rules_version is None else rules_version
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= game.rules_version:
        raise InvalidInput(
            "unknown_rules_version", f"{game.name} has rules versions 1 to {game.rules_version}, not {version!r}"
        )
    if not game.min_players <= players <= game.max_players:
        raise RuleViolation(
            "bad_player_count",
            f"{game.name} takes {game.min_players} to {game.max_players} players, not {players}",
            game.players_rule,
        )
    resolved = _resolved_options(game, version, players, options, limits or EventLimits())
    canonical = sorted(game.canonical_deck(players, resolved))
    for number, deck in enumerate(decks, start=1):
        unknown = sorted({str(card) for card in deck if not game.is_card(card)})
        if unknown:
            raise InvalidInput(
                "unknown_card", f"stacked deck {number} holds unknown card code(s): {', '.join(unknown[:5])}"
            )
        if sorted(deck) != canonical:
            raise InvalidInput(
                "invalid_deck",
                f"stacked deck {number} is not a permutation of the {len(canonical)}-card deck of this game (C-5)",
            )
    return GameConfig(game_id, players, resolved, seed, tuple(tuple(d) for d in decks), version, nonce)


def _resolved_options(
    game: Game[Any], version: int, players: int, given: Mapping[str, Any], limits: EventLimits
) -> dict[str, Any]:
    """The game's options with defaults filled in; `max_events` (C-9) only under a rules version that has it."""
    options = {key: value for key, value in given.items() if not (key == MAX_EVENTS and value is None)}
    if not game.bounded(version):
        if MAX_EVENTS in options:
            raise InvalidInput(
                "invalid_option", f"option '{MAX_EVENTS}' came with rules version {game.event_limit_since} (C-9)"
            )
        resolved = game.resolve_options(players, options)
        del resolved[MAX_EVENTS]
        return resolved
    options[MAX_EVENTS] = limits.option().check(options.get(MAX_EVENTS, limits.default))
    return game.resolve_options(players, options)


def advance(snap: Snapshot[S], event: Event) -> Snapshot[S]:
    """Apply one recorded event at version + 1."""
    if isinstance(event, GameCreated):
        assert snap.version == 0, "GameCreated must be the first event"
        assert event.seed_commitment == snap.config.commitment, "seed commitment mismatch"
        assert (event.rules_version or 1) == snap.config.rules_version, "rules version mismatch"
        return replaced(snap, version=1)
    if isinstance(event, SeedRevealed):
        assert snap.finished and event.seed == snap.config.seed, "seed revealed before the end or wrongly"
        assert event.nonce == snap.config.nonce, "nonce revealed wrongly"
        return replaced(snap, version=snap.version + 1, seed_revealed=True)
    if isinstance(event, GameAbandoned):
        assert not snap.finished, "a game that has ended cannot be abandoned"
        return replaced(snap, version=snap.version + 1, abandoned=event.reason)
    if isinstance(event, GameEnded):
        assert not snap.finished, "a game that has ended cannot end again"
        if event.reason == EVENT_LIMIT:
            assert snap.out_of_room, "an event-limit end before the game is out of room (C-9)"
            return replaced(snap, version=snap.version + 1, out_of_events=True)
        return replaced(snap, state=snap.game.ended(snap.state, event), version=snap.version + 1)
    state = snap.game.evolve(snap.state, event)
    return replaced(snap, state=state, version=snap.version + 1)


def _next_system_event(snap: Snapshot[S]) -> Event | None:
    if snap.finished:
        return None if snap.seed_revealed else SeedRevealed(seed=snap.config.seed, nonce=snap.config.nonce)
    automatic = snap.game.automatic(snap.state)
    if snap.out_of_room and not isinstance(automatic, GameEnded):  # the game's own end fits in the room kept
        return event_limit_end(snap)
    return automatic


def event_limit_end(snap: Snapshot[Any]) -> GameEnded:
    """C-9: the end of a game out of events: the hand in play unscored, the totals of the hands scored
    so far, and as winners every seat level at the best of them (C-7; no game's own tie-break)."""
    totals = snap.game.standing(snap.state)[1]
    winners = lowest_totals(totals) if snap.game.lowest_wins else highest_totals(totals)
    return GameEnded(totals=totals, winners=winners, reason=EVENT_LIMIT)


def settle(snap: Snapshot[S]) -> tuple[Snapshot[S], list[Event]]:
    """Take every due system step (deal, scoring, end, seed reveal)."""
    events: list[Event] = []
    while (event := _next_system_event(snap)) is not None:
        snap = advance(snap, event)
        events.append(event)
    return snap, events


def start(config: GameConfig) -> tuple[Snapshot[Any], list[Event]]:
    """A new game: GameCreated, then the first deal and whatever else is due."""
    game = get_game(config.game)
    snap: Snapshot[Any] = Snapshot(game, config, game.initial_state(config))
    created = GameCreated(
        game=config.game,
        players=config.players,
        options=dict(config.options),
        seed_commitment=config.commitment,
        stacked=config.stacked,
        rules_version=None if _predates_versions(config) else config.rules_version,
    )
    snap = advance(snap, created)
    snap, system_events = settle(snap)
    return snap, [created, *system_events]


def _predates_versions(config: GameConfig) -> bool:
    """A game made before versioned rules and the nonce came (record format 1): version 1, no nonce.
    Its first event states no rules version; every game made since states its version."""
    return config.nonce is None and config.rules_version == 1


def act(snap: Snapshot[S], seat: int, raw_action: Mapping[str, Any]) -> tuple[Snapshot[S], list[Event]]:
    """Decide one action of `seat` and apply its events and the system steps they trigger.

    An action makes at most ACTION_EVENTS_MAX events, so a game that had room for one more action besides
    its closing events (C-9) still has room for them after it; `settle` ends it when that is all.
    """
    if snap.finished:
        raise RuleViolation("game_finished", "the game has ended", snap.game.end_rule)
    if not 0 <= seat < snap.config.players:
        raise InvalidInput("invalid_seat", f"seats are 0 to {snap.config.players - 1}, not {seat} (C-2)")
    action = snap.game.parse_action(raw_action)
    events = snap.game.decide(snap.state, seat, action)
    assert len(events) <= ACTION_EVENTS_MAX, f"{snap.game.id} made {len(events)} events of one action (C-9)"
    for event in events:
        snap = advance(snap, event)
    snap, system_events = settle(snap)
    return snap, [*events, *system_events]


def abandon(snap: Snapshot[S], reason: str) -> tuple[Snapshot[S], list[Event]]:
    """End a game that is still running as abandoned: GameAbandoned, then the seed's reveal."""
    if snap.finished:
        raise RuleViolation("game_finished", "the game has ended", snap.game.end_rule)
    event = GameAbandoned(reason=reason)
    snap, system_events = settle(advance(snap, event))
    return snap, [event, *system_events]


def fold(config: GameConfig, events: Iterable[Event]) -> Snapshot[Any]:
    """Rebuild a game from its config and recorded events, the same way every time."""
    game = get_game(config.game)
    snap: Snapshot[Any] = Snapshot(game, config, game.initial_state(config))
    for event in events:
        snap = advance(snap, event)
    return snap


def _frame(snap: Snapshot[Any], body: dict[str, Any]) -> dict[str, Any]:
    framed = {
        "game": snap.config.game,
        "rules_version": snap.config.rules_version,
        "options": dict(snap.config.options),
        "status": "finished" if snap.finished else "active",
        "version": snap.version,
        "to_act": list(snap.to_act()),
        **body,
    }
    if snap.abandoned is not None:
        framed["result"] = abandoned_result(snap)
    elif snap.out_of_events:
        framed["result"] = event_limit_result(snap)
    return framed


def abandoned_result(snap: Snapshot[Any]) -> dict[str, Any]:
    """The result of an abandoned game: the totals as they stood, no winner, and why."""
    totals = snap.game.standing(snap.state)[1]
    return {"totals": list(totals), "winners": [], "abandoned": True, "reason": snap.abandoned}


def event_limit_result(snap: Snapshot[Any]) -> dict[str, Any]:
    """The result of a game that ran out of events (C-9): as its end says, and why."""
    end = event_limit_end(snap)
    return {"totals": list(end.totals), "winners": list(end.winners), "reason": EVENT_LIMIT}


def view(snap: Snapshot[Any], seat: int | None) -> dict[str, Any]:
    """What a seat (or, with None, a spectator) may see: C-6; a seat's `you.legal` lists its concrete actions."""
    if seat is not None and not 0 <= seat < snap.config.players:
        raise InvalidInput("invalid_seat", f"seats are 0 to {snap.config.players - 1}, not {seat} (C-2)")
    out = _frame(snap, snap.game.public_view(snap.state))
    if seat is not None:
        legal = legal_actions(snap, seat)
        out["you"] = {"seat": seat, **snap.game.seat_view(snap.state, seat, legal), "legal": legal}
        out["actions"] = sorted({a["type"] for a in legal})
    else:
        out["actions"] = []
    return out


def full_view(snap: Snapshot[Any]) -> dict[str, Any]:
    """Everything, every hand and the stock in order: only for a finished game's replay."""
    return {**_frame(snap, snap.game.full_view(snap.state)), "actions": []}


def legal_actions(snap: Snapshot[Any], seat: int) -> list[dict[str, Any]]:
    """Every concrete action `seat` may send now."""
    return [] if snap.finished else snap.game.legal_actions(snap.state, seat)
