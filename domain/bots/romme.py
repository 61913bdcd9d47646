"""Rommé bot policy `greedy` (R-1 ... R-23), from the seat's own view only.

What it does, in order, each time it is asked for one action:
- Cut (R-3): any position, from its seeded stream (it cannot see the deck).
- Draw or take (R-6, R-7): it values its hand by a plan (below) and takes the discard
  pile when the meld it lays plus the plan for the hand it then holds (the rest of the
  pile included) beats the plan for its hand now by a margin; otherwise it draws. With
  an empty stock it takes the best way there is (R-21: it must).
- After drawing: it goes out when its last card is left (R-11, R-19); when a short
  search finds a way to meld, lay off and swap down to one card this turn, it follows
  that way; else it lays the best meld it has (natural cards first, jokers only to
  complete a pair or a gap), lays off natural cards onto its melds (QS first), swaps
  jokers out when that is worth it, lays jokers off once its hand is nearly empty, and
  discards the card it needs least, high values first, and the QS early unless it can
  hope to meld it: the QS costs 100 in hand at the end (R-19).

The plan of a hand: lay the best melds and lay-offs it can in a row; its value is the
points laid less the points left in hand (R-18), less a little per card left.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from domain import romme_melds as rm
from domain.cards import JOKER
from domain.shuffle import SeededStream

TAKE_MARGIN = 10
"""How much better (in points) taking the discard pile must look than drawing."""
DRAW_HOPE = 4
"""What an unseen card from the stock is worth to the plan, on average."""
CARD_WEIGHT = 3
"""What each card left in hand costs the plan beyond its value: more cards, further from going out."""
TAKES_VALUED = 12
"""How many ways to take the pile are valued in full (the best by meld first)."""
SEARCH_NODES = 1500
"""The budget of the search for a way out this turn."""
SEARCH_HAND = 9
"""The search for a way out runs only for hands this small or smaller."""
ENDGAME_HAND = 3
"""From this many cards on, the bot lays off jokers too."""

OwnMeld = tuple[int, str, tuple[str, ...]]
"""(id, kind, cards) of one of the bot's melds."""


# ---------------------------------------------------------------- the policy


def greedy(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream) -> dict[str, Any]:
    """The greedy Rommé policy: one of `legal`, chosen from the seat's view only."""
    types = {a["type"] for a in legal}
    if "cut" in types:
        return _copy(rng.choice(legal))
    hand = tuple(view["you"]["hand"])
    seat = int(view["you"]["seat"])
    melds = own_melds(view, seat)
    if types & {"draw", "take_discard"}:
        choice = choose_draw(view, legal, hand, melds)
    else:
        choice = choose_play(view, legal, hand, melds, rng)
    return _copy(choice)


def _copy(action: Mapping[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(dict(action))


def own_melds(view: Mapping[str, Any], seat: int) -> list[OwnMeld]:
    """The seat's melds as (id, kind, cards)."""
    return [(int(m["id"]), str(m["kind"]), tuple(m["cards"])) for m in view["table"]["melds"] if m["seat"] == seat]


# ---------------------------------------------------------------- draw or take the discard pile


def choose_draw(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], hand: tuple[str, ...], melds: list[OwnMeld]
) -> Mapping[str, Any]:
    """R-6 / R-7 / R-21: draw, unless taking the discard pile pays (or the stock is empty)."""
    draws = [a for a in legal if a["type"] == "draw"]
    takes = [a for a in legal if a["type"] == "take_discard"]
    if not takes:
        return draws[0]
    pile = list(view["table"]["discard"])
    rest = pile[:-1]
    ranked = sorted(takes, key=lambda a: _meld_key(a["meld"]["kind"], a["meld"]["cards"]), reverse=True)
    best, best_value = None, float("-inf")
    for take in ranked[:TAKES_VALUED]:
        kind, cards = take["meld"]["kind"], tuple(take["meld"]["cards"])
        used = list(cards)
        used.remove(pile[-1])
        after = _minus(hand, used) + tuple(rest)
        value = rm.points(cards) + plan_value(after, _with_meld(melds, kind, cards))
        if value > best_value:
            best, best_value = take, value
    assert best is not None
    if not draws:
        return best
    return best if best_value > plan_value(hand, melds) + DRAW_HOPE + TAKE_MARGIN else draws[0]


# ---------------------------------------------------------------- after the draw


def choose_play(
    view: Mapping[str, Any],
    legal: Sequence[Mapping[str, Any]],
    hand: tuple[str, ...],
    melds: list[OwnMeld],
    rng: SeededStream,
) -> Mapping[str, Any]:
    """Meld, lay off, swap or discard (R-9 ... R-16, R-11)."""
    by_type: dict[str, list[Mapping[str, Any]]] = {}
    for action in legal:
        by_type.setdefault(action["type"], []).append(action)
    discards = by_type.get("discard", [])
    if len(hand) == 1:
        return discards[0]  # the last card goes out
    if len(hand) <= SEARCH_HAND:
        way_out = search_way_out(hand, melds)
        if way_out is not None and way_out in legal:
            return way_out
    meld = best_meld(by_type.get("meld", []), hand)
    if meld is not None:
        return meld
    lay_off = best_lay_off(by_type.get("lay_off", []), hand)
    if lay_off is not None:
        return lay_off
    swap = worth_swapping(by_type.get("swap_joker", []), hand)
    if swap is not None:
        return swap
    return choose_discard(view, discards, hand, rng)


def _meld_key(kind: str, cards: Sequence[str]) -> tuple[int, int, int]:
    """Natural cards laid first, then fewer jokers, then points."""
    jokers = sum(1 for c in cards if c == JOKER)
    return (len(cards) - jokers, -jokers, rm.points(cards))


def best_meld(melds: Sequence[Mapping[str, Any]], hand: Sequence[str]) -> Mapping[str, Any] | None:
    """The meld that lays most natural cards; jokers only where they complete two natural cards,
    or any meld once the hand is nearly empty."""
    usable = [
        m for m in melds if sum(1 for c in m["cards"] if c != JOKER) >= 2 or len(hand) - len(m["cards"]) <= ENDGAME_HAND
    ]
    if not usable:
        return None
    return max(usable, key=lambda m: _meld_key(m["kind"], m["cards"]))


def best_lay_off(lay_offs: Sequence[Mapping[str, Any]], hand: Sequence[str]) -> Mapping[str, Any] | None:
    """A natural card onto an own meld, the most valuable first (the QS above all); jokers only late."""
    naturals = [a for a in lay_offs if a["card"] != JOKER]
    if naturals:
        return max(naturals, key=lambda a: rm.card_value(a["card"]))
    jokers = [a for a in lay_offs if a["card"] == JOKER]
    if jokers and len(hand) <= ENDGAME_HAND:
        return jokers[0]
    return None


def worth_swapping(swaps: Sequence[Mapping[str, Any]], hand: Sequence[str]) -> Mapping[str, Any] | None:
    """R-16: a joker out for a natural card, when the card is worth at least the joker it replaces
    in the end count (2 x its value >= 20) or the hand is nearly empty."""
    for swap in sorted(swaps, key=lambda a: -rm.card_value(a["card"])):
        if 2 * rm.card_value(swap["card"]) >= 20 or len(hand) <= ENDGAME_HAND:
            return swap
    return None


def choose_discard(
    view: Mapping[str, Any], discards: Sequence[Mapping[str, Any]], hand: Sequence[str], rng: SeededStream
) -> Mapping[str, Any]:
    """The card the hand needs least; high values and the hopeless QS go first."""
    counts = Counter(hand)
    sizes = [s for i, s in enumerate(view["table"]["hand_sizes"]) if i != view["you"]["seat"]]
    danger = min(sizes, default=15) <= 4
    scored = [(keep_score(a["card"], counts, danger), i) for i, a in enumerate(discards)]
    lowest = min(s for s, _ in scored)
    ties = [i for s, i in scored if s == lowest]
    return discards[ties[rng.below(len(ties))]]


def keep_score(card: str, counts: Counter[str], danger: bool) -> float:
    """How much the hand wants to keep `card`: partners for sets and runs, less its value."""
    if card == JOKER:
        return 1000.0
    r, s = rm.RANK_INDEX[rm.rank(card)], rm.suit(card)
    same_rank = len({rm.suit(c) for c in counts if c != JOKER and c != card and rm.rank(c) == rm.rank(card)})
    near = sum((10 if abs(d) == 1 else 5) for d in (-2, -1, 1, 2) if counts[rm.code(r + d, s)] > 0)
    score = 12.0 * min(same_rank, 2) + near + 3 * counts[JOKER]
    if counts[card] > 1:
        score -= 4  # a second copy helps a set only, never a run
    score -= rm.card_value(card) / 2
    if card == "QS" and (danger or score < 20):
        score -= 200  # the QS costs 100 in hand; keep it only with real hope of a meld
    return score


# ---------------------------------------------------------------- plans


def _minus(hand: Sequence[str], cards: Sequence[str]) -> tuple[str, ...]:
    left = Counter(hand)
    left.subtract(cards)
    return tuple(left.elements())


def _with_meld(melds: list[OwnMeld], kind: str, cards: tuple[str, ...]) -> list[OwnMeld]:
    """The melds after laying a new one (R-12: a set joins the set of its rank)."""
    if kind == rm.SET:
        r = rm.set_rank(cards)
        for i, (meld_id, k, old) in enumerate(melds):
            if k == rm.SET and rm.set_rank(old) == r:
                return [*melds[:i], (meld_id, k, old + cards), *melds[i + 1 :]]
    return [*melds, (-len(melds) - 1, kind, cards)]


def _merge_ok(melds: list[OwnMeld], kind: str, cards: tuple[str, ...]) -> bool:
    if kind != rm.SET:
        return True
    r = rm.set_rank(cards)
    return all(rm.merge_problem(old, cards) is None for _, k, old in melds if k == rm.SET and rm.set_rank(old) == r)


def plan_value(hand: Sequence[str], melds: list[OwnMeld]) -> float:
    """Points the bot could lay from `hand` in a row (best meld first, then lay-offs) less what stays in hand."""
    laid, left = greedy_plan(tuple(hand), melds)
    return laid - rm.points(left) - CARD_WEIGHT * len(left)


def greedy_plan(hand: tuple[str, ...], melds: list[OwnMeld]) -> tuple[int, tuple[str, ...]]:
    """(points laid, cards left) after laying the best melds, then every natural lay-off, keeping a card."""
    laid = 0
    while True:
        options = [
            (kind, cards)
            for kind, cards in rm.candidate_melds(hand, cap=200)
            if len(cards) < len(hand) and sum(1 for c in cards if c != JOKER) >= 2 and _merge_ok(melds, kind, cards)
        ]
        if not options:
            break
        kind, cards = max(options, key=lambda m: _meld_key(*m))
        laid += rm.points(cards)
        hand = _minus(hand, cards)
        melds = _with_meld(melds, kind, cards)
    changed = True
    while changed and len(hand) > 1:
        changed = False
        for card in sorted(set(hand) - {JOKER}, key=lambda c: -rm.card_value(c)):
            placed = _place(melds, card)
            if placed is not None and len(hand) > 1:
                melds = placed
                hand = _minus(hand, [card])
                laid += rm.card_value(card)
                changed = True
                break
    return laid, hand


def _place(melds: list[OwnMeld], card: str) -> list[OwnMeld] | None:
    """The melds with `card` laid off on the first that takes it (R-15), or None."""
    for i, (meld_id, kind, cards) in enumerate(melds):
        for end in rm.lay_off_ends(kind, cards, card):
            result = rm.lay_off_result(kind, cards, card, end)
            assert result is not None
            return [*melds[:i], (meld_id, kind, result), *melds[i + 1 :]]
    return None


# ---------------------------------------------------------------- the search for a way out


def search_way_out(hand: tuple[str, ...], melds: list[OwnMeld]) -> dict[str, Any] | None:
    """The first action of a way to bring the hand down to one card this turn (melds, lay-offs,
    swaps; R-10 keeps a card), found within a node budget; None when there is none or the budget runs out."""
    budget = [SEARCH_NODES]
    seen: set[tuple[tuple[str, ...], tuple[OwnMeld, ...]]] = set()

    def walk(cards: tuple[str, ...], table: list[OwnMeld]) -> bool:
        if len(cards) == 1:
            return True
        key = (tuple(sorted(cards, key=rm.card_key)), tuple(table))
        if key in seen or budget[0] <= 0:
            return False
        seen.add(key)
        budget[0] -= 1
        return any(walk(after, new_table) for _, after, new_table in _moves(cards, table))

    for action, after, table in _moves(hand, melds):
        if walk(after, table):
            return action
        if budget[0] <= 0:
            return None
    return None


Move = tuple[dict[str, Any], tuple[str, ...], list[OwnMeld]]


def _moves(hand: tuple[str, ...], melds: list[OwnMeld]) -> list[Move]:
    """Every meld (canonical list), lay-off and swap the hand can make, largest reduction first."""
    moves: list[Move] = []
    for kind, cards in rm.candidate_melds(hand, cap=200):
        if len(cards) < len(hand) and _merge_ok(melds, kind, cards):
            action: dict[str, Any] = {"type": "meld", "kind": kind, "cards": list(cards)}
            moves.append((action, _minus(hand, cards), _with_meld(melds, kind, cards)))
    if len(hand) > 1:
        for i, (meld_id, kind, cards) in enumerate(melds):
            for card in sorted(set(hand), key=rm.card_key):
                for end in rm.lay_off_ends(kind, cards, card):
                    result = rm.lay_off_result(kind, cards, card, end)
                    assert result is not None
                    action = {"type": "lay_off", "meld": meld_id, "card": card, **({"end": end} if end else {})}
                    moves.append((action, _minus(hand, [card]), [*melds[:i], (meld_id, kind, result), *melds[i + 1 :]]))
                index = rm.swap_index(kind, cards, card)
                if index is not None:
                    action = {"type": "swap_joker", "meld": meld_id, "card": card}
                    swapped = rm.swapped(cards, index, card)
                    moves.append(
                        (action, _minus(hand, [card]), [*melds[:i], (meld_id, kind, swapped), *melds[i + 1 :]])
                    )
    moves.sort(key=lambda m: len(m[1]))
    return moves


PolicyFn = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]], SeededStream], dict[str, Any]]
POLICIES: dict[str, PolicyFn] = {"greedy": greedy}
"""Rommé's own policies by level."""
