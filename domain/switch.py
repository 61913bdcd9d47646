"""Switch (`switch`): Crazy Eights with four decks, stacking twos and jokers, to 500 (S-1 ... S-11).

Where rules/switch.md leaves room, this module decides (and says so where it does):

- A draw that the stock cannot cover reshuffles the discard pile but its top card
  (S-8) *under* the rest of the stock, then draws: the same cards as drawing the
  rest, reshuffling and drawing on, in one event. One reshuffle per draw at most.
- `draw {}` with no card to draw at all ends the turn (S-8); such turns in a row by
  every player who still holds cards block the hand.
- When only one player still holds cards (the others went out on a 2 or a joker,
  S-9), the hand ends at once. Rules version 2 (S-9 as made binding): that player
  first takes the pending draw (system events: a reshuffle if the stock is short,
  S-8, then `LastHolderDrew`), and the hand is scored with the drawn cards. Rules
  version 1 (games created before): the hand is scored without the draw.
- Two cards may be played only onto a pending draw (S-7); a suit is named only with
  a `J` (S-4). A drawn card that cannot be played ends the turn by itself (S-6).
- The reshuffle happens when a draw needs it (not as soon as the stock is empty), and
  a pending draw taken from an empty stock counts as an empty turn (S-8).
- A hand ended by a player going out scores every hand's value; players without
  cards score 0, so all who went out on a 2 or a joker score 0 (S-10).
- `match_rank` is a JSON boolean; `target` is 1 to 10000.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from domain import common_events, engine
from domain.cards import JOKER, SUITS, canonical_deck, rank_of, suit_of
from domain.common_events import StockReshuffled
from domain.engine import Game, GameConfig, GameEnded, register, replaced
from domain.errors import InvalidInput, RuleViolation
from domain.events import Event
from domain.hands import replaced_at, without
from domain.options import CARD_LIST, TEXT, Action, ActionSpec, FieldSpec, OptionSpec
from domain.scores import lowest_totals as winners_of  # S-11 / C-7

DECKS = 4
BASE_JOKERS = 8
CARD_VALUES: Mapping[str, int] = {JOKER: 50, "2": 20, "A": 15, "10": 10, "J": 10, "Q": 10, "K": 10} | {
    str(v): 5 for v in range(3, 10)
}
PENDING_ADDS: Mapping[str, int] = {"2": 2, JOKER: 5}
CLOCKWISE, COUNTERCLOCKWISE = 1, -1
CHOOSE_SUIT, PLAY, HAND_OVER, BETWEEN_ROUNDS = "choose_suit", "play", "hand_over", "between_rounds"
FINISHED = engine.FINISHED
# Why a hand ended (RoundScored.reason).
WENT_OUT, DRAW_TAKEN, ONE_LEFT, BLOCKED = "went_out", "draw_taken", "one_left", "blocked"
_ORDER = {card: index for index, card in enumerate(canonical_deck(1, 1))}


# ---------------------------------------------------------------- options


@dataclasses.dataclass(frozen=True)
class SwitchOption(OptionSpec):
    """An on/off house rule: a JSON boolean (OptionSpec itself knows integers and choices)."""

    def check(self, value: Any) -> Any:
        """`value` if it is true or false, else InvalidInput."""
        if not isinstance(value, bool):
            raise InvalidInput("invalid_option", f"option '{self.name}' must be true or false")
        return value


# ---------------------------------------------------------------- state


@dataclasses.dataclass(frozen=True)
class SwitchState:
    """A Switch game between events. Hands keep their cards in the order received."""

    config: GameConfig
    round: int = 0
    dealer: int = 0
    phase: str = BETWEEN_ROUNDS
    stock: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    hands: tuple[tuple[str, ...], ...] = ()
    turn: int = 0
    direction: int = CLOCKWISE
    suit: str | None = None
    pending: int = 0
    drawn: str | None = None
    empty_turns: int = 0
    reshuffles: int = 0
    ended: str | None = None
    round_scores: tuple[tuple[int, ...], ...] = ()
    totals: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()

    @property
    def players(self) -> int:
        return self.config.players

    @property
    def top(self) -> str:
        """The top card of the discard pile."""
        return self.discard[-1]

    def holders(self) -> tuple[int, ...]:
        """Seats that still hold cards."""
        return tuple(seat for seat, hand in enumerate(self.hands) if hand)


# ---------------------------------------------------------------- events


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoundStarted(common_events.RoundStarted):
    """S-2 / S-3: the hand is dealt (derived from the seed); the start card is public."""

    start_card: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class SuitChosen(Event):
    """S-3: on a `J` start card the first player named the suit."""

    suit: str

    def to_action(self) -> dict[str, Any]:
        return {"type": "choose_suit", "suit": self.suit}


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardsPlayed(Event):
    """S-4 / S-5 / S-7: one card, or two onto a pending draw; `suit` is named with a `J`."""

    cards: tuple[str, ...]
    suit: str | None = None

    def to_action(self) -> dict[str, Any]:
        action: dict[str, Any] = {"type": "play", "cards": list(self.cards)}
        if self.suit is not None:
            action["suit"] = self.suit
        return action


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardDrawn(Event):
    """S-6: the drawer took `count` (1, or 0 when there was no card at all) from the stock."""

    count: int

    def to_action(self) -> dict[str, Any]:
        return {"type": "draw"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class PendingDrawTaken(Event):
    """S-7: the player facing a pending draw took it: `count` cards (fewer if the stock ran dry, S-8)."""

    pending: int
    count: int

    def to_action(self) -> dict[str, Any]:
        return {"type": "draw"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class LastHolderDrew(Event):
    """S-9 (rules version 2): the one player still holding cards took the pending draw before the hand
    ended: `count` cards (fewer if the stock ran dry, S-8)."""

    seat: int
    pending: int
    count: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class Passed(Event):
    """S-6: the player kept the playable card they drew; the turn ends."""

    def to_action(self) -> dict[str, Any]:
        return {"type": "pass"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoundScored(Event):
    """S-9 / S-10: the hand's scores (a hand's value, 0 when empty) and why it ended."""

    round: int
    scores: tuple[int, ...]
    went_out: tuple[int, ...]
    reason: str


# ---------------------------------------------------------------- cards and scoring


def card_value(card: str) -> int:
    """S-10."""
    return CARD_VALUES[rank_of(card)]


def hand_value(hand: Sequence[str]) -> int:
    """S-10: the sum of a hand's card values."""
    return sum(card_value(card) for card in hand)


def card_order(card: str) -> int:
    """C-3 position of a code: suits S H D C, ranks A..K, then the joker."""
    return _ORDER[card]


def switch_deck(options: Mapping[str, Any]) -> tuple[str, ...]:
    """S-1: four decks, 8 jokers plus `extra_jokers`, then `extra_twos` twos in suit order S H D C."""
    twos = tuple("2" + SUITS[i % len(SUITS)] for i in range(options["extra_twos"]))
    return canonical_deck(DECKS, BASE_JOKERS + options["extra_jokers"], twos)


def can_stack(under: str, card: str) -> bool:
    """S-7: onto a 2 a 2 or a joker; onto a joker only a joker."""
    return card == JOKER or (rank_of(under) == "2" and rank_of(card) == "2")


class Table(Protocol):
    """What the play rules (`matches`, `plays`) read of a hand in progress: a SwitchState, or
    the expert's rollout table (domain/bots/switch_rollout.py)."""

    @property
    def config(self) -> GameConfig: ...
    @property
    def hands(self) -> Sequence[Sequence[str]]: ...
    @property
    def suit(self) -> str | None: ...
    @property
    def pending(self) -> int: ...
    @property
    def drawn(self) -> str | None: ...
    @property
    def top(self) -> str: ...


def matches(state: Table, card: str) -> bool:
    """S-4 / S-5: may `card` be played now, with no pending draw?"""
    if card[0] == "J" or state.suit is None or card[-1] == state.suit:  # C-1: a J or the joker, or the suit
        return True
    return bool(state.config.options["match_rank"]) and rank_of(card) == rank_of(state.top)


# ---------------------------------------------------------------- the game


class Switch(Game[SwitchState]):
    """Switch as pure functions."""

    id = "switch"
    name = "Switch"
    min_players = 4
    max_players = 10
    players_rule = "S-1"
    end_rule = "S-11"
    round_scored = RoundScored
    # 3: C-9, a game ends when it has room for no more than its closing events (max_events)
    # 2: S-9, the last player holding cards takes the pending draw before the hand ends
    rules_version = 3
    event_limit_since = 3
    bots = "domain.bots.switch"
    options = (
        OptionSpec("hand_size", "cards dealt to each player (S-2)", 7, 7, 15),
        SwitchOption("match_rank", "house rule: a card may also match the top card's rank (S-4)", False),
        OptionSpec("extra_jokers", "jokers added to the 8 of the four decks (S-1)", 0, 0, 8),
        OptionSpec("extra_twos", "twos added, in suit order S H D C (S-1)", 0, 0, 8),
        OptionSpec("target", "a total that ends the game after the hand (S-11)", 500, 1, 10000),
    )
    actions = (
        ActionSpec(
            "play",
            (FieldSpec("cards", CARD_LIST), FieldSpec("suit", TEXT, required=False, nullable=True, choices=SUITS)),
        ),
        ActionSpec("choose_suit", (FieldSpec("suit", TEXT, choices=SUITS),)),
        ActionSpec("draw"),
        ActionSpec("pass"),
    )
    events = (
        RoundStarted,
        SuitChosen,
        CardsPlayed,
        StockReshuffled,
        CardDrawn,
        PendingDrawTaken,
        LastHolderDrew,
        Passed,
        RoundScored,
        GameEnded,
    )

    # ---- setup

    def canonical_deck(self, players: int, options: Mapping[str, Any]) -> tuple[str, ...]:
        return switch_deck(options)

    def initial_state(self, config: GameConfig) -> SwitchState:
        return SwitchState(config=config, totals=(0,) * config.players)

    # ---- whose turn

    def to_act(self, state: SwitchState) -> tuple[int, ...]:
        return (state.turn,) if state.phase in (CHOOSE_SUIT, PLAY) else ()

    def is_finished(self, state: SwitchState) -> bool:
        return state.phase == FINISHED

    # ---- decide

    def decide(self, state: SwitchState, seat: int, action: Action) -> list[Event]:
        if seat not in self.to_act(state):
            raise RuleViolation("not_your_turn", f"it is seat {state.turn}'s turn", "C-2")
        if action.type == "choose_suit":
            return [_decide_choose_suit(state, seat, action["suit"])]
        if state.phase == CHOOSE_SUIT:
            raise RuleViolation("choose_suit_first", "the start card is a J: name the suit first", "S-3")
        if action.type == "play":
            return [_decide_play(state, seat, tuple(action["cards"]), action["suit"])]
        if action.type == "draw":
            return _decide_draw(state, seat)
        return [_decide_pass(state, seat)]

    # ---- system steps

    def automatic(self, state: SwitchState) -> Event | None:
        if state.phase == HAND_OVER:
            return _last_draw_step(state) if _last_holder_draws(state) else _scored(state)
        if state.phase != BETWEEN_ROUNDS:
            return None
        if state.round and max(state.totals) >= state.config.options["target"]:
            return GameEnded(totals=state.totals, winners=winners_of(state.totals))
        next_round = state.round + 1
        deck = _round_deck(state.config, next_round)
        start = deck[state.players * state.config.options["hand_size"]]
        return RoundStarted(round=next_round, dealer=(next_round - 1) % state.players, start_card=start)

    # ---- evolve

    def evolve(self, state: SwitchState, event: Event) -> SwitchState:
        if isinstance(event, RoundStarted):
            return _deal(state, event)
        if isinstance(event, SuitChosen):
            assert state.phase == CHOOSE_SUIT
            return replaced(state, suit=event.suit, phase=PLAY)
        if isinstance(event, CardsPlayed):
            return _apply_play(state, event)
        if isinstance(event, StockReshuffled):
            return _apply_reshuffle(state, event)
        if isinstance(event, CardDrawn):
            return _apply_draw(state, event)
        if isinstance(event, PendingDrawTaken):
            return _apply_pending_taken(state, event)
        if isinstance(event, LastHolderDrew):
            return _apply_last_draw(state, event)
        if isinstance(event, Passed):
            assert state.drawn is not None
            return _end_turn(replaced(state, drawn=None), empty=False)
        if isinstance(event, RoundScored):
            return _apply_scored(state, event)
        raise AssertionError(f"switch cannot apply {event.type_name()}")

    # ---- what a seat may do

    def legal_actions(self, state: SwitchState, seat: int) -> list[dict[str, Any]]:
        """Every action `seat` may send now: each distinct card code once (C-1), a J with each suit."""
        if seat not in self.to_act(state):
            return []
        if state.phase == CHOOSE_SUIT:
            return [{"type": "choose_suit", "suit": suit} for suit in SUITS]
        return [*plays(state, seat), {"type": "pass" if state.drawn is not None else "draw"}]

    # ---- views

    def public_view(self, state: SwitchState) -> dict[str, Any]:
        return {
            "round": state.round,
            "phase": state.phase,
            "scores": list(state.totals),
            "table": _table(state),
            "result": _result(state),
        }

    def seat_view(self, state: SwitchState, seat: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
        """The seat's hand and what of it may be played now (every card some legal play plays, once each,
        in C-3 order: none once the game has ended); the engine adds `legal`."""
        hand = state.hands[seat] if state.hands else ()
        return {
            "hand": sorted(hand, key=card_order),
            "hand_value": hand_value(hand),
            "drawn": state.drawn if seat == state.turn else None,
            "playable": sorted({card for a in legal if a["type"] == "play" for card in a["cards"]}, key=card_order),
        }

    def full_view(self, state: SwitchState) -> dict[str, Any]:
        table = _table(state)
        table["hands"] = [sorted(hand, key=card_order) for hand in state.hands]
        table["stock"] = list(state.stock)
        table["drawn"] = state.drawn
        return {
            "round": state.round,
            "phase": state.phase,
            "scores": list(state.totals),
            "table": table,
            "result": _result(state),
        }


SWITCH = register(Switch())


# ---------------------------------------------------------------- decide helpers


def _decide_choose_suit(state: SwitchState, seat: int, suit: str) -> Event:
    if state.phase != CHOOSE_SUIT:
        raise RuleViolation("no_suit_to_choose", "a suit is chosen only on a J start card", "S-3")
    return SuitChosen(actor=seat, suit=suit)


def _decide_play(state: SwitchState, seat: int, cards: tuple[str, ...], suit: str | None) -> Event:
    if not 1 <= len(cards) <= 2:
        raise InvalidInput("invalid_request", "'play.cards' holds one card, or two onto a pending draw (S-7)")
    _check_held(state.hands[seat], cards)
    if state.drawn is not None:
        if cards != (state.drawn,):
            raise RuleViolation("must_play_drawn_card", f"after drawing, play {state.drawn} or pass", "S-6")
    elif state.pending:
        _check_stack(state, cards)
    elif len(cards) != 1:
        raise RuleViolation("one_card_only", "two cards are played only onto a pending draw", "S-7")
    elif not matches(state, cards[0]):
        raise RuleViolation("does_not_match", f"{cards[0]} does not match the suit {state.suit}", "S-4")
    _check_named_suit(cards, suit)
    return CardsPlayed(actor=seat, cards=cards, suit=suit)


def _check_held(hand: tuple[str, ...], cards: tuple[str, ...]) -> None:
    missing = Counter(cards) - Counter(hand)
    if missing:
        raise RuleViolation("card_not_in_hand", f"you do not hold {', '.join(sorted(missing))}", "S-4")


def _check_stack(state: SwitchState, cards: tuple[str, ...]) -> None:
    """S-7: each card onto the one before it, the first onto the top of the pile."""
    under = state.top
    for card in cards:
        if rank_of(card) not in PENDING_ADDS:
            raise RuleViolation(
                "pending_draw", f"facing a pending draw of {state.pending}: add a 2 or a joker, or draw", "S-7"
            )
        if not can_stack(under, card):
            raise RuleViolation("joker_only_on_joker", "onto a joker only a joker may be added", "S-7")
        under = card


def _check_named_suit(cards: tuple[str, ...], suit: str | None) -> None:
    is_jack = rank_of(cards[-1]) == "J"
    if is_jack and suit is None:
        raise RuleViolation("suit_required", "a J names the new suit: add 'suit'", "S-4")
    if not is_jack and suit is not None:
        raise RuleViolation("suit_not_allowed", "only a J names a suit", "S-4")


def _decide_draw(state: SwitchState, seat: int) -> list[Event]:
    if state.drawn is not None:
        raise RuleViolation("already_drawn", f"play the drawn {state.drawn} or pass", "S-6")
    need = state.pending or 1
    events: list[Event] = []
    available = len(state.stock)
    if available < need and len(state.discard) > 1:
        events.append(StockReshuffled(reshuffle=state.reshuffles + 1))
        available += len(state.discard) - 1
    count = min(need, available)
    if state.pending:
        events.append(PendingDrawTaken(actor=seat, pending=state.pending, count=count))
    else:
        events.append(CardDrawn(actor=seat, count=count))
    return events


def _decide_pass(state: SwitchState, seat: int) -> Event:
    if state.drawn is None:
        raise RuleViolation("nothing_drawn", "pass only after drawing a card you may play; else play or draw", "S-6")
    return Passed(actor=seat)


def plays(state: Table, seat: int) -> list[dict[str, Any]]:
    """The play actions of `seat`, whose turn it is (S-4 ... S-7): the drawn card, a stack on a
    pending draw, or each distinct matching card in C-3 order."""
    if state.drawn is not None:
        return _play_bodies((state.drawn,))
    hand = state.hands[seat]
    if state.pending:
        return _stack_bodies(state.top, hand)
    playable = sorted({card for card in set(hand) if matches(state, card)}, key=card_order)
    return [body for card in playable for body in _play_bodies((card,))]


def _play_bodies(cards: tuple[str, ...]) -> list[dict[str, Any]]:
    """The request bodies that play `cards`: with a J on top, one per suit."""
    if rank_of(cards[-1]) == "J":
        return [{"type": "play", "cards": list(cards), "suit": suit} for suit in SUITS]
    return [{"type": "play", "cards": list(cards)}]


def _stack_bodies(top: str, hand: Sequence[str]) -> list[dict[str, Any]]:
    """S-7: every one- or two-card addition to the pending draw that the hand allows."""
    held = Counter(hand)
    firsts = sorted((card for card in held if can_stack(top, card)), key=card_order)
    bodies: list[dict[str, Any]] = []
    for first in firsts:
        bodies.append({"type": "play", "cards": [first]})
        left = held - Counter([first])
        for second in sorted((c for c in left if can_stack(first, c)), key=card_order):
            bodies.append({"type": "play", "cards": [first, second]})
    return bodies


def _last_holder_draws(state: SwitchState) -> bool:
    """S-9 (rules version 2): the hand ended with one player holding cards under a pending draw,
    which that player takes first. Version 1 scored the hand without the draw."""
    return state.config.rules_version >= 2 and state.ended == ONE_LEFT and state.pending > 0


def _last_draw_step(state: SwitchState) -> Event:
    """S-9 / S-8: the last holder's draw; first a reshuffle if the stock cannot cover it."""
    if len(state.stock) < state.pending and len(state.discard) > 1:
        return StockReshuffled(reshuffle=state.reshuffles + 1)
    (seat,) = state.holders()
    return LastHolderDrew(seat=seat, pending=state.pending, count=min(state.pending, len(state.stock)))


def _scored(state: SwitchState) -> RoundScored:
    scores = tuple(hand_value(hand) for hand in state.hands)
    went_out = tuple(seat for seat, hand in enumerate(state.hands) if not hand)
    assert state.ended is not None
    return RoundScored(round=state.round, scores=scores, went_out=went_out, reason=state.ended)


# ---------------------------------------------------------------- evolve helpers


def _round_deck(config: GameConfig, round_no: int) -> tuple[str, ...]:
    return config.round_deck(round_no, switch_deck(config.options))


def _deal(state: SwitchState, event: RoundStarted) -> SwitchState:
    """S-2: one card at a time clockwise from left of the dealer; then the start card (S-3)."""
    config = state.config
    deck = _round_deck(config, event.round)
    n, size = config.players, config.options["hand_size"]
    hands: list[list[str]] = [[] for _ in range(n)]
    for i in range(n * size):
        hands[(event.dealer + 1 + i) % n].append(deck[i])
    start = deck[n * size]
    assert start == event.start_card, "the start card is not the deck's"
    dealt = replaced(
        state,
        round=event.round,
        dealer=event.dealer,
        phase=PLAY,
        hands=tuple(tuple(hand) for hand in hands),
        discard=(start,),
        stock=deck[n * size + 1 :],
        turn=(event.dealer + 1) % n,
        direction=CLOCKWISE,
        suit=suit_of(start),
        pending=0,
        drawn=None,
        empty_turns=0,
        reshuffles=0,
        ended=None,
    )
    return _start_card_effect(dealt, rank_of(start))


def _start_card_effect(state: SwitchState, rank: str) -> SwitchState:
    """S-3: the start card acts on the first player, left of the dealer."""
    n = state.players
    if rank == "K":
        return replaced(state, direction=COUNTERCLOCKWISE, turn=(state.dealer - 1) % n)
    if rank == "8":
        return replaced(state, turn=(state.dealer + 2) % n)
    if rank == "J":
        return replaced(state, phase=CHOOSE_SUIT, suit=None)
    if rank in PENDING_ADDS:
        return replaced(state, pending=PENDING_ADDS[rank])
    return state


def _apply_play(state: SwitchState, event: CardsPlayed) -> SwitchState:
    """S-5 / S-7 / S-9: the cards go on the pile and act; the hand may end."""
    seat = int(event.actor)
    assert seat == state.turn and state.phase == PLAY
    suit, pending, direction = state.suit, state.pending, state.direction
    for card in event.cards:
        rank = rank_of(card)
        pending += PENDING_ADDS.get(rank, 0)
        if rank == "J":
            suit = event.suit
        elif rank != JOKER:
            suit = suit_of(card)
        if rank == "K":
            direction = -direction
    played = replaced(
        state,
        hands=replaced_at(state.hands, seat, without(state.hands[seat], event.cards)),
        discard=state.discard + event.cards,
        suit=suit,
        pending=pending,
        direction=direction,
        drawn=None,
        empty_turns=0,
    )
    last = rank_of(event.cards[-1])
    if not played.hands[seat] and last not in PENDING_ADDS:
        return replaced(played, phase=HAND_OVER, ended=WENT_OUT)
    if len(played.holders()) < 2:
        return replaced(played, phase=HAND_OVER, ended=ONE_LEFT)
    return replaced(played, turn=_next_holder(played, seat, skip=1 if last == "8" else 0))


def _next_holder(state: SwitchState, after: int, skip: int = 0) -> int:
    """The next seat in the direction of play that holds cards, passing `skip` such seats (S-5, S-9)."""
    seat = after
    for _ in range(skip + 1):
        for _ in range(state.players):
            seat = (seat + state.direction) % state.players
            if state.hands[seat]:
                break
    return seat


def _end_turn(state: SwitchState, empty: bool) -> SwitchState:
    """The turn passes on; S-8: a turn ended by an empty draw of every holder in a row blocks the hand."""
    empty_turns = state.empty_turns + 1 if empty else 0
    if empty_turns >= len(state.holders()):
        return replaced(state, empty_turns=empty_turns, phase=HAND_OVER, ended=BLOCKED)
    return replaced(state, empty_turns=empty_turns, turn=_next_holder(state, state.turn))


def _take(state: SwitchState, seat: int, count: int) -> SwitchState:
    """`count` cards from the top of the stock into the seat's hand."""
    assert count <= len(state.stock), "drawing more cards than the stock holds"
    hand = state.hands[seat] + state.stock[:count]
    return replaced(state, hands=replaced_at(state.hands, seat, hand), stock=state.stock[count:])


def _apply_draw(state: SwitchState, event: CardDrawn) -> SwitchState:
    """S-6: a playable drawn card waits for play or pass; otherwise the turn ends."""
    seat = int(event.actor)
    assert seat == state.turn and state.pending == 0 and state.drawn is None
    assert event.count == min(1, len(state.stock)), "a draw takes the top card when there is one"
    if event.count == 0:
        return _end_turn(state, empty=True)
    card = state.stock[0]
    taken = _take(state, seat, 1)
    if matches(taken, card):
        return replaced(taken, drawn=card)
    return _end_turn(taken, empty=False)


def _apply_pending_taken(state: SwitchState, event: PendingDrawTaken) -> SwitchState:
    """S-7 / S-9: the pending draw is taken; the hand ends if someone went out on it."""
    seat = int(event.actor)
    assert seat == state.turn and event.pending == state.pending > 0
    assert event.count == min(state.pending, len(state.stock)), "a pending draw takes what the stock holds"
    taken = replaced(_take(state, seat, event.count), pending=0)
    if len(taken.holders()) < taken.players:
        return replaced(taken, phase=HAND_OVER, ended=DRAW_TAKEN)
    return _end_turn(taken, empty=event.count == 0)


def _apply_last_draw(state: SwitchState, event: LastHolderDrew) -> SwitchState:
    """S-9 (rules version 2): the last holder takes the pending draw; the hand is then scored."""
    assert _last_holder_draws(state) and state.holders() == (event.seat,) and event.pending == state.pending
    assert event.count == min(state.pending, len(state.stock)), "the last draw takes what the stock holds"
    return replaced(_take(state, event.seat, event.count), pending=0)


def _apply_reshuffle(state: SwitchState, event: StockReshuffled) -> SwitchState:
    """S-8: the pile but its top card, shuffled with the C-4 reshuffle label, goes under the stock."""
    assert event.reshuffle == state.reshuffles + 1 and len(state.discard) > 1
    fresh = state.config.reshuffle(state.round, event.reshuffle, state.discard[:-1])
    return replaced(state, stock=state.stock + fresh, discard=state.discard[-1:], reshuffles=event.reshuffle)


def _apply_scored(state: SwitchState, event: RoundScored) -> SwitchState:
    """S-10: every hand's value is added to its total."""
    assert state.phase == HAND_OVER
    totals = tuple(t + s for t, s in zip(state.totals, event.scores, strict=True))
    return replaced(state, totals=totals, round_scores=state.round_scores + (event.scores,), phase=BETWEEN_ROUNDS)


# ---------------------------------------------------------------- view helpers


def _table(state: SwitchState) -> dict[str, Any]:
    in_play = state.phase in (CHOOSE_SUIT, PLAY)
    options = state.config.options
    return {
        "dealer": state.dealer,
        "turn": state.turn if in_play else None,
        "direction": "clockwise" if state.direction == CLOCKWISE else "counterclockwise",
        "top_card": state.discard[-1] if state.discard else None,
        "suit": state.suit,
        "pending_draw": state.pending,
        "hand_sizes": [len(hand) for hand in state.hands],
        "out": [seat for seat, hand in enumerate(state.hands) if not hand] if state.hands else [],
        "stock_size": len(state.stock),
        "discard": list(state.discard),
        "drawn_by": state.turn if state.drawn is not None else None,
        "round_scores": [list(scores) for scores in state.round_scores],
        "hand_size": options["hand_size"],
        "match_rank": options["match_rank"],
        "target": options["target"],
    }


def _result(state: SwitchState) -> dict[str, Any] | None:
    if state.phase != FINISHED:
        return None
    return {"totals": list(state.totals), "winners": list(state.winners)}
