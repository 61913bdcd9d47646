"""Rommé with the Queen of Spades (`romme`): R-1 ... R-23 of rules/romme.md.

A round: the player right of the dealer cuts (R-3) and takes the lucky grab (R-4);
the deal skips a full hand (R-5); then turns of draw (R-6) or take the discard pile
with a new meld (R-7, R-8), melds, lay-offs and joker swaps on one's own melds
(R-9 ... R-16), and a discard (R-11). Discarding the last card goes out face down
(R-19); an empty stock that the player cannot replace with the discard pile ends the
round with no winner (R-21). The game ends after a round at the mark (R-22), or
after the tie rounds that follow it (R-23).

Meld validity, lay-off, swap and the enumeration of melds are in `romme_melds`.

Choices this module makes where the rules leave room (each documented where it acts):
- Going out (R-11, R-19): the face-down card is not named in the public event
  (`WentOut`); it is shown only in the full view of a finished game. As the last card
  is the only one it can be, `discard {}` without `card` is accepted for it too.
- Taking the discard pile (R-7) with a set of a rank the player already has a set of
  is a new meld that then joins the old set (R-12); the joined set must be valid.
- `lay_off` onto a run without `end`: the high end when the card fits there, else the
  low end. `end` on a set is refused.
- R-23: once a round has ended with someone at the mark, the game ends after the first
  round after which one player leads alone, even if the totals have fallen back.
- At the end of a round the scoring (meld points and hand points per seat) is public;
  the cards left in the hands are not shown.
- `legal_actions` lists every cut position, draw, lay-off, swap and discard, and a
  capped canonical list of melds and of ways to take the discard pile (see
  `MELD_CAP`); `decide` accepts every valid meld, listed or not.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from domain import common_events, engine
from domain import romme_melds as rm
from domain.cards import JOKER, canonical_deck, is_card
from domain.engine import Game, GameConfig, GameEnded, register, replaced
from domain.errors import InvalidInput, RuleViolation
from domain.events import Event
from domain.hands import replaced_at, without
from domain.options import CARD, CARD_LIST, INT, OBJECT, TEXT, Action, ActionSpec, FieldSpec, OptionSpec
from domain.scores import highest_totals as _winners

DECK_COPIES, JOKERS = 2, 6
DECK_SIZE = 52 * DECK_COPIES + JOKERS
HAND_SIZE = 15
LUCKY = frozenset({"QS", JOKER})
MELD_CAP = 400
"""`legal_actions` lists at most this many `meld` and this many `take_discard` actions: first
the melds of natural cards (runs with jokers only in their gaps), longest first, then every
three-card meld. Any meld that is possible at all has a three-card one among them."""

BETWEEN_ROUNDS, CUT, DEAL, PLAY, OVER = "between_rounds", "cut", "deal", "play", "round_over"
FINISHED = engine.FINISHED
WENT_OUT, STOCK_EMPTY = "went_out", "stock_empty"


# ---------------------------------------------------------------- options


@dataclasses.dataclass(frozen=True)
class FlagOption(OptionSpec):
    """A house rule that is on or off (JSON true/false)."""

    def check(self, value: Any) -> Any:
        if not isinstance(value, bool):
            raise InvalidInput("invalid_option", f"option '{self.name}' must be true or false")
        return value


# ---------------------------------------------------------------- state


@dataclasses.dataclass(frozen=True)
class LaidMeld:
    """A meld on the table: its public id, owner, kind and cards (a run in order, R-13)."""

    id: int
    seat: int
    kind: str
    cards: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class RoundResult:
    """How the last round ended and was scored (R-19 ... R-21)."""

    round: int
    winner: int | None
    reason: str
    doubled: bool
    meld_points: tuple[int, ...]
    hand_points: tuple[int, ...]
    scores: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class RommeState:
    """A Rommé game between events."""

    config: GameConfig
    round: int = 0
    dealer: int = 0
    phase: str = BETWEEN_ROUNDS
    deck: tuple[str, ...] = ()  # the round's deck before the cut, top first (secret)
    cut_position: int | None = None
    lifted: tuple[str, ...] = ()  # after the cut, until the deal: the top `p` cards
    lower: tuple[str, ...] = ()
    grabbed: tuple[str, ...] = ()
    grab_done: bool = False
    stock: tuple[str, ...] = ()  # top first
    discard: tuple[str, ...] = ()  # bottom first
    hands: tuple[tuple[str, ...], ...] = ()  # each in C-3 order
    melds: tuple[LaidMeld, ...] = ()
    next_meld: int = 1
    out: tuple[str, ...] = ()  # jokers swapped out of the game
    face_down: tuple[str, ...] = ()  # the last discard of the player who went out
    turn: int = 0
    drawn: bool = False
    fresh: bool = True  # the player to act had no meld when the turn began
    went_out: int | None = None
    doubled: bool = False
    round_scores: tuple[tuple[int, ...], ...] = ()
    totals: tuple[int, ...] = ()
    last_round: RoundResult | None = None
    mark_reached: bool = False
    winners: tuple[int, ...] = ()

    @property
    def players(self) -> int:
        return self.config.players

    @property
    def cutter(self) -> int:
        """R-3: the player right of the dealer, (dealer - 1) mod n (C-2)."""
        return (self.dealer - 1) % self.players

    def meld(self, meld_id: int) -> LaidMeld | None:
        return next((m for m in self.melds if m.id == meld_id), None)

    def own_melds(self, seat: int) -> tuple[LaidMeld, ...]:
        return tuple(m for m in self.melds if m.seat == seat)

    def own_set(self, seat: int, rank: str) -> LaidMeld | None:
        """R-12: a player has at most one set per rank."""
        return next((m for m in self.own_melds(seat) if m.kind == rm.SET and rm.set_rank(m.cards) == rank), None)


# ---------------------------------------------------------------- events


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoundStarted(common_events.RoundStarted):
    """A round's deck is ready (from the seed or a stacked deck, not recorded); the cutter is due (R-3)."""

    cutter: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class DeckCut(Event):
    """R-3: the cutter lifted the top `position` cards."""

    position: int

    def to_action(self) -> dict[str, Any]:
        return {"type": "cut", "position": self.position}


@dataclasses.dataclass(frozen=True, kw_only=True)
class LuckyGrab(Event):
    """R-4: the QS and jokers at the cut went to the cutter's hand, face up for all to see."""

    seat: int
    cards: tuple[str, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class HandsDealt(Event):
    """R-5: everyone holds 15 cards; the rest is the stock."""

    stock_size: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardDrawn(Event):
    """R-6: the top of the stock went to the drawer's hand (the card is not recorded)."""

    def to_action(self) -> dict[str, Any]:
        return {"type": "draw"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class DiscardTaken(Event):
    """R-7: the top discard `card` was laid at once in a new meld; the rest of the pile went to the hand."""

    meld: int
    kind: str
    cards: tuple[str, ...]
    card: str
    merged: bool

    def to_action(self) -> dict[str, Any]:
        return {"type": "take_discard", "meld": {"kind": self.kind, "cards": list(self.cards)}}


@dataclasses.dataclass(frozen=True, kw_only=True)
class MeldLaid(Event):
    """R-12 / R-13: a new meld; `merged` when a set joined the player's set of its rank."""

    meld: int
    kind: str
    cards: tuple[str, ...]
    merged: bool

    def to_action(self) -> dict[str, Any]:
        return {"type": "meld", "kind": self.kind, "cards": list(self.cards)}


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardLaidOff(Event):
    """R-15: one card onto one of the player's own melds (`end` for runs)."""

    meld: int
    card: str
    end: str | None

    def to_action(self) -> dict[str, Any]:
        action: dict[str, Any] = {"type": "lay_off", "meld": self.meld, "card": self.card}
        if self.end is not None:
            action["end"] = self.end
        return action


@dataclasses.dataclass(frozen=True, kw_only=True)
class JokerSwapped(Event):
    """R-16: `card` replaced the joker at `index` of the meld; the joker left the game."""

    meld: int
    card: str
    index: int

    def to_action(self) -> dict[str, Any]:
        return {"type": "swap_joker", "meld": self.meld, "card": self.card}


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardDiscarded(Event):
    """R-11: a card face up onto the discard pile; the turn passes on."""

    card: str

    def to_action(self) -> dict[str, Any]:
        return {"type": "discard", "card": self.card}


@dataclasses.dataclass(frozen=True, kw_only=True)
class WentOut(Event):
    """R-11 / R-19: the last card was discarded face down (not named: nobody sees it)."""

    def to_action(self) -> dict[str, Any]:
        return {"type": "discard"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoundScored(Event):
    """R-19 ... R-21: each seat's melds minus hand, doubled for a hand aus (R-20)."""

    round: int
    winner: int | None
    reason: str
    doubled: bool
    meld_points: tuple[int, ...]
    hand_points: tuple[int, ...]
    scores: tuple[int, ...]


# ---------------------------------------------------------------- small helpers


def _refuse(code: str, detail: str, rule: str) -> RuleViolation:
    return RuleViolation(code, detail, rule)


def _remove(hand: Sequence[str], cards: Iterable[str]) -> tuple[str, ...]:
    return rm.sort_cards(without(hand, cards))


def _missing(hand: Sequence[str], cards: Iterable[str]) -> list[str]:
    have = Counter(hand)
    need = Counter(cards)
    return sorted((c for c, n in need.items() if have[c] < n), key=rm.card_key)


def all_cards(state: RommeState) -> Counter[str]:
    """R-17: the cards in every place of the round (for checks; every round holds all 110)."""
    places: list[Iterable[str]] = [
        state.deck,
        state.lifted,
        state.lower,
        state.stock,
        state.discard,
        state.out,
        state.face_down,
        *state.hands,
        *(m.cards for m in state.melds),
    ]
    total: Counter[str] = Counter()
    for place in places:
        total.update(place)
    return total


def at_mark(options: Mapping[str, Any], total: int) -> bool:
    """R-22: 1000 (option `target`) or more; with `strict_1000` more than the mark."""
    target = int(options["target"])
    return total > target if options["strict_1000"] else total >= target


# ---------------------------------------------------------------- the game


MELD_FIELDS = (FieldSpec("kind", TEXT, choices=rm.KINDS), FieldSpec("cards", CARD_LIST))
"""A new meld: a `meld` action, and the `meld` of take_discard (checked by _parse_meld)."""


class Romme(Game[RommeState]):
    """Rommé with the Queen of Spades as pure functions."""

    id = "romme"
    name = "Rommé with the Queen of Spades"
    min_players = 2
    max_players = 4
    players_rule = "R-1"
    end_rule = "R-22"
    rules_version = 2  # 2: C-9, a game ends when it has room for no more than its closing events (max_events)
    event_limit_since = 2
    bots = "domain.bots.romme"
    round_scored = RoundScored
    lowest_wins = False  # the most points wins
    options = (
        OptionSpec("target", "points that end the game after a round (R-22)", 1000, 1, 100_000),
        FlagOption("hand_aus_doubles", "house rule: going out in one turn without earlier melds doubles (R-20)", False),
        FlagOption("strict_1000", "house rule: the game ends only above the target, not at it (R-22)", False),
    )
    actions = (
        ActionSpec("cut", (FieldSpec("position", INT),)),
        ActionSpec("draw"),
        ActionSpec("take_discard", (FieldSpec("meld", OBJECT, fields=MELD_FIELDS),)),
        ActionSpec("meld", MELD_FIELDS),
        ActionSpec(
            "lay_off",
            (
                FieldSpec("meld", INT),
                FieldSpec("card", CARD),
                FieldSpec("end", TEXT, required=False, nullable=True, choices=rm.ENDS),
            ),
        ),
        ActionSpec("swap_joker", (FieldSpec("meld", INT), FieldSpec("card", CARD))),
        ActionSpec("discard", (FieldSpec("card", CARD, required=False),)),
    )
    events = (
        RoundStarted,
        DeckCut,
        LuckyGrab,
        HandsDealt,
        CardDrawn,
        DiscardTaken,
        MeldLaid,
        CardLaidOff,
        JokerSwapped,
        CardDiscarded,
        WentOut,
        RoundScored,
        GameEnded,
    )

    # ---- setup

    def canonical_deck(self, players: int, options: Mapping[str, Any]) -> tuple[str, ...]:
        """R-1: two 52-card decks, then six jokers (C-3)."""
        return canonical_deck(copies=DECK_COPIES, jokers=JOKERS)

    def initial_state(self, config: GameConfig) -> RommeState:
        return RommeState(config=config, totals=(0,) * config.players)

    # ---- whose turn

    def to_act(self, state: RommeState) -> tuple[int, ...]:
        if state.phase == CUT:
            return (state.cutter,)
        if state.phase == PLAY:
            return (state.turn,)
        return ()

    def is_finished(self, state: RommeState) -> bool:
        return state.phase == FINISHED

    # ---- decide

    def decide(self, state: RommeState, seat: int, action: Action) -> list[Event]:
        if state.phase == CUT:
            return [_decide_cut(state, seat, action)]
        if action.type == "cut":
            raise _refuse("wrong_phase", "the cut is made once, before the deal", "R-3")
        if state.phase != PLAY:
            raise _refuse("wrong_phase", "nobody can act while the round is dealt or scored", "R-3")
        if seat != state.turn:
            raise _refuse("not_your_turn", f"it is seat {state.turn}'s turn", "C-2")
        hand = state.hands[seat]
        if action.type == "draw":
            return [_decide_draw(state, seat)]
        if action.type == "take_discard":
            return [_decide_take(state, seat, hand, action["meld"])]
        if not state.drawn:
            raise _refuse("must_draw_first", "draw from the stock or take the discard pile first", "R-6")
        if action.type == "meld":
            return [_decide_meld(state, seat, hand, action["kind"], tuple(action["cards"]))]
        if action.type == "lay_off":
            return [_decide_lay_off(state, seat, hand, action["meld"], action["card"], action["end"])]
        if action.type == "swap_joker":
            return [_decide_swap(state, seat, hand, action["meld"], action["card"])]
        return [_decide_discard(seat, hand, action["card"])]

    # ---- system steps

    def automatic(self, state: RommeState) -> Event | None:
        if state.phase == BETWEEN_ROUNDS:
            if state.round > 0 and state.mark_reached:
                leaders = _winners(state.totals)
                if len(leaders) == 1:
                    return GameEnded(totals=state.totals, winners=leaders)
            number = state.round + 1
            dealer = (number - 1) % state.players
            return RoundStarted(round=number, dealer=dealer, cutter=(dealer - 1) % state.players)
        if state.phase == DEAL:
            if not state.grab_done:
                grab = lucky_grab(state.lifted)
                if grab:
                    return LuckyGrab(seat=state.cutter, cards=grab)
            dealt = HAND_SIZE * state.players - len(state.grabbed)
            return HandsDealt(stock_size=DECK_SIZE - len(state.grabbed) - dealt)
        if state.phase == OVER:
            return _score(state, state.went_out, WENT_OUT)
        if state.phase == PLAY and not state.drawn and not state.stock and not can_take_discard(state, state.turn):
            return _score(state, None, STOCK_EMPTY)
        return None

    # ---- evolve

    def evolve(self, state: RommeState, event: Event) -> RommeState:
        if isinstance(event, RoundStarted):
            return _start_round(state, event)
        if isinstance(event, DeckCut):
            assert state.phase == CUT and 1 <= event.position < len(state.deck)
            return replaced(
                state,
                phase=DEAL,
                cut_position=event.position,
                lifted=state.deck[: event.position],
                lower=state.deck[event.position :],
                deck=(),
            )
        if isinstance(event, LuckyGrab):
            return _apply_grab(state, event)
        if isinstance(event, HandsDealt):
            return _deal(state, event)
        if isinstance(event, CardDrawn):
            assert state.stock and not state.drawn
            seat = state.turn
            hand = rm.sort_cards((*state.hands[seat], state.stock[0]))
            return replaced(state, stock=state.stock[1:], hands=replaced_at(state.hands, seat, hand), drawn=True)
        if isinstance(event, DiscardTaken):
            return _apply_take(state, event)
        if isinstance(event, MeldLaid):
            seat = int(event.actor)
            state = _lay_meld(state, seat, event.meld, event.kind, event.cards)
            return replaced(state, hands=replaced_at(state.hands, seat, _remove(state.hands[seat], event.cards)))
        if isinstance(event, CardLaidOff):
            return _apply_lay_off(state, event)
        if isinstance(event, JokerSwapped):
            return _apply_swap(state, event)
        if isinstance(event, CardDiscarded):
            return _apply_discard(state, event)
        if isinstance(event, WentOut):
            seat = int(event.actor)
            assert len(state.hands[seat]) == 1 and state.drawn
            return replaced(
                state,
                face_down=state.hands[seat],
                hands=replaced_at(state.hands, seat, ()),
                phase=OVER,
                went_out=seat,
                doubled=bool(state.config.options["hand_aus_doubles"]) and state.fresh,
            )
        if isinstance(event, RoundScored):
            return _apply_scored(state, event)
        raise AssertionError(f"romme cannot apply {event.type_name()}")

    # ---- what a seat may do

    def legal_actions(self, state: RommeState, seat: int) -> list[dict[str, Any]]:
        if seat not in self.to_act(state):
            return []
        if state.phase == CUT:
            return [{"type": "cut", "position": p} for p in range(1, DECK_SIZE)]
        hand = state.hands[seat]
        if not state.drawn:
            actions: list[dict[str, Any]] = [{"type": "draw"}] if state.stock else []
            actions += [
                {"type": "take_discard", "meld": {"kind": kind, "cards": list(cards)}}
                for kind, cards in take_candidates(state, seat, MELD_CAP)
            ]
            return actions
        actions = [{"type": "meld", "kind": kind, "cards": list(cards)} for kind, cards in meld_candidates(state, seat)]
        actions += [
            {"type": "lay_off", "meld": meld_id, "card": card, **({"end": end} if end else {})}
            for meld_id, card, end in lay_offs(state, seat)
        ]
        actions += [{"type": "swap_joker", "meld": meld_id, "card": card} for meld_id, card in swaps(state, seat)]
        actions += [{"type": "discard", "card": card} for card in rm.sort_cards(set(hand))]
        return actions

    # ---- views

    def public_view(self, state: RommeState) -> dict[str, Any]:
        return {
            "round": state.round,
            "phase": state.phase,
            "scores": list(state.totals),
            "table": _table(state),
            "result": _result(state),
        }

    def seat_view(self, state: RommeState, seat: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
        hand = state.hands[seat] if state.hands else ()
        return {"hand": list(hand), "hand_size": len(hand), "hand_points": rm.points(hand)}

    def full_view(self, state: RommeState) -> dict[str, Any]:
        """Everything, so that every card of the round has its place (R-17): the public table plus
        each hand, the stock in order, the face-down card, and before the deal the undealt cards:
        `deck` (the round's deck, top first, until the cut), then `lifted` and `lower` (the two
        packets of the cut, top first, until the deal; the lucky grab has left `lifted`, R-4)."""
        table = _table(state)
        table["hands"] = [list(h) for h in state.hands]
        table["stock"] = list(state.stock)
        table["face_down"] = list(state.face_down)
        table["deck"] = list(state.deck)
        table["lifted"] = list(state.lifted)
        table["lower"] = list(state.lower)
        return {
            "round": state.round,
            "phase": state.phase,
            "scores": list(state.totals),
            "table": table,
            "result": _result(state),
        }


ROMME = register(Romme())


# ---------------------------------------------------------------- the round's start, cut, grab and deal


def lucky_grab(lifted: Sequence[str]) -> tuple[str, ...]:
    """R-4: from the bottom of the lifted packet up, the unbroken series of QS and jokers."""
    grab: list[str] = []
    for card in reversed(lifted):
        if card not in LUCKY:
            break
        grab.append(card)
    return tuple(grab)


def _start_round(state: RommeState, event: RoundStarted) -> RommeState:
    n = state.players
    assert event.round == state.round + 1 and event.cutter == (event.dealer - 1) % n
    deck = state.config.round_deck(event.round, canonical_deck(copies=DECK_COPIES, jokers=JOKERS))
    return replaced(
        state,
        round=event.round,
        dealer=event.dealer,
        phase=CUT,
        deck=deck,
        cut_position=None,
        lifted=(),
        lower=(),
        grabbed=(),
        grab_done=False,
        stock=(),
        discard=(),
        hands=((),) * n,
        melds=(),
        next_meld=1,
        out=(),
        face_down=(),
        turn=(event.dealer + 1) % n,
        drawn=False,
        fresh=True,
        went_out=None,
        doubled=False,
    )


def _apply_grab(state: RommeState, event: LuckyGrab) -> RommeState:
    count = len(event.cards)
    assert state.phase == DEAL and not state.grab_done and tuple(reversed(state.lifted[-count:])) == event.cards
    seat = event.seat
    hand = rm.sort_cards((*state.hands[seat], *event.cards))
    return replaced(
        state,
        lifted=state.lifted[:-count],
        grabbed=event.cards,
        grab_done=True,
        hands=replaced_at(state.hands, seat, hand),
    )


def _deal(state: RommeState, event: HandsDealt) -> RommeState:
    """R-5: the lower packet with the rest of the lifted packet beneath it, dealt one card at a time
    from the top, clockwise from left of the dealer, passing over hands that hold 15."""
    stack = state.lower + state.lifted
    n = state.players
    hands = [list(h) for h in state.hands]
    seat = (state.dealer + 1) % n
    index = 0
    while any(len(h) < HAND_SIZE for h in hands):
        if len(hands[seat]) < HAND_SIZE:
            hands[seat].append(stack[index])
            index += 1
        seat = (seat + 1) % n
    stock = stack[index:]
    assert len(stock) == event.stock_size
    return replaced(
        state,
        phase=PLAY,
        lifted=(),
        lower=(),
        grab_done=True,
        stock=stock,
        hands=tuple(rm.sort_cards(h) for h in hands),
        turn=(state.dealer + 1) % n,
        drawn=False,
        fresh=True,
    )


# ---------------------------------------------------------------- decide helpers


def _decide_cut(state: RommeState, seat: int, action: Action) -> Event:
    if seat != state.cutter:
        raise _refuse("not_your_turn", f"seat {state.cutter}, right of the dealer, cuts first", "R-3")
    if action.type != "cut":
        raise _refuse("cut_first", "nothing can happen in the round before the cut", "R-3")
    position = action["position"]
    if not 1 <= position <= DECK_SIZE - 1:
        raise _refuse("invalid_cut_position", f"cut at a position from 1 to {DECK_SIZE - 1}, not {position}", "R-3")
    return DeckCut(actor=seat, position=position)


def _decide_draw(state: RommeState, seat: int) -> Event:
    if state.drawn:
        raise _refuse("already_drawn", "you have drawn this turn; meld, lay off or discard", "R-6")
    if not state.stock:
        raise _refuse("stock_empty", "the stock is empty: take the discard pile with a new meld (R-7)", "R-21")
    return CardDrawn(actor=seat)


def _parse_meld(value: Any) -> tuple[str, tuple[str, ...]]:
    """`{kind: "set" | "run", cards: [...]}` of take_discard, checked like any other request."""
    if not isinstance(value, Mapping):
        raise InvalidInput("invalid_request", "'take_discard.meld' must be an object {kind, cards}")
    extra = sorted(set(value) - {"kind", "cards"})
    if extra:
        raise InvalidInput("invalid_request", f"'take_discard.meld' takes no field(s) {', '.join(extra)}")
    kind = value.get("kind")
    if kind not in rm.KINDS:
        raise InvalidInput("invalid_request", "'take_discard.meld.kind' must be one of set, run")
    cards = value.get("cards")
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        raise InvalidInput("invalid_request", "'take_discard.meld.cards' must be a list of card codes")
    unknown = [c for c in cards if not is_card(c)]
    if unknown:
        raise InvalidInput("unknown_card", f"'take_discard.meld.cards': {unknown[0]!r} is not a card code of this game")
    return str(kind), tuple(cards)


def _check_meld(state: RommeState, seat: int, kind: str, cards: tuple[str, ...]) -> tuple[int, bool]:
    """R-12 ... R-14 and the one-set-per-rank merge: (meld id the cards go to, merged?)."""
    problem = rm.meld_problem(kind, cards)
    if problem is not None:
        raise _refuse("illegal_meld", problem.detail, problem.rule)
    if kind == rm.SET:
        existing = state.own_set(seat, rm.set_rank(cards))
        if existing is not None:
            problem = rm.merge_problem(existing.cards, cards)
            if problem is not None:
                raise _refuse("illegal_meld", problem.detail, problem.rule)
            return existing.id, True
    return state.next_meld, False


def _decide_take(state: RommeState, seat: int, hand: tuple[str, ...], raw: Any) -> Event:
    kind, cards = _parse_meld(raw)
    if state.drawn:
        raise _refuse("already_drawn", "you have drawn this turn; the discard pile is taken instead of drawing", "R-7")
    if not state.discard:
        raise _refuse("discard_pile_empty", "there is no discard to take", "R-7")
    top = state.discard[-1]
    if top not in cards:
        raise _refuse("top_card_not_in_meld", f"the meld must hold the top discard {top}", "R-7")
    used = list(cards)
    used.remove(top)
    missing = _missing(hand, used)
    if missing:
        raise _refuse("card_not_in_hand", f"you do not hold {', '.join(missing)}", "R-7")
    if len(used) >= len(hand):
        raise _refuse(
            "hand_would_be_empty",
            "this meld would use every card of your hand; one must remain to discard",
            "R-8",
        )
    meld_id, merged = _check_meld(state, seat, kind, cards)
    return DiscardTaken(actor=seat, meld=meld_id, kind=kind, cards=cards, card=top, merged=merged)


def _decide_meld(state: RommeState, seat: int, hand: tuple[str, ...], kind: str, cards: tuple[str, ...]) -> Event:
    missing = _missing(hand, cards)
    if missing:
        raise _refuse("card_not_in_hand", f"you do not hold {', '.join(missing)}", "R-9")
    if len(cards) >= len(hand):
        raise _refuse("hand_would_be_empty", "one card must remain in your hand to discard", "R-10")
    meld_id, merged = _check_meld(state, seat, kind, cards)
    return MeldLaid(actor=seat, meld=meld_id, kind=kind, cards=cards, merged=merged)


def _own_meld(state: RommeState, seat: int, meld_id: int) -> LaidMeld:
    meld = state.meld(meld_id)
    if meld is None:
        raise _refuse("unknown_meld", f"there is no meld {meld_id} in this round", "R-9")
    if meld.seat != seat:
        raise _refuse(
            "not_your_meld", f"meld {meld_id} belongs to seat {meld.seat}; melds of others are never touched", "R-9"
        )
    return meld


def _decide_lay_off(
    state: RommeState, seat: int, hand: tuple[str, ...], meld_id: int, card: str, end: str | None
) -> Event:
    meld = _own_meld(state, seat, meld_id)
    if card not in hand:
        raise _refuse("card_not_in_hand", f"you do not hold {card}", "R-15")
    if len(hand) == 1:
        raise _refuse("hand_would_be_empty", "your last card can only be discarded", "R-10")
    if meld.kind == rm.SET:
        if end is not None:
            raise _refuse("illegal_lay_off", "a set has no ends; leave out 'end'", "R-15")
        if rm.lay_off_result(rm.SET, meld.cards, card, None) is None:
            raise _refuse("illegal_lay_off", f"{card} does not fit set {meld_id}: {_set_reason(meld, card)}", "R-15")
        return CardLaidOff(actor=seat, meld=meld_id, card=card, end=None)
    fits = rm.lay_off_ends(rm.RUN, meld.cards, card)
    if end is None:
        if not fits:
            raise _refuse("illegal_lay_off", f"{card} fits neither end of run {meld_id}", "R-15")
        end = rm.HIGH if rm.HIGH in fits else rm.LOW
    elif end not in fits:
        raise _refuse("illegal_lay_off", f"{card} does not fit the {end} end of run {meld_id}", "R-15")
    return CardLaidOff(actor=seat, meld=meld_id, card=card, end=end)


def _set_reason(meld: LaidMeld, card: str) -> str:
    problem = rm.set_problem((*meld.cards, card))
    return problem.detail if problem else "it would break R-12"


def _decide_swap(state: RommeState, seat: int, hand: tuple[str, ...], meld_id: int, card: str) -> Event:
    meld = _own_meld(state, seat, meld_id)
    if card not in hand:
        raise _refuse("card_not_in_hand", f"you do not hold {card}", "R-16")
    if len(hand) == 1:
        raise _refuse("hand_would_be_empty", "a joker swap may not use your last card", "R-10")
    if JOKER not in meld.cards:
        raise _refuse("no_joker_in_meld", f"meld {meld_id} holds no joker", "R-16")
    index = rm.swap_index(meld.kind, meld.cards, card)
    if index is None:
        stands = [s for c, s in zip(meld.cards, rm.represented(meld.kind, meld.cards), strict=True) if c == JOKER]
        raise _refuse(
            "illegal_swap",
            f"{card} is not a card a joker of meld {meld_id} stands for (its jokers stand for {', '.join(stands)})",
            "R-16",
        )
    return JokerSwapped(actor=seat, meld=meld_id, card=card, index=index)


def _decide_discard(seat: int, hand: tuple[str, ...], card: str | None) -> Event:
    if card is None:
        if len(hand) != 1:
            raise InvalidInput(
                "invalid_request", "'discard' needs field 'card' (it may be left out only for the last card)"
            )
        return WentOut(actor=seat)
    if card not in hand:
        raise _refuse("card_not_in_hand", f"you do not hold {card}", "R-11")
    if len(hand) == 1:
        return WentOut(actor=seat)
    return CardDiscarded(actor=seat, card=card)


# ---------------------------------------------------------------- evolve helpers


def _lay_meld(state: RommeState, seat: int, meld_id: int, kind: str, cards: tuple[str, ...]) -> RommeState:
    """A new meld, or (R-12) a set joining the player's set of its rank."""
    if meld_id == state.next_meld:
        meld = LaidMeld(meld_id, seat, kind, cards)
        return replaced(state, melds=state.melds + (meld,), next_meld=meld_id + 1)
    existing = state.meld(meld_id)
    assert existing is not None and existing.seat == seat and existing.kind == rm.SET == kind
    return _update_meld(state, replaced(existing, cards=existing.cards + cards))


def _update_meld(state: RommeState, meld: LaidMeld) -> RommeState:
    return replaced(state, melds=tuple(meld if m.id == meld.id else m for m in state.melds))


def _apply_take(state: RommeState, event: DiscardTaken) -> RommeState:
    seat = int(event.actor)
    assert not state.drawn and state.discard and state.discard[-1] == event.card
    used = list(event.cards)
    used.remove(event.card)
    state = _lay_meld(state, seat, event.meld, event.kind, event.cards)
    hand = rm.sort_cards((*_remove(state.hands[seat], used), *state.discard[:-1]))
    return replaced(state, hands=replaced_at(state.hands, seat, hand), discard=(), drawn=True)


def _apply_lay_off(state: RommeState, event: CardLaidOff) -> RommeState:
    seat = int(event.actor)
    meld = state.meld(event.meld)
    assert meld is not None and meld.seat == seat
    cards = (event.card, *meld.cards) if event.end == rm.LOW else (*meld.cards, event.card)
    state = _update_meld(state, replaced(meld, cards=cards))
    return replaced(state, hands=replaced_at(state.hands, seat, _remove(state.hands[seat], [event.card])))


def _apply_swap(state: RommeState, event: JokerSwapped) -> RommeState:
    seat = int(event.actor)
    meld = state.meld(event.meld)
    assert meld is not None and meld.seat == seat
    state = _update_meld(state, replaced(meld, cards=rm.swapped(meld.cards, event.index, event.card)))
    hand = _remove(state.hands[seat], [event.card])
    return replaced(state, hands=replaced_at(state.hands, seat, hand), out=state.out + (JOKER,))


def _apply_discard(state: RommeState, event: CardDiscarded) -> RommeState:
    seat = int(event.actor)
    hands = replaced_at(state.hands, seat, _remove(state.hands[seat], [event.card]))
    following = (seat + 1) % state.players
    return replaced(
        state,
        hands=hands,
        discard=state.discard + (event.card,),
        turn=following,
        drawn=False,
        fresh=not state.own_melds(following),
    )


def _score(state: RommeState, winner: int | None, reason: str) -> RoundScored:
    """R-19 / R-21: melds minus hand for everyone (the winner's hand is empty); R-20 doubles."""
    meld_points = tuple(rm.points(c for m in state.own_melds(s) for c in m.cards) for s in range(state.players))
    hand_points = tuple(rm.points(h) for h in state.hands)
    doubled = winner is not None and state.doubled
    factor = 2 if doubled else 1
    scores = tuple(factor * (m - h) for m, h in zip(meld_points, hand_points, strict=True))
    return RoundScored(
        round=state.round,
        winner=winner,
        reason=reason,
        doubled=doubled,
        meld_points=meld_points,
        hand_points=hand_points,
        scores=scores,
    )


def _apply_scored(state: RommeState, event: RoundScored) -> RommeState:
    totals = tuple(t + s for t, s in zip(state.totals, event.scores, strict=True))
    result = RoundResult(
        event.round, event.winner, event.reason, event.doubled, event.meld_points, event.hand_points, event.scores
    )
    reached = state.mark_reached or any(at_mark(state.config.options, t) for t in totals)
    return replaced(
        state,
        phase=BETWEEN_ROUNDS,
        totals=totals,
        round_scores=state.round_scores + (event.scores,),
        last_round=result,
        mark_reached=reached,
        drawn=False,
    )


# ---------------------------------------------------------------- what can be played (bots need it)


def meld_candidates(state: RommeState, seat: int, cap: int = MELD_CAP) -> list[rm.Meld]:
    """Melds the seat may lay now from its hand (R-10, R-12 merge), a canonical list of at most `cap`."""
    hand = state.hands[seat]
    out: list[rm.Meld] = []
    for kind, cards in rm.candidate_melds(hand, cap=10 * cap):
        if len(cards) < len(hand) and _merge_ok(state, seat, kind, cards):
            out.append((kind, cards))
            if len(out) >= cap:
                break
    return out


def take_candidates(state: RommeState, seat: int, cap: int = MELD_CAP) -> list[rm.Meld]:
    """Ways to take the discard pile (R-7, R-8, R-12 merge), a canonical list of at most `cap`."""
    if not state.discard:
        return []
    hand = state.hands[seat]
    top = state.discard[-1]
    out: list[rm.Meld] = []
    for kind, cards in rm.candidate_melds((*hand, top), cap=10 * cap):
        if top in cards and len(cards) - 1 < len(hand) and _merge_ok(state, seat, kind, cards):
            out.append((kind, cards))
            if len(out) >= cap:
                break
    return out


def iter_legal_melds(state: RommeState, seat: int) -> Iterator[rm.Meld]:
    """Every meld the seat may lay now, lazily: each valid meld of its hand (`rm.iter_melds`) that
    keeps a card in hand (R-10) and, for a set, joins the seat's set of its rank validly (R-12)."""
    hand = state.hands[seat]
    for kind, cards in rm.iter_melds(hand):
        if len(cards) < len(hand) and _merge_ok(state, seat, kind, cards):
            yield kind, cards


def iter_legal_takes(state: RommeState, seat: int) -> Iterator[rm.Meld]:
    """Every meld with which the seat may take the discard pile now, lazily (R-7, R-8, R-12)."""
    if not state.discard:
        return
    hand = state.hands[seat]
    top = state.discard[-1]
    for kind, cards in rm.iter_melds((*hand, top)):
        if top in cards and len(cards) - 1 < len(hand) and _merge_ok(state, seat, kind, cards):
            yield kind, cards


def can_take_discard(state: RommeState, seat: int) -> bool:
    """R-7 / R-8: whether any new meld with the top discard can be laid (a three-card one then can)."""
    if not state.discard:
        return False
    hand = state.hands[seat]
    top = state.discard[-1]
    if len(hand) < 3:
        return False
    return any(top in cards and _merge_ok(state, seat, kind, cards) for kind, cards in rm.minimal_melds((*hand, top)))


def _merge_ok(state: RommeState, seat: int, kind: str, cards: tuple[str, ...]) -> bool:
    if kind != rm.SET:
        return True
    existing = state.own_set(seat, rm.set_rank(cards))
    return existing is None or rm.merge_problem(existing.cards, cards) is None


def lay_offs(state: RommeState, seat: int) -> list[tuple[int, str, str | None]]:
    """Every lay-off the seat may make now (R-15, R-10): (meld id, card, end or None for sets)."""
    hand = state.hands[seat]
    if len(hand) < 2:
        return []
    cards = rm.sort_cards(set(hand))
    out: list[tuple[int, str, str | None]] = []
    for meld in state.own_melds(seat):
        fits = rm.lay_off_fits(meld.kind, meld.cards)
        out += [(meld.id, card, end) for card in cards for end in fits.get(card, ())]
    return out


def swaps(state: RommeState, seat: int) -> list[tuple[int, str]]:
    """Every joker swap the seat may make now (R-16, R-10): (meld id, card)."""
    hand = state.hands[seat]
    if len(hand) < 2:
        return []
    return [
        (meld.id, card)
        for meld in state.own_melds(seat)
        if JOKER in meld.cards
        for card in rm.sort_cards(set(hand) - {JOKER})
        if rm.swap_index(meld.kind, meld.cards, card) is not None
    ]


# ---------------------------------------------------------------- views


def meld_view(meld: LaidMeld) -> dict[str, Any]:
    """A meld as everyone sees it: id, owner, kind, cards in order, what each joker stands for."""
    seen = _meld_view(meld)
    return {
        **seen,
        "cards": list(seen["cards"]),
        "stands_for": list(seen["stands_for"]),
        "jokers": [dict(j) for j in seen["jokers"]],
    }


@functools.lru_cache(maxsize=rm.CACHE_SIZE)
def _meld_view(meld: LaidMeld) -> dict[str, Any]:
    """`meld_view` worked out once per meld (its lists are copied for each caller)."""
    stands = rm.represented(meld.kind, meld.cards)
    out: dict[str, Any] = {
        "id": meld.id,
        "seat": meld.seat,
        "kind": meld.kind,
        "cards": list(meld.cards),
        "stands_for": list(stands),
        "jokers": [
            {"index": i, "stands_for": s} for i, (c, s) in enumerate(zip(meld.cards, stands, strict=True)) if c == JOKER
        ],
        "points": rm.points(meld.cards),
    }
    if meld.kind == rm.SET:
        out["rank"] = rm.set_rank(meld.cards)
    else:
        out["suit"] = rm.suit(stands[0])
        out["low"] = stands[0]
        out["high"] = stands[-1]
    return out


def seat_meld_points(state: RommeState) -> list[int]:
    """R-18 / R-19: the value of each seat's melds."""
    totals = [0] * state.players
    for meld in state.melds:
        totals[meld.seat] += _meld_view(meld)["points"]
    return totals


def _table(state: RommeState) -> dict[str, Any]:
    """The public table: the options; dealer, cutter, whose turn and whether they have drawn; the cut
    (position and lucky grab); stock, discard pile (all of it, bottom first), its top and sizes;
    each hand's size; every meld (`meld_view`) and each seat's meld points; the jokers out of the
    game; who went out (their face-down card is only counted); the scores of every round, the totals
    and how the last round ended; whether the mark of R-22 has been reached."""
    options = state.config.options
    playing = state.phase == PLAY
    cut = None
    if state.cut_position is not None:
        cut = {"by": state.cutter, "position": state.cut_position, "grabbed": list(state.grabbed)}
    last = state.last_round
    return {
        "target": options["target"],
        "strict_1000": options["strict_1000"],
        "hand_aus_doubles": options["hand_aus_doubles"],
        "dealer": state.dealer,
        "cutter": state.cutter if state.round else None,
        "turn": state.turn if playing else None,
        "drawn": state.drawn if playing else False,
        "cut": cut,
        "stock_size": len(state.stock),
        "discard": list(state.discard),
        "discard_top": state.discard[-1] if state.discard else None,
        "discard_size": len(state.discard),
        "hand_sizes": [len(h) for h in state.hands] if state.hands else [0] * state.players,
        "melds": [meld_view(m) for m in state.melds],
        "meld_points": seat_meld_points(state),
        "out_of_game": list(state.out),
        "went_out": state.went_out,
        "face_down": len(state.face_down),
        "round_scores": [list(r) for r in state.round_scores],
        "totals": list(state.totals),
        "last_round": None
        if last is None
        else {
            "round": last.round,
            "winner": last.winner,
            "reason": last.reason,
            "doubled": last.doubled,
            "meld_points": list(last.meld_points),
            "hand_points": list(last.hand_points),
            "scores": list(last.scores),
        },
        "mark_reached": state.mark_reached,
    }


def _result(state: RommeState) -> dict[str, Any] | None:
    if state.phase != FINISHED:
        return None
    return {"totals": list(state.totals), "winners": list(state.winners)}
