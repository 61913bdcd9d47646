"""Go5 (`go5`): sets by number, pattern or colour; the first five-card set ends the round (V-1 ... V-16).

Choices where rules/go5.md is silent (each also in the final report):
- Deal (V-5, V-6): a stop card met while dealing is laid in front of the seat it was
  meant for, and that seat at once gets the next card of the deck instead.
- Draw (V-7): from the discard pile, the top discard is taken first, then the stock card
  (so a reshuffle, V-14, leaves the pile's new top card). A card taken from the discard
  pile need not be used and may be discarded again.
- A stop card (V-10) is played after the draw and before the discard; it is not the
  turn's one play (V-8). Played stop cards leave the round (`stops_out`). The skipped
  player may still call Go5; with two players the stop gives its player another turn.
- "A player's first set" (V-9) is their first set of the round. It holds no joker when
  it is laid; once on the table a joker may join it by a lay-off, a swap's given card or
  a Go5 call (rules version 2, V-9 as made binding). Games of rules version 1 (created
  before) keep their reading: the first set never holds a joker, for its whole life.
- A swap's `then.meld.cards` are the three cards of the new set, the taken card among them;
  a given joker may go into another player's set when that set stays valid.
- A play that empties the hand ends the turn at once, without a discard (V-11), and so
  opens no Go5 window (V-13).
- Go5 (V-13): any seat but the discarder, the next player included, from the discard
  until the next draw. The seats that may call are listed first in `to_act`, clockwise
  from the discarder, so that the service asks a bot claimant to act at once.
- V-14: when a card must come from an empty stock and no reshuffle has happened yet,
  the discard pile but its top card is reshuffled; when that leaves the stock empty
  (or it is empty again later), the round ends and is scored.
- The discard pile shows only its top card and its size; the cards below are squared up.
- `pattern_values` is a list of seven integers from 1 to 100 (dots ... rings): a value of
  0 everywhere would make the target unreachable. A card on black always counts double.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from domain import engine
from domain.common_events import RoundStarted, StockReshuffled
from domain.engine import Game, GameConfig, GameEnded, register, replaced
from domain.errors import InvalidInput, RuleViolation
from domain.events import Event
from domain.hands import remove_cards, replaced_at, without
from domain.options import CARD, CARD_LIST, INT, OBJECT, TEXT, Action, ActionSpec, FieldSpec, OptionSpec
from domain.scores import highest_totals as winners_of  # V-16 / C-7

# ---------------------------------------------------------------- cards (V-1 ... V-4)

PATTERNS: tuple[str, ...] = ("dots", "stripes", "waves", "checks", "zigzag", "stars", "rings")
COLOURS: tuple[str, ...] = ("red", "orange", "yellow", "green", "blue", "violet", "black")
NUMBERS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7)
JOKER = "joker"
STOP = "stop"
FEATURES: tuple[str, ...] = ("number", "pattern", "colour")
BLACK = COLOURS.index("black")
HAND_SIZE = 7
FIVE = 5
DEFAULT_PATTERN_VALUES: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7)
MIN_PATTERN_VALUE = 1
MAX_PATTERN_VALUE = 100

Features = tuple[int, str, str]
"""A number card's number, pattern and colour."""


def colour_index(number: int, pattern: int) -> int:
    """V-1: the Latin-square colour of the card with this number and pattern index."""
    return (number - 1 + pattern) % len(COLOURS)


def number_card(number: int, pattern: int) -> str:
    """V-2: the code of a number card, e.g. `3-waves-blue`."""
    return f"{number}-{PATTERNS[pattern]}-{COLOURS[colour_index(number, pattern)]}"


NUMBER_CARDS: tuple[str, ...] = tuple(number_card(n, p) for n in NUMBERS for p in range(len(PATTERNS)))
CANONICAL: tuple[str, ...] = NUMBER_CARDS + (JOKER,) * 3 + (STOP,) * 3
"""V-3: numbers 1-7, within a number by pattern; then 3 jokers; then 3 stop cards."""
CODES: frozenset[str] = frozenset(CANONICAL)
_FEATURES: dict[str, Features] = {
    number_card(n, p): (n, PATTERNS[p], COLOURS[colour_index(n, p)]) for n in NUMBERS for p in range(len(PATTERNS))
}
_ORDER: dict[str, int] = {code: CANONICAL.index(code) for code in CODES}
_FEATURE_VALUES: dict[str, dict[str, int | str]] = {
    by: {card: values[i] for card, values in _FEATURES.items()} for i, by in enumerate(FEATURES)
}
"""For each feature, every number card's value of it (a hot path of legal_actions)."""


def _pair_feature(a: str, b: str) -> str | None:
    """The one feature two different number cards share (V-1), or None."""
    return next((by for by, x, y in zip(FEATURES, _FEATURES[a], _FEATURES[b], strict=True) if x == y), None)


_PAIR_FEATURE: dict[tuple[str, str], str | None] = {
    (a, b): _pair_feature(a, b) for a in NUMBER_CARDS for b in NUMBER_CARDS if a != b
}


def is_go5_card(code: object) -> bool:
    """V-2: one of the 55 codes (49 number cards, `joker`, `stop`)."""
    return isinstance(code, str) and code in CODES


def features(card: str) -> Features:
    """Number, pattern and colour of a number card."""
    return _FEATURES[card]


def feature_value(card: str, by: str) -> int | str:
    """The value of one feature (`number`, `pattern` or `colour`) of a number card."""
    return _FEATURE_VALUES[by][card]


def card_value(card: str, options: Mapping[str, Any]) -> int:
    """V-4: a number card's pattern value, doubled on black; a joker's `joker_value`; a stop 0."""
    if card == JOKER:
        return int(options["joker_value"])
    if card == STOP:
        return 0
    _, pattern, colour = features(card)
    value = int(options["pattern_values"][PATTERNS.index(pattern)])
    return 2 * value if colour == COLOURS[BLACK] else value


def in_order(cards: Iterable[str]) -> tuple[str, ...]:
    """Cards sorted in canonical order (V-3)."""
    return tuple(sorted(cards, key=_ORDER.__getitem__))


def common_features(cards: Sequence[str]) -> list[tuple[str, int | str]]:
    """(feature, value) pairs that every number card among `cards` shares (V-9)."""
    numbers = [_FEATURES[c] for c in cards if c != JOKER]
    if not numbers:
        return []
    first, rest = numbers[0], numbers[1:]
    return [(by, first[i]) for i, by in enumerate(FEATURES) if all(other[i] == first[i] for other in rest)]


# ---------------------------------------------------------------- state

DRAW, PLAY, ROUND_OVER, BETWEEN_ROUNDS = "draw", "play", "round_over", "between_rounds"
FINISHED = engine.FINISHED
FIVE_REACHED, GO5_CALLED, STOCK_EMPTY = "five", "go5", "stock_empty"


@dataclasses.dataclass(frozen=True)
class Go5Set:
    """A set on the table (V-9): its id, owner, the feature it is built on and its cards in play order."""

    id: int
    owner: int
    by: str
    value: int | str
    cards: tuple[str, ...]

    @property
    def has_joker(self) -> bool:
        return JOKER in self.cards

    def with_cards(self, cards: tuple[str, ...]) -> Go5Set:
        return dataclasses.replace(self, cards=cards)


@dataclasses.dataclass(frozen=True)
class Go5State:
    """A Go5 game between events. `discard` lies bottom first; `stock` top first."""

    config: GameConfig
    round: int = 0
    dealer: int = 0
    phase: str = BETWEEN_ROUNDS
    stock: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    hands: tuple[tuple[str, ...], ...] = ()
    stops: tuple[int, ...] = ()
    stops_out: int = 0
    sets: tuple[Go5Set, ...] = ()
    next_set: int = 1
    turn: int = 0
    pending: int = 0
    played: bool = False
    stop_played: bool = False
    discarder: int | None = None
    reshuffles: int = 0
    ended: str | None = None
    closer: int | None = None
    round_scores: tuple[tuple[int, ...], ...] = ()
    round_ends: tuple[str, ...] = ()
    totals: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()

    @property
    def players(self) -> int:
        return self.config.players

    @property
    def options(self) -> Mapping[str, Any]:
        return self.config.options

    def set_by_id(self, set_id: int) -> Go5Set | None:
        return next((s for s in self.sets if s.id == set_id), None)

    @functools.cached_property
    def _owned(self) -> dict[int, tuple[Go5Set, ...]]:
        """Each seat's sets in table order (worked out once: a state never changes)."""
        owned: dict[int, list[Go5Set]] = {}
        for set_ in self.sets:
            owned.setdefault(set_.owner, []).append(set_)
        return {seat: tuple(sets) for seat, sets in owned.items()}

    @functools.cached_property
    def _first_ids(self) -> dict[int, int]:
        """Each seat's first set id (V-9)."""
        return {seat: min(s.id for s in sets) for seat, sets in self._owned.items()}

    def sets_of(self, seat: int) -> tuple[Go5Set, ...]:
        return self._owned.get(seat, ())

    def is_first_set(self, set_: Go5Set) -> bool:
        """V-9: the owner's first set of the round (laid without a joker)."""
        return self._first_ids.get(set_.owner) == set_.id

    def joker_barred(self, set_: Go5Set) -> bool:
        """V-9: whether no joker may join this set on the table: never in rules version 2 (a first
        set holds no joker only when laid); the owner's first set for its whole life in version 1."""
        return self.config.rules_version < 2 and self.is_first_set(set_)


# ---------------------------------------------------------------- events


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardsDrawn(Event):
    """V-7: the turn's draw; `taken` is the top discard when drawn from the discard pile.

    The stock card that goes with it follows as StockCardReceived (it is secret)."""

    source: str
    taken: str | None

    def to_action(self) -> dict[str, Any]:
        return {"type": "draw", "from": self.source}


@dataclasses.dataclass(frozen=True, kw_only=True)
class StopCardLaid(Event):
    """V-6: a stop card came off the stock; it lies face up in front of `seat`."""

    seat: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class StockCardReceived(Event):
    """V-7: the top card of the stock went to `seat`'s hand, seen by that seat only."""

    seat: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class SetMelded(Event):
    """V-8 (a): a new set of three cards from the hand."""

    set: int
    by: str
    cards: tuple[str, ...]

    def to_action(self) -> dict[str, Any]:
        return {"type": "meld", "cards": list(self.cards), "by": self.by}


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardLaidOff(Event):
    """V-8 (b): one card from the hand added to one of the player's own sets."""

    set: int
    card: str

    def to_action(self) -> dict[str, Any]:
        return {"type": "lay_off", "set": self.set, "card": self.card}


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardSwapped(Event):
    """V-8 (c): `take` left `from_seat`'s set `set`, `give` took its place, and `take` was used at once:
    in a new set `new_set` of `cards` built by `by`, or laid off onto the player's set `onto`."""

    from_seat: int
    set: int
    take: str
    give: str
    new_set: int | None
    by: str | None
    cards: tuple[str, ...]
    onto: int | None

    def then(self) -> dict[str, Any]:
        """The `then` part of the swap action."""
        if self.onto is not None:
            return {"lay_off": {"set": self.onto}}
        return {"meld": {"cards": list(self.cards), "by": self.by}}

    def to_action(self) -> dict[str, Any]:
        return {
            "type": "swap",
            "from_seat": self.from_seat,
            "set": self.set,
            "take": self.take,
            "give": self.give,
            "then": self.then(),
        }


@dataclasses.dataclass(frozen=True, kw_only=True)
class StopPlayed(Event):
    """V-10: a stop card left the round; the next player's turn is skipped."""

    def to_action(self) -> dict[str, Any]:
        return {"type": "stop"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardDiscarded(Event):
    """V-11: one card face up on the discard pile; the turn ended."""

    card: str

    def to_action(self) -> dict[str, Any]:
        return {"type": "discard", "card": self.card}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Go5Called(Event):
    """V-13: the top discard `card` completed the caller's 4-card set `set`; the round ended."""

    set: int
    card: str

    def to_action(self) -> dict[str, Any]:
        return {"type": "go5", "set": self.set}


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoundScored(Event):
    """V-12 ... V-15: why the round ended, who closed it (None on an empty stock), and its scores."""

    round: int
    reason: str
    closer: int | None
    scores: tuple[int, ...]


PLAY_EVENTS = (SetMelded, CardLaidOff, CardSwapped)


# ---------------------------------------------------------------- the deal (V-5, V-6)


@dataclasses.dataclass(frozen=True)
class Deal:
    """A round's deal: hands, stop cards laid out, the discard pile and the stock."""

    hands: tuple[tuple[str, ...], ...]
    stops: tuple[int, ...]
    discard: tuple[str, ...]
    stock: tuple[str, ...]


def deal(deck: Sequence[str], players: int, dealer: int) -> Deal:
    """V-5: 7 cards each, one at a time clockwise from the left of the dealer; a stop card is
    laid out and replaced by the next card (V-6); then the first number card is turned up,
    jokers and stop cards going to the bottom of the stock."""
    hands: list[list[str]] = [[] for _ in range(players)]
    stops = [0] * players
    index = 0
    for k in range(HAND_SIZE * players):
        seat = (dealer + 1 + k) % players
        while deck[index] == STOP:
            stops[seat] += 1
            index += 1
        hands[seat].append(deck[index])
        index += 1
    stock = list(deck[index:])
    while stock[0] in (JOKER, STOP):
        stock.append(stock.pop(0))
    return Deal(tuple(in_order(h) for h in hands), tuple(stops), (stock[0],), tuple(stock[1:]))


# ---------------------------------------------------------------- scoring (V-15, V-16)


def seat_score(state: Go5State, seat: int) -> int:
    """V-15: + number cards in the seat's sets, - number cards in its hand, joker_value per joker it has."""
    options = state.options
    score = 0
    for set_ in state.sets_of(seat):
        score += sum(card_value(c, options) for c in set_.cards)
    for card in state.hands[seat]:
        score += card_value(card, options) if card == JOKER else -card_value(card, options)
    return score


def round_scores(state: Go5State) -> tuple[int, ...]:
    """V-15 for every seat."""
    return tuple(seat_score(state, seat) for seat in range(state.players))


# ---------------------------------------------------------------- set checks (V-8, V-9)


def _refusal_for_set(cards: Sequence[str], by: str, value: int | str, joker_barred: bool) -> tuple[str, str] | None:
    """(code, detail) when `cards` cannot form a set on feature `by` = `value`, else None."""
    if cards.count(JOKER) > 1:
        return "too_many_jokers", "a set holds at most one joker"
    if joker_barred and JOKER in cards:
        return "joker_in_first_set", "a player's first set contains no joker"
    values = _FEATURE_VALUES[by]
    for card in cards:
        if card != JOKER and values[card] != value:
            return "card_does_not_fit", f"{card} does not have the set's {by} {value}"
    if len(cards) > FIVE:
        return "set_full", "a set holds at most 5 cards"
    return None


def card_fits(state: Go5State, set_: Go5Set, card: str) -> bool:
    """True when `card` may join `set_` (V-9)."""
    cards = (*set_.cards, card)
    return _refusal_for_set(cards, set_.by, set_.value, state.joker_barred(set_)) is None


def new_set_feature(cards: Sequence[str], by: str | None, first: bool) -> tuple[str, int | str]:
    """V-9: the (feature, value) a new 3-card set is built on; RuleViolation when it is no set."""
    if len(cards) != 3:
        raise RuleViolation("wrong_set_size", "a new set has exactly 3 cards", "V-8")
    if cards.count(JOKER) > 1:
        raise RuleViolation("too_many_jokers", "a set holds at most one joker", "V-9")
    if first and JOKER in cards:
        raise RuleViolation("joker_in_first_set", "a player's first set contains no joker", "V-9")
    shared = common_features(cards)
    if not shared:
        raise RuleViolation("no_common_feature", "the cards share no number, pattern or colour", "V-9")
    if by is None:
        return shared[0]
    for feature, value in shared:
        if feature == by:
            return feature, value
    raise RuleViolation("wrong_feature", f"the cards share their {shared[0][0]}, not their {by}", "V-9")


def claims(state: Go5State, seat: int) -> list[int]:
    """V-13: ids of `seat`'s 4-card sets that the top discard completes, while a call is open."""
    if state.phase != DRAW or state.discarder is None or seat == state.discarder or not state.discard:
        return []
    top = state.discard[-1]
    return [s.id for s in state.sets_of(seat) if len(s.cards) == FIVE - 1 and card_fits(state, s, top)]


def claimants(state: Go5State) -> tuple[int, ...]:
    """Seats that may call Go5 now, clockwise from the discarder (V-13)."""
    if state.discarder is None:
        return ()
    order = [(state.discarder + k) % state.players for k in range(1, state.players)]
    return tuple(seat for seat in order if claims(state, seat))


# ---------------------------------------------------------------- the game


MELD_FIELDS = (FieldSpec("cards", CARD_LIST), FieldSpec("by", TEXT, False, True, FEATURES))
"""A new set: a `meld` action, and a swap's `then.meld` (checked by _parse_then)."""
THEN_FIELDS = (
    FieldSpec("meld", OBJECT, required=False, fields=MELD_FIELDS),
    FieldSpec("lay_off", OBJECT, required=False, fields=(FieldSpec("set", INT),)),
)
"""What a swap does with the taken card: exactly one of a new set or a lay-off (_parse_then)."""


class Go5(Game[Go5State]):
    """Go5 as pure functions."""

    id = "go5"
    name = "Go5"
    min_players = 2
    max_players = 4
    players_rule = "V-5"
    end_rule = "V-16"
    round_scored = RoundScored
    # 3: C-9, a game ends when it has room for no more than its closing events (max_events)
    # 2: V-9, a joker may join a first set once it is on the table
    rules_version = 3
    event_limit_since = 3
    bots = "domain.bots.go5"
    lowest_wins = False  # V-16: the most points wins
    options = (
        OptionSpec(
            "pattern_values",
            "value of a number card by pattern, dots to rings: a list of 7 integers, each 1 to 100; "
            "doubled on a black background (V-4)",
            list(DEFAULT_PATTERN_VALUES),
            MIN_PATTERN_VALUE,
            MAX_PATTERN_VALUE,
        ),
        OptionSpec("joker_value", "what every joker counts for the player who has it (V-4, V-15)", -10, -100, 0),
        OptionSpec(
            "target", "the game ends after a round in which a player reaches this total (V-16)", 500, 1, 100_000
        ),
    )
    actions = (
        ActionSpec("draw", (FieldSpec("from", TEXT, choices=("stock", "discard")),)),
        ActionSpec("meld", MELD_FIELDS),
        ActionSpec("lay_off", (FieldSpec("set", INT), FieldSpec("card", CARD))),
        ActionSpec(
            "swap",
            (
                FieldSpec("from_seat", INT),
                FieldSpec("set", INT),
                FieldSpec("take", CARD),
                FieldSpec("give", CARD),
                FieldSpec("then", OBJECT, fields=THEN_FIELDS, one_of=True),
            ),
        ),
        ActionSpec("stop"),
        ActionSpec("discard", (FieldSpec("card", CARD),)),
        ActionSpec("go5", (FieldSpec("set", INT),)),
    )
    events = (
        RoundStarted,
        CardsDrawn,
        StopCardLaid,
        StockCardReceived,
        StockReshuffled,
        SetMelded,
        CardLaidOff,
        CardSwapped,
        StopPlayed,
        CardDiscarded,
        Go5Called,
        RoundScored,
        GameEnded,
    )

    # ---- setup

    def is_card(self, code: object) -> bool:
        return is_go5_card(code)

    def card_codes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(CANONICAL))

    def resolve_options(self, players: int, given: Mapping[str, Any]) -> dict[str, Any]:
        rest = {key: value for key, value in given.items() if key != "pattern_values"}
        options = super().resolve_options(players, rest)
        options["pattern_values"] = _check_pattern_values(given.get("pattern_values", DEFAULT_PATTERN_VALUES))
        return options

    def canonical_deck(self, players: int, options: Mapping[str, Any]) -> tuple[str, ...]:
        return CANONICAL

    def initial_state(self, config: GameConfig) -> Go5State:
        return Go5State(config=config, totals=(0,) * config.players)

    # ---- whose turn

    def to_act(self, state: Go5State) -> tuple[int, ...]:
        """The turn player; while a discard is open to a Go5 call, the claimants first (V-13)."""
        if state.phase == DRAW:
            callers = claimants(state)
            return callers + ((state.turn,) if state.turn not in callers else ())
        if state.phase == PLAY:
            return (state.turn,)
        return ()

    def out_of_turn(self, state: Go5State) -> tuple[int, ...]:
        """The seats that may call Go5 on the top discard until the next draw (V-13)."""
        return claimants(state) if state.phase == DRAW else ()

    def is_finished(self, state: Go5State) -> bool:
        return state.phase == FINISHED

    # ---- decide

    def decide(self, state: Go5State, seat: int, action: Action) -> list[Event]:
        if action.type == "go5":
            return [_decide_go5(state, seat, action["set"])]
        if seat != state.turn or state.phase not in (DRAW, PLAY):
            raise RuleViolation("not_your_turn", f"it is seat {state.turn}'s turn", "C-2")
        if action.type == "draw":
            return [_decide_draw(state, seat, action["from"])]
        if action.type == "stop":
            return [_decide_stop(state, seat)]
        if action.type == "discard":
            return [_decide_discard(state, seat, action["card"])]
        _check_may_play(state)
        if action.type == "meld":
            return [_decide_meld(state, seat, action["cards"], action["by"])]
        if action.type == "lay_off":
            return [_decide_lay_off(state, seat, action["set"], action["card"])]
        return [_decide_swap(state, seat, action)]

    # ---- system steps

    def automatic(self, state: Go5State) -> Event | None:
        if state.phase == BETWEEN_ROUNDS:
            if state.round and max(state.totals) >= state.options["target"]:
                return GameEnded(totals=state.totals, winners=winners_of(state.totals))
            return RoundStarted(round=state.round + 1, dealer=state.round % state.players)
        if state.phase == ROUND_OVER:
            assert state.ended is not None
            return RoundScored(round=state.round, reason=state.ended, closer=state.closer, scores=round_scores(state))
        if state.phase == PLAY and state.pending:
            return _stock_step(state)
        return None

    # ---- evolve

    def evolve(self, state: Go5State, event: Event) -> Go5State:
        if isinstance(event, RoundStarted):
            return _apply_deal(state, event)
        if isinstance(event, CardsDrawn):
            return _apply_draw(state, event)
        if isinstance(event, StopCardLaid | StockCardReceived | StockReshuffled):
            return _apply_stock_step(state, event)
        if isinstance(event, PLAY_EVENTS):
            return _after_play(_apply_play(state, event))
        if isinstance(event, StopPlayed):
            return _apply_stop(state, event)
        if isinstance(event, CardDiscarded):
            return _apply_discard(state, event)
        if isinstance(event, Go5Called):
            return _apply_go5(state, event)
        if isinstance(event, RoundScored):
            return _apply_round_scored(state, event)
        raise AssertionError(f"go5 cannot apply {event.type_name()}")

    # ---- what a seat may do

    def legal_actions(self, state: Go5State, seat: int) -> list[dict[str, Any]]:
        """Every action `seat` may send now.

        Melds (also inside swaps) are listed once per card combination, cards in canonical
        order and with their `by`; decide also takes them in any order and without `by`.
        """
        if state.phase == DRAW:
            actions: list[dict[str, Any]] = []
            if seat == state.turn:
                actions.append({"type": "draw", "from": "stock"})
                if state.discard:
                    actions.append({"type": "draw", "from": "discard"})
            return actions + [{"type": "go5", "set": set_id} for set_id in claims(state, seat)]
        if state.phase != PLAY or seat != state.turn or state.pending:
            return []
        actions = [] if state.played else _plays(state, seat)
        if state.stops[seat] and not state.stop_played:
            actions.append({"type": "stop"})
        return actions + [{"type": "discard", "card": card} for card in dict.fromkeys(state.hands[seat])]

    # ---- views

    def public_view(self, state: Go5State) -> dict[str, Any]:
        return {
            "round": state.round,
            "phase": state.phase,
            "scores": list(state.totals),
            "table": _table(state),
            "result": _result(state),
        }

    def seat_view(self, state: Go5State, seat: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "hand": list(state.hands[seat]) if state.hands else [],
            "stops": state.stops[seat] if state.stops else 0,
            "go5": claims(state, seat),
        }

    def full_view(self, state: Go5State) -> dict[str, Any]:
        table = _table(state)
        table["stock"] = list(state.stock)
        table["discard"] = list(state.discard)
        table["hands"] = [list(hand) for hand in state.hands]
        return {
            "round": state.round,
            "phase": state.phase,
            "scores": list(state.totals),
            "table": table,
            "result": _result(state),
        }


GO5 = register(Go5())


# ---------------------------------------------------------------- option helpers


def _check_pattern_values(value: Any) -> list[int]:
    """V-4: seven integers 1 ... 100, dots to rings (every number card is worth something)."""
    if not isinstance(value, list | tuple) or len(value) != len(PATTERNS):
        raise InvalidInput("invalid_option", "option 'pattern_values' must be a list of 7 integers (dots ... rings)")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or not MIN_PATTERN_VALUE <= item <= MAX_PATTERN_VALUE:
            raise InvalidInput(
                "invalid_option",
                f"option 'pattern_values' holds integers from {MIN_PATTERN_VALUE} to {MAX_PATTERN_VALUE}, not {item!r}",
            )
    return list(value)


# ---------------------------------------------------------------- decide helpers


def _check_in_hand(hand: Sequence[str], cards: Sequence[str], rule: str) -> tuple[str, ...]:
    """The hand without `cards`; a stop card is never in a hand (V-6)."""
    if STOP in cards:
        raise RuleViolation("stop_never_in_hand", "stop cards lie in front of a player, never in the hand", "V-6")
    left = remove_cards(hand, cards)
    if left is None:
        raise RuleViolation("card_not_in_hand", f"your hand does not hold {', '.join(cards)}", rule)
    return left


def _check_may_play(state: Go5State) -> None:
    if state.phase != PLAY:
        raise RuleViolation("draw_first", "draw before you play", "V-7")
    if state.played:
        raise RuleViolation("already_played", "at most one play per turn", "V-8")


def _decide_draw(state: Go5State, seat: int, source: str) -> Event:
    if state.phase != DRAW:
        raise RuleViolation("already_drawn", "you have drawn this turn", "V-7")
    if source == "discard":
        if not state.discard:
            raise RuleViolation("discard_empty", "the discard pile is empty", "V-7")
        return CardsDrawn(actor=seat, source=source, taken=state.discard[-1])
    return CardsDrawn(actor=seat, source=source, taken=None)


def _decide_stop(state: Go5State, seat: int) -> Event:
    if state.phase != PLAY:
        raise RuleViolation("draw_first", "a stop card is played after the draw, before the discard", "V-10")
    if not state.stops[seat]:
        raise RuleViolation("no_stop_card", "no stop card lies in front of you", "V-10")
    if state.stop_played:
        raise RuleViolation("stop_already_played", "one stop card per turn", "V-10")
    return StopPlayed(actor=seat)


def _decide_discard(state: Go5State, seat: int, card: str) -> Event:
    if state.phase != PLAY:
        raise RuleViolation("draw_first", "draw before you discard", "V-7")
    _check_in_hand(state.hands[seat], [card], "V-11")
    return CardDiscarded(actor=seat, card=card)


def _decide_meld(state: Go5State, seat: int, cards: Sequence[str], by: str | None) -> Event:
    if len(cards) != 3:
        raise RuleViolation("wrong_set_size", "a new set has exactly 3 cards", "V-8")
    _check_in_hand(state.hands[seat], cards, "V-8")
    feature, _ = new_set_feature(cards, by, first=not state.sets_of(seat))
    return SetMelded(actor=seat, set=state.next_set, by=feature, cards=in_order(cards))


def _own_set(state: Go5State, seat: int, set_id: int, rule: str) -> Go5Set:
    set_ = state.set_by_id(set_id)
    if set_ is None:
        raise RuleViolation("unknown_set", f"there is no set {set_id} this round", rule)
    if set_.owner != seat:
        raise RuleViolation("not_your_set", f"set {set_id} is seat {set_.owner}'s", rule)
    return set_


def _check_joins(state: Go5State, set_: Go5Set, card: str, rule: str = "V-9") -> None:
    refusal = _refusal_for_set((*set_.cards, card), set_.by, set_.value, state.joker_barred(set_))
    if refusal is not None:
        raise RuleViolation(refusal[0], refusal[1], rule)


def _decide_lay_off(state: Go5State, seat: int, set_id: int, card: str) -> Event:
    set_ = _own_set(state, seat, set_id, "V-8")
    _check_in_hand(state.hands[seat], [card], "V-8")
    _check_joins(state, set_, card)
    return CardLaidOff(actor=seat, set=set_id, card=card)


def _parse_then(then: Mapping[str, Any]) -> tuple[str, Any, str | None]:
    """`then` of a swap: ("meld", cards, by) or ("lay_off", set id, None); InvalidInput when malformed."""
    if len(then) != 1 or next(iter(then)) not in ("meld", "lay_off"):
        raise InvalidInput("invalid_request", '\'swap.then\' is {"meld": {cards, by?}} or {"lay_off": {set}}')
    kind, body = next(iter(then.items()))
    if not isinstance(body, dict):
        raise InvalidInput("invalid_request", f"'swap.then.{kind}' must be an object")
    if kind == "lay_off":
        set_id = body.get("set")
        if set(body) != {"set"} or isinstance(set_id, bool) or not isinstance(set_id, int):
            raise InvalidInput("invalid_request", "'swap.then.lay_off' is {\"set\": <set id>}")
        return kind, set_id, None
    cards, by = body.get("cards"), body.get("by")
    if not set(body) <= {"cards", "by"} or not isinstance(cards, list) or any(not isinstance(c, str) for c in cards):
        raise InvalidInput("invalid_request", '\'swap.then.meld\' is {"cards": [3 card codes], "by"?}')
    if by is not None and by not in FEATURES:
        raise InvalidInput("invalid_request", f"'swap.then.meld.by' must be one of {', '.join(FEATURES)}")
    unknown = [c for c in cards if not is_go5_card(c)]
    if unknown:
        raise InvalidInput("unknown_card", f"'swap.then.meld.cards': {unknown[0]!r} is not a card code of this game")
    return kind, tuple(cards), by


def _victim_set(state: Go5State, seat: int, from_seat: int, set_id: int, take: str, give: str) -> Go5Set:
    """V-8 (c): the other player's set after the swap; RuleViolation when the swap is not allowed."""
    if from_seat == seat:
        raise RuleViolation("own_set", "a swap takes a card from another player's set", "V-8")
    set_ = state.set_by_id(set_id)
    if set_ is None or set_.owner != from_seat:
        raise RuleViolation("unknown_set", f"seat {from_seat} has no set {set_id}", "V-8")
    if take == JOKER:
        raise RuleViolation("joker_not_swappable", "a swap takes a non-joker card", "V-8")
    if take not in set_.cards:
        raise RuleViolation("card_not_in_set", f"set {set_id} does not hold {take}", "V-8")
    cards = tuple(give if card == take else card for card in set_.cards)
    refusal = _refusal_for_set(cards, set_.by, set_.value, state.joker_barred(set_))
    if refusal is not None:
        raise RuleViolation("swap_breaks_set", f"set {set_id} must stay valid: {refusal[1]}", "V-8")
    return set_.with_cards(cards)


def _decide_swap(state: Go5State, seat: int, action: Action) -> Event:
    kind, target, by = _parse_then(action["then"])
    take, give = action["take"], action["give"]
    rest = _check_in_hand(state.hands[seat], [give], "V-8")  # first: only a hand card is tried in a set
    victim = _victim_set(state, seat, action["from_seat"], action["set"], take, give)
    hand = (*rest, take)
    swapped = replaced(state, sets=tuple(victim if s.id == victim.id else s for s in state.sets))
    base = {"actor": seat, "from_seat": victim.owner, "set": victim.id, "take": take, "give": give}
    if kind == "lay_off":
        own = _own_set(swapped, seat, target, "V-8")
        _check_joins(swapped, own, take)
        return CardSwapped(**base, new_set=None, by=None, cards=(), onto=own.id)
    if take not in target:
        raise RuleViolation("taken_card_unused", "the taken card must be in the new set", "V-8")
    if len(target) != 3:
        raise RuleViolation("wrong_set_size", "a new set has exactly 3 cards", "V-8")
    _check_in_hand(hand, target, "V-8")
    feature, _ = new_set_feature(target, by, first=not state.sets_of(seat))
    return CardSwapped(**base, new_set=state.next_set, by=feature, cards=in_order(target), onto=None)


def _decide_go5(state: Go5State, seat: int, set_id: int) -> Event:
    if state.phase != DRAW or state.discarder is None:
        raise RuleViolation("no_go5_window", "Go5 is called right after a discard, before the next draw", "V-13")
    if seat == state.discarder:
        raise RuleViolation("own_discard", "only the other players may call Go5 on a discard", "V-13")
    set_ = _own_set(state, seat, set_id, "V-13")
    if len(set_.cards) != FIVE - 1:
        raise RuleViolation("not_four_cards", f"set {set_id} has {len(set_.cards)} cards, not 4", "V-13")
    top = state.discard[-1]
    refusal = _refusal_for_set((*set_.cards, top), set_.by, set_.value, state.joker_barred(set_))
    if refusal is not None:
        raise RuleViolation("does_not_complete", f"{top} does not complete set {set_id}: {refusal[1]}", "V-13")
    return Go5Called(actor=seat, set=set_id, card=top)


def _stock_step(state: Go5State) -> Event:
    """V-6 / V-7 / V-14: the next step of taking a card from the stock."""
    if not state.stock:
        if state.reshuffles == 0 and len(state.discard) > 1:
            return StockReshuffled(reshuffle=1)
        return RoundScored(round=state.round, reason=STOCK_EMPTY, closer=None, scores=round_scores(state))
    if state.stock[0] == STOP:
        return StopCardLaid(seat=state.turn)
    return StockCardReceived(seat=state.turn)


# ---------------------------------------------------------------- legal-action helpers


def _melds(state: Go5State, seat: int, hand: Sequence[str]) -> list[tuple[tuple[str, ...], str]]:
    """Every distinct valid new 3-set from `hand`, with the feature it is built on."""
    first = not state.sets_of(seat)
    found: dict[tuple[str, ...], str] = {}
    for cards in itertools.combinations(hand, 3):
        jokers = cards.count(JOKER)
        if jokers > 1 or (jokers and first):
            continue
        by = _meld_feature(cards)
        if by is not None:
            found.setdefault(in_order(cards), by)
    return list(found.items())


def _meld_feature(cards: Sequence[str]) -> str | None:
    """The first feature three cards with at most one joker share (V-9), or None.

    Two different number cards share at most one feature (V-1), so a pair decides it."""
    numbers = [card for card in cards if card != JOKER]
    if len(set(numbers)) != len(numbers) or len(numbers) < 2:
        shared = common_features(cards)
        return shared[0][0] if shared else None
    by = _PAIR_FEATURE[numbers[0], numbers[1]]
    if by is None or any(_PAIR_FEATURE[numbers[0], other] != by for other in numbers[2:]):
        return None
    return by


def _melds_with(take: str, pool: Sequence[str], first: bool) -> list[tuple[tuple[str, ...], str]]:
    """Every distinct valid new 3-set of `take` (a number card) and two cards of `pool`."""
    found: dict[tuple[str, ...], str] = {}
    numbers = [c for c in dict.fromkeys(pool) if c != JOKER]
    for by in FEATURES:
        values = _FEATURE_VALUES[by]
        mates = [c for c in numbers if values[c] == values[take]]
        pairs = list(itertools.combinations(mates, 2))
        if JOKER in pool and not first:
            pairs += [(mate, JOKER) for mate in mates]
        for pair in pairs:
            found.setdefault(in_order((take, *pair)), by)
    return list(found.items())


def _plays(state: Go5State, seat: int) -> list[dict[str, Any]]:
    """V-8: every meld, lay-off and swap `seat` may make now."""
    hand = state.hands[seat]
    actions: list[dict[str, Any]] = [
        {"type": "meld", "cards": list(cards), "by": by} for cards, by in _melds(state, seat, hand)
    ]
    for set_ in state.sets_of(seat):
        for card in dict.fromkeys(hand):
            if card_fits(state, set_, card):
                actions.append({"type": "lay_off", "set": set_.id, "card": card})
    return actions + _swaps(state, seat)


def _swaps(state: Go5State, seat: int) -> list[dict[str, Any]]:
    """V-8 (c): every swap with every use of the taken card.

    The victim's set is another player's, so the swap changes none of the seat's own sets:
    the uses of the taken card are worked out on the state as it is."""
    actions: list[dict[str, Any]] = []
    for victim in state.sets:
        if victim.owner != seat:
            actions += _swaps_from(state, seat, victim)
    return actions


def _swaps_from(state: Go5State, seat: int, victim: Go5Set) -> list[dict[str, Any]]:
    """V-8 (c): every swap that takes a card from `victim`, with every use of the taken card."""
    hand = state.hands[seat]
    values = _FEATURE_VALUES[victim.by]
    gives = [card for card in dict.fromkeys(hand) if card == JOKER or values[card] == victim.value]
    if not gives:
        return []  # no card of the hand keeps the set valid (V-9)
    victim_barred = state.joker_barred(victim)
    actions: list[dict[str, Any]] = []
    for take in dict.fromkeys(c for c in victim.cards if c != JOKER):
        uses: tuple[list[tuple[tuple[str, ...], str]], list[dict[str, Any]]] | None = None
        for give in gives:
            cards = tuple(give if c == take else c for c in victim.cards)
            if _refusal_for_set(cards, victim.by, victim.value, victim_barred) is not None:
                continue
            if uses is None:  # worked out once the taken card has a valid give
                uses = _uses_of(state, seat, take)
            with_hand, lay_offs = uses
            spare = hand.count(give) - 1  # the give leaves the hand before the taken card is used
            melds = [{"meld": {"cards": list(c), "by": by}} for c, by in with_hand if c.count(give) <= spare]
            base = {"type": "swap", "from_seat": victim.owner, "set": victim.id, "take": take, "give": give}
            actions += [{**base, "then": then} for then in melds + lay_offs]
    return actions


def _uses_of(state: Go5State, seat: int, take: str) -> tuple[list[tuple[tuple[str, ...], str]], list[dict[str, Any]]]:
    """A taken card's uses: new sets with two cards of the whole hand, and the seat's sets it joins."""
    melds = _melds_with(take, state.hands[seat], first=not state.sets_of(seat))
    return melds, [{"lay_off": {"set": s.id}} for s in state.sets_of(seat) if card_fits(state, s, take)]


# ---------------------------------------------------------------- evolve helpers


def _with_hand(state: Go5State, seat: int, hand: Iterable[str]) -> Go5State:
    return replaced(state, hands=replaced_at(state.hands, seat, in_order(hand)))


def _apply_deal(state: Go5State, event: RoundStarted) -> Go5State:
    assert event.round == state.round + 1 and state.phase == BETWEEN_ROUNDS
    dealt = deal(state.config.round_deck(event.round, CANONICAL), state.players, event.dealer)
    return replaced(
        state,
        round=event.round,
        dealer=event.dealer,
        phase=DRAW,
        stock=dealt.stock,
        discard=dealt.discard,
        hands=dealt.hands,
        stops=dealt.stops,
        stops_out=0,
        sets=(),
        next_set=1,
        turn=(event.dealer + 1) % state.players,
        pending=0,
        played=False,
        stop_played=False,
        discarder=None,
        reshuffles=0,
        ended=None,
        closer=None,
    )


def _apply_draw(state: Go5State, event: CardsDrawn) -> Go5State:
    seat = int(event.actor)
    assert state.phase == DRAW and seat == state.turn
    if event.source == "discard":
        assert state.discard and state.discard[-1] == event.taken
        state = _with_hand(state, seat, (*state.hands[seat], state.discard[-1]))
        state = replaced(state, discard=state.discard[:-1])
    return replaced(state, phase=PLAY, pending=1, discarder=None)


def _apply_stock_step(state: Go5State, event: Event) -> Go5State:
    assert state.phase == PLAY and state.pending
    if isinstance(event, StockReshuffled):
        assert not state.stock and event.reshuffle == state.reshuffles + 1 == 1
        stock = state.config.reshuffle(state.round, event.reshuffle, state.discard[:-1])
        return replaced(state, stock=stock, discard=state.discard[-1:], reshuffles=event.reshuffle)
    assert isinstance(event, StopCardLaid | StockCardReceived) and event.seat == state.turn and state.stock
    top, stock = state.stock[0], state.stock[1:]
    if isinstance(event, StopCardLaid):
        assert top == STOP
        stops = replaced_at(state.stops, event.seat, state.stops[event.seat] + 1)
        return replaced(state, stock=stock, stops=stops)
    assert top != STOP
    state = _with_hand(state, event.seat, (*state.hands[event.seat], top))
    return replaced(state, stock=stock, pending=state.pending - 1)


def _with_set(state: Go5State, set_: Go5Set) -> Go5State:
    """The state with `set_` replacing the set of its id, or added."""
    if state.set_by_id(set_.id) is None:
        return replaced(state, sets=(*state.sets, set_), next_set=set_.id + 1)
    return replaced(state, sets=tuple(set_ if s.id == set_.id else s for s in state.sets))


def _new_set(owner: int, set_id: int, by: str, cards: tuple[str, ...]) -> Go5Set:
    shared = dict(common_features(cards))
    return Go5Set(set_id, owner, by, shared[by], cards)


def _apply_play(state: Go5State, event: Event) -> Go5State:
    seat = int(event.actor)
    assert state.phase == PLAY and seat == state.turn and not state.played and not state.pending
    hand = state.hands[seat]
    if isinstance(event, SetMelded):
        state = _with_set(state, _new_set(seat, event.set, event.by, event.cards))
        state = _with_hand(state, seat, without(hand, event.cards))
    elif isinstance(event, CardLaidOff):
        set_ = state.set_by_id(event.set)
        assert set_ is not None and set_.owner == seat
        state = _with_set(state, set_.with_cards((*set_.cards, event.card)))
        state = _with_hand(state, seat, without(hand, [event.card]))
    else:
        assert isinstance(event, CardSwapped)
        state = _apply_swap(state, event)
    return replaced(state, played=True)


def _apply_swap(state: Go5State, event: CardSwapped) -> Go5State:
    seat = int(event.actor)
    victim = state.set_by_id(event.set)
    assert victim is not None and victim.owner == event.from_seat and event.take in victim.cards
    state = _with_set(state, victim.with_cards(tuple(event.give if c == event.take else c for c in victim.cards)))
    hand = (*without(state.hands[seat], [event.give]), event.take)
    if event.onto is not None:
        own = state.set_by_id(event.onto)
        assert own is not None and own.owner == seat
        state = _with_set(state, own.with_cards((*own.cards, event.take)))
        return _with_hand(state, seat, without(hand, [event.take]))
    assert event.new_set is not None and event.by is not None and event.take in event.cards
    state = _with_set(state, _new_set(seat, event.new_set, event.by, event.cards))
    return _with_hand(state, seat, without(hand, event.cards))


def _after_play(state: Go5State) -> Go5State:
    """V-12: a five ends the round at once; V-11: an empty hand ends the turn without a discard."""
    if any(len(s.cards) >= FIVE for s in state.sets):
        return replaced(state, phase=ROUND_OVER, ended=FIVE_REACHED, closer=state.turn)
    if not state.hands[state.turn]:
        return _end_turn(state)
    return state


def _end_turn(state: Go5State) -> Go5State:
    """The next player draws; a played stop card skips one seat (V-10)."""
    step = 2 if state.stop_played else 1
    return replaced(state, turn=(state.turn + step) % state.players, phase=DRAW, played=False, stop_played=False)


def _apply_stop(state: Go5State, event: StopPlayed) -> Go5State:
    seat = int(event.actor)
    assert state.phase == PLAY and seat == state.turn and state.stops[seat] and not state.stop_played
    stops = replaced_at(state.stops, seat, state.stops[seat] - 1)
    return replaced(state, stops=stops, stops_out=state.stops_out + 1, stop_played=True)


def _apply_discard(state: Go5State, event: CardDiscarded) -> Go5State:
    seat = int(event.actor)
    assert state.phase == PLAY and seat == state.turn and not state.pending
    state = _with_hand(state, seat, without(state.hands[seat], [event.card]))
    state = replaced(state, discard=(*state.discard, event.card), discarder=seat)
    return _end_turn(state)


def _apply_go5(state: Go5State, event: Go5Called) -> Go5State:
    seat = int(event.actor)
    set_ = state.set_by_id(event.set)
    assert state.phase == DRAW and state.discarder not in (None, seat) and state.discard[-1] == event.card
    assert set_ is not None and set_.owner == seat and len(set_.cards) == FIVE - 1
    state = _with_set(state, set_.with_cards((*set_.cards, event.card)))
    return replaced(state, discard=state.discard[:-1], phase=ROUND_OVER, ended=GO5_CALLED, closer=seat, discarder=None)


def _apply_round_scored(state: Go5State, event: RoundScored) -> Go5State:
    assert event.round == state.round
    totals = tuple(t + s for t, s in zip(state.totals, event.scores, strict=True))
    return replaced(
        state,
        totals=totals,
        round_scores=(*state.round_scores, event.scores),
        round_ends=(*state.round_ends, event.reason),
        phase=BETWEEN_ROUNDS,
        ended=event.reason,
        closer=event.closer,
        pending=0,
        discarder=None,
    )


# ---------------------------------------------------------------- view helpers


def set_view(set_: Go5Set) -> dict[str, Any]:
    """A set as every player sees it."""
    return {
        "id": set_.id,
        "owner": set_.owner,
        "feature": set_.by,
        "value": set_.value,
        "cards": list(set_.cards),
        "joker": set_.has_joker,
    }


def _table(state: Go5State) -> dict[str, Any]:
    in_round = state.phase in (DRAW, PLAY)
    return {
        "dealer": state.dealer,
        "turn": state.turn if in_round else None,
        "stock_size": len(state.stock),
        "discard_top": state.discard[-1] if state.discard else None,
        "discard_size": len(state.discard),
        "go5_open": in_round and state.phase == DRAW and state.discarder is not None,
        "discarded_by": state.discarder if in_round else None,
        "played": state.played,
        "stop_played": state.stop_played,
        "reshuffles": state.reshuffles,
        "players": [
            {
                "seat": seat,
                "hand_size": len(state.hands[seat]) if state.hands else 0,
                "stops": state.stops[seat] if state.stops else 0,
                "sets": [set_view(s) for s in state.sets_of(seat)],
            }
            for seat in range(state.players)
        ],
        "stops_out": state.stops_out,
        "round_scores": [list(r) for r in state.round_scores],
        "round_ends": list(state.round_ends),
        "closer": state.closer if not in_round else None,
        "pattern_values": list(state.options["pattern_values"]),
        "joker_value": state.options["joker_value"],
        "target": state.options["target"],
    }


def _result(state: Go5State) -> dict[str, Any] | None:
    if state.phase != FINISHED:
        return None
    return {"totals": list(state.totals), "winners": list(state.winners)}
