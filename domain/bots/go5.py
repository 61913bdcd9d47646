"""Go5 bot policy `greedy`: one-action lookahead on the seat's own view (V-1 ... V-16).

The bot sees only `engine.view(snap, seat)` (its hand, every set on the table, the top
discard, hand sizes, stop cards, scores and the game's values) and its legal actions.

- It calls Go5 at once when it may (V-13).
- Draw (V-7): it takes the top discard (with the stock card) when that card joins one of
  its sets or makes a new set with two cards of its hand; otherwise it draws from the stock.
- Play (V-8): every meld, lay-off and swap is valued by what it does to the round scores
  (V-15): a number card moved from the hand to a set gains twice its value, a swap also
  costs the victim the difference of the two cards (and a given joker its cost); a set of
  four gets a bonus (it can be completed by Go5), and a five (V-12) is valued by how the
  round would end for the bot against its best rival's estimate. It plays the best one
  when it gains anything.
- Stop (V-10): played when the skipped player holds a 4-card set, when the bot holds one,
  or when the skipped player leads the game.
- Discard (V-11): never a card that completes a rival's 4-set (that would hand them Go5)
  when anything else is possible; otherwise the card least worth keeping: keeping a card
  is worth its part in own sets and possible sets, less its value as a hand penalty.
Ties are broken by the seeded stream.

For the `expert` level (domain/bots/expert.py) the module also deals sampled worlds from a
seat view (`sample_world`) and shortlists the actions worth a search (`expert_candidates`).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain.bots import Policy, copy_action
from domain.bots.expert import Budget, unseen_cards, world_config
from domain.go5 import (
    CANONICAL,
    CODES,
    DRAW,
    FEATURES,
    JOKER,
    NUMBER_CARDS,
    PLAY,
    STOP,
    Go5Set,
    Go5State,
    card_value,
    common_features,
    feature_value,
    in_order,
)
from domain.shuffle import SeededStream

FOUR_BONUS = 4.0
"""A set of four can take any fitting discard by Go5 (V-13)."""

END_BONUS = 15.0
"""Ending the round (V-12) while ahead of every rival."""

DANGER = 1000.0
"""Keeping a card that would complete a rival's 4-set when discarded."""

TOLERANCE = 1e-9


@dataclasses.dataclass(frozen=True)
class Seen:
    """What the bot reads from its view."""

    seat: int
    players: int
    hand: tuple[str, ...]
    sets: tuple[Mapping[str, Any], ...]
    hand_sizes: tuple[int, ...]
    options: Mapping[str, Any]
    totals: tuple[int, ...]
    turn: int | None
    values: Mapping[str, int]
    rules_version: int

    def value(self, card: str) -> int:
        """V-4 with the game's options."""
        return self.values[card]

    def sets_of(self, seat: int) -> list[Mapping[str, Any]]:
        return [s for s in self.sets if s["owner"] == seat]

    def joker_barred(self, set_: Mapping[str, Any]) -> bool:
        """V-9: no joker joins the owner's first set in rules version 1; in version 2 any set may take one."""
        return self.rules_version < 2 and bool(min(s["id"] for s in self.sets_of(set_["owner"])) == set_["id"])

    def fits(self, set_: Mapping[str, Any], card: str) -> bool:
        """True when `card` may join `set_` (V-9)."""
        if len(set_["cards"]) >= 5:
            return False
        if card == JOKER:
            return not set_["joker"] and not self.joker_barred(set_)
        return bool(feature_value(card, set_["feature"]) == set_["value"])


def read(view: Mapping[str, Any]) -> Seen:
    """The parts of a seat's view the bot uses."""
    table = view["table"]
    players = table["players"]
    pattern_values, joker_value = tuple(table["pattern_values"]), table["joker_value"]
    return Seen(
        seat=int(view["you"]["seat"]),
        players=len(players),
        hand=tuple(view["you"]["hand"]),
        sets=tuple(s for p in players for s in p["sets"]),
        hand_sizes=tuple(int(p["hand_size"]) for p in players),
        options={"pattern_values": table["pattern_values"], "joker_value": joker_value},
        totals=tuple(int(s) for s in view["scores"]),
        turn=table["turn"],
        values=card_values(pattern_values, joker_value),
        rules_version=int(view["rules_version"]),
    )


@functools.lru_cache(maxsize=16)
def card_values(pattern_values: tuple[int, ...], joker_value: int) -> dict[str, int]:
    """V-4: every card's value under these options (worked out once per set of options)."""
    options = {"pattern_values": pattern_values, "joker_value": joker_value}
    return {card: card_value(card, options) for card in CODES}


@functools.lru_cache(maxsize=16)
def mean_number_value(pattern_values: tuple[int, ...], joker_value: int) -> float:
    """The mean value of a number card under these options."""
    values = card_values(pattern_values, joker_value)
    return sum(values[c] for c in NUMBER_CARDS) / len(NUMBER_CARDS)


# ---------------------------------------------------------------- the policy


def greedy(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream) -> dict[str, Any]:
    """The greedy Go5 policy: one of `legal`, chosen from the seat's view only."""
    calls = [a for a in legal if a["type"] == "go5"]
    if calls:
        return _pick(calls, [0.0] * len(calls), rng)
    seen = read(view)
    draws = [a for a in legal if a["type"] == "draw"]
    if draws:
        return _pick(draws, [draw_value(a, seen, view["table"]["discard_top"]) for a in draws], rng)
    plays = [a for a in legal if a["type"] in ("meld", "lay_off", "swap")]
    if plays:
        values = [play_value(a, seen) for a in plays]
        if max(values) > TOLERANCE:
            return _pick(plays, values, rng)
    if any(a["type"] == "stop" for a in legal) and stop_pays(seen):
        return {"type": "stop"}
    discards = [a for a in legal if a["type"] == "discard"]
    if not discards:
        return _pick(legal, [0.0] * len(legal), rng)
    return _pick(discards, [-keep_value(a["card"], seen) for a in discards], rng)


def _pick(actions: Sequence[Mapping[str, Any]], values: Sequence[float], rng: SeededStream) -> dict[str, Any]:
    """A copy of the highest-valued action; ties by the seeded stream."""
    best = max(values)
    ties = [i for i, v in enumerate(values) if v >= best - TOLERANCE]
    return copy_action(actions[ties[0] if len(ties) == 1 else rng.choice(ties)])


# ---------------------------------------------------------------- draw (V-7)


def draw_value(action: Mapping[str, Any], seen: Seen, top: str | None) -> float:
    """The stock is worth 0; the top discard is worth its use in a set, if it has one."""
    if action["from"] == "stock" or top is None:
        return 0.0
    if any(seen.fits(s, top) for s in seen.sets_of(seen.seat)):
        return 1.0 + seen.value(top)
    if top != JOKER and any(_makes_set(top, pair, seen) for pair in _pairs(seen.hand)):
        return 1.0 + seen.value(top)
    return -1.0


def _pairs(hand: Sequence[str]) -> list[tuple[str, str]]:
    cards = list(hand)
    return [(a, b) for i, a in enumerate(cards) for b in cards[i + 1 :]]


def _makes_set(card: str, pair: tuple[str, str], seen: Seen) -> bool:
    cards = (card, *pair)
    if cards.count(JOKER) > 1 or (JOKER in cards and not seen.sets_of(seen.seat)):
        return False
    return bool(common_features(cards))


# ---------------------------------------------------------------- play (V-8 ... V-12)


def gain_to_set(card: str, seen: Seen) -> float:
    """V-15: a card moved from the hand into an own set: twice a number card's value, 0 for a joker."""
    return 0.0 if card == JOKER else 2.0 * seen.value(card)


def play_value(action: Mapping[str, Any], seen: Seen) -> float:
    """What a meld, lay-off or swap is worth to the bot (round-score change plus set bonuses)."""
    kind = action["type"]
    if kind == "meld":
        return sum(gain_to_set(c, seen) for c in action["cards"])
    if kind == "lay_off":
        return gain_to_set(action["card"], seen) + _growth(action["set"], action["card"], seen)
    return swap_value(action, seen)


def swap_value(action: Mapping[str, Any], seen: Seen) -> float:
    """V-8 (c): the give leaves the hand, the take joins an own set; the victim's set loses the difference."""
    take, give = action["take"], action["give"]
    gain = float((-seen.value(give) if give == JOKER else seen.value(give)) + seen.value(take))
    then = action["then"]
    if "meld" in then:
        gain += sum(gain_to_set(c, seen) for c in then["meld"]["cards"] if c != take)
    else:
        gain += _growth(then["lay_off"]["set"], take, seen)
    harm = seen.value(take) - seen.value(give)
    return gain + harm / max(1, seen.players - 1)


def _growth(set_id: int, card: str, seen: Seen) -> float:
    """Bonus of a set growing by one card: to four, or to five (the round ends, V-12)."""
    set_ = next(s for s in seen.sets if s["id"] == set_id)
    size = len(set_["cards"]) + 1
    if size == 4:
        return FOUR_BONUS
    if size >= 5:
        mine = own_score(seen) + gain_to_set(card, seen)
        return END_BONUS + mine - best_rival(seen)
    return 0.0


def own_score(seen: Seen) -> float:
    """V-15 of the bot's round as it stands."""
    on_table = sum(seen.value(c) for s in seen.sets_of(seen.seat) for c in s["cards"])
    in_hand = sum(seen.value(c) if c == JOKER else -seen.value(c) for c in seen.hand)
    return float(on_table + in_hand)


def best_rival(seen: Seen) -> float:
    """The best rival round score estimate: their sets less their hand at the mean card value."""
    mean = mean_number_value(tuple(seen.options["pattern_values"]), seen.options["joker_value"])
    estimates = [
        sum(seen.value(c) for s in seen.sets_of(seat) for c in s["cards"]) - mean * seen.hand_sizes[seat]
        for seat in range(seen.players)
        if seat != seen.seat
    ]
    return max(estimates, default=0.0)


# ---------------------------------------------------------------- stop (V-10)


def stop_pays(seen: Seen) -> bool:
    """Skip the next player when they threaten a five, when the bot does, or when they lead."""
    skipped = (seen.seat + 1) % seen.players
    if skipped == seen.seat:
        return False
    if any(len(s["cards"]) == 4 for s in seen.sets_of(skipped)):
        return True
    if any(len(s["cards"]) == 4 for s in seen.sets_of(seen.seat)):
        return True
    return seen.totals[skipped] >= seen.totals[seen.seat] and seen.totals[skipped] > 0


# ---------------------------------------------------------------- discard (V-11)


def keep_value(card: str, seen: Seen) -> float:
    """How much the bot wants to keep `card`; the lowest is discarded."""
    rivals = [s for s in seen.sets if s["owner"] != seen.seat]
    if any(len(s["cards"]) == 4 and seen.fits(s, card) for s in rivals):
        return DANGER
    feeds = sum(1.0 for s in rivals if seen.fits(s, card))
    if card == JOKER:
        usable = any(seen.fits(s, card) for s in seen.sets_of(seen.seat))
        return feeds + (10.0 if usable else seen.options["joker_value"] / 2)
    value = seen.value(card)
    if any(seen.fits(s, card) for s in seen.sets_of(seen.seat)):
        return 20.0 + value + feeds
    partners = _partners(card, seen.hand)
    return feeds + 5.0 * partners + (value if partners else -value)


def _partners(card: str, hand: Sequence[str]) -> int:
    """How many other hand cards share a feature with `card` (jokers count for every feature)."""
    others = list(hand)
    others.remove(card)
    count = 0
    for by in FEATURES:
        mine = feature_value(card, by)
        count += sum(1 for c in others if c == JOKER or feature_value(c, by) == mine)
    return count


POLICIES: dict[str, Policy] = {"greedy": greedy}
"""Go5's own policies by level."""

EXPERT_BUDGET = Budget(samples=24, think_ms=100)
"""The expert's default budget in this game (samples a move and a time cap a move, in ms, where the caller
gives it a clock): the one measured against greedy on duplicate deals in docs/strength.md (go5-expert-greedy)."""


# ---------------------------------------------------------------- the expert's worlds


def sample_world(view: Mapping[str, Any], rng: SeededStream) -> engine.Snapshot[Any]:
    """A whole Go5 game that looks exactly like `view` to its seat: unseen cards dealt at random.

    The seat sees its hand, every set, the top discard and every stop card laid out or
    played (V-6, V-10). The other hands, the discard pile below its top and the stock are
    the deck less those cards, shuffled; stop cards are never in a hand (V-6) nor
    discarded (V-11), so the unseen ones all lie in the stock.
    """
    config = world_config(view, rng)
    table = view["table"]
    seats = table["players"]
    sets = tuple(
        Go5Set(s["id"], s["owner"], s["feature"], s["value"], tuple(s["cards"])) for p in seats for s in p["sets"]
    )
    top = [table["discard_top"]] if table["discard_top"] is not None else []
    hands, under, stock = _deal_unseen(view, [*(c for s in sets for c in s.cards), *top], rng)
    in_round = view["phase"] in (DRAW, PLAY)
    state = Go5State(
        config=config,
        round=view["round"],
        dealer=table["dealer"],
        phase=view["phase"],
        stock=stock,
        discard=(*under, *top),
        hands=hands,
        stops=tuple(p["stops"] for p in seats),
        stops_out=table["stops_out"],
        sets=tuple(sorted(sets, key=lambda s: s.id)),
        next_set=max((s.id for s in sets), default=0) + 1,
        turn=table["turn"] if table["turn"] is not None else 0,
        played=table["played"],
        stop_played=table["stop_played"],
        discarder=table["discarded_by"],
        reshuffles=table["reshuffles"],
        ended=None if in_round else (table["round_ends"] or [None])[-1],
        closer=table["closer"],
        round_scores=tuple(tuple(r) for r in table["round_scores"]),
        round_ends=tuple(table["round_ends"]),
        totals=tuple(view["scores"]),
        winners=tuple(view["result"]["winners"]) if view["result"] else (),
    )
    return engine.Snapshot(engine.get_game("go5"), config, state, version=view["version"])


def _deal_unseen(
    view: Mapping[str, Any], on_table: Sequence[str], rng: SeededStream
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...], tuple[str, ...]]:
    """Every hand (the seat's own as seen), the discard pile below its top and the stock, at random.

    The unseen cards are the deck less the seat's hand, the cards on the table and every
    stop card laid out or played; the unseen stop cards go to the stock only (V-6, V-11).
    """
    table, seat = view["table"], int(view["you"]["seat"])
    seats = table["players"]
    laid_out = [STOP] * (table["stops_out"] + sum(p["stops"] for p in seats))
    unseen = unseen_cards(CANONICAL, [*view["you"]["hand"], *on_table, *laid_out], rng)
    sizes = [0 if p["seat"] == seat else int(p["hand_size"]) for p in seats]
    sizes.append(max(0, table["discard_size"] - 1))
    dealt, stock = _split(unseen, sum(sizes))
    cards = iter(dealt)
    piles = [tuple(itertools.islice(cards, n)) for n in sizes]
    hands = tuple(tuple(view["you"]["hand"]) if s == seat else in_order(piles[s]) for s in range(len(seats)))
    return hands, piles[-1], tuple(stock)


def _split(unseen: Sequence[str], need: int) -> tuple[list[str], list[str]]:
    """The first `need` cards of `unseen` that are no stop card (to deal), and the rest in order (the stock)."""
    dealt: list[str] = []
    stock: list[str] = []
    for card in unseen:
        (dealt if card != STOP and len(dealt) < need else stock).append(card)
    return dealt, stock


CLOSE_CALL = 3.0
"""How near greedy's best value a play or a discard must be for the expert to search it, in points."""


def expert_candidates(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], limit: int) -> list[int]:
    """Go5's shortlist for the expert: both draws (V-7), and the close calls among plays (V-8),
    the stop card (V-10) and discards (V-11), plays and discards sharing the limit.

    A Go5 call (V-13) is not searched: greedy always calls.
    """
    kinds = {a["type"] for a in legal}
    if "go5" in kinds:
        return []
    if "draw" in kinds:
        return list(range(len(legal)))[:limit]
    seen = read(view)
    plays = _close([i for i, a in enumerate(legal) if a["type"] in ("meld", "lay_off", "swap")], legal, seen)
    discards = _close([i for i, a in enumerate(legal) if a["type"] == "discard"], legal, seen)
    stop = [i for i, a in enumerate(legal) if a["type"] == "stop"]
    share = max(1, (limit - len(stop)) // 2)
    return [*plays[:share], *stop, *discards[:share]][:limit]


def _close(indexes: Sequence[int], legal: Sequence[Mapping[str, Any]], seen: Seen) -> list[int]:
    """`indexes` best first, as far as greedy values them within CLOSE_CALL of the best."""
    if not indexes:
        return []
    values = {i: _greedy_value(legal[i], seen) for i in indexes}
    best = max(values.values())
    return sorted((i for i in indexes if values[i] >= best - CLOSE_CALL), key=lambda i: -values[i])


def _greedy_value(action: Mapping[str, Any], seen: Seen) -> float:
    """Greedy's value of a play or a discard (higher is better)."""
    if action["type"] == "discard":
        return -keep_value(action["card"], seen)
    return play_value(action, seen)
