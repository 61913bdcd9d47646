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

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain import romme_melds as rm
from domain.bots import Policy, copy_action
from domain.bots.expert import Budget, unseen_cards, world_config
from domain.cards import JOKER
from domain.romme import CUT, DECK_SIZE, HAND_SIZE, LaidMeld, RommeState, RoundResult
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
        return copy_action(rng.choice(legal))
    hand = tuple(view["you"]["hand"])
    seat = int(view["you"]["seat"])
    melds = own_melds(view, seat)
    if types & {"draw", "take_discard"}:
        choice = choose_draw(view, legal, hand, melds)
    else:
        choice = choose_play(view, legal, hand, melds, rng)
    return copy_action(choice)


def own_melds(view: Mapping[str, Any], seat: int) -> list[OwnMeld]:
    """The seat's melds as (id, kind, cards)."""
    return [(int(m["id"]), str(m["kind"]), tuple(m["cards"])) for m in view["table"]["melds"] if m["seat"] == seat]


# ---------------------------------------------------------------- draw or take the discard pile


def choose_draw(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], hand: tuple[str, ...], melds: list[OwnMeld]
) -> Mapping[str, Any]:
    """R-6 / R-7 / R-21: draw, unless taking the discard pile pays (or the stock is empty)."""
    draws = [a for a in legal if a["type"] == "draw"]
    valued = take_values(view, legal, hand, melds)
    if not valued:
        return draws[0]
    best, best_value = valued[0]
    if not draws:
        return best
    return best if best_value > draw_value(hand, melds) else draws[0]


def draw_value(hand: tuple[str, ...], melds: list[OwnMeld]) -> float:
    """What a take must beat to be preferred to drawing: the plan now, the hope of a draw, a margin."""
    return plan_value(hand, melds) + DRAW_HOPE + TAKE_MARGIN


def take_values(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], hand: tuple[str, ...], melds: list[OwnMeld]
) -> list[tuple[Mapping[str, Any], float]]:
    """The ways to take the pile valued in full (the TAKES_VALUED best by meld), best value first:
    the meld's points plus the plan for the hand then held, the rest of the pile included."""
    takes = [a for a in legal if a["type"] == "take_discard"]
    if not takes:
        return []
    pile = list(view["table"]["discard"])
    rest = pile[:-1]
    ranked = sorted(takes, key=lambda a: _meld_key(a["meld"]["kind"], a["meld"]["cards"]), reverse=True)
    valued: list[tuple[Mapping[str, Any], float]] = []
    for take in ranked[:TAKES_VALUED]:
        kind, cards = take["meld"]["kind"], tuple(take["meld"]["cards"])
        used = list(cards)
        used.remove(pile[-1])
        after = _minus(hand, used) + tuple(rest)
        valued.append((take, rm.points(cards) + plan_value(after, _with_meld(melds, kind, cards))))
    order = sorted(range(len(valued)), key=lambda i: (-valued[i][1], i))  # the first of equal values first
    return [valued[i] for i in order]


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
    scored = discard_scores(view, discards, hand)
    lowest = min(scored)
    ties = [i for i, s in enumerate(scored) if s == lowest]
    return discards[ties[rng.below(len(ties))]]


def discard_scores(view: Mapping[str, Any], discards: Sequence[Mapping[str, Any]], hand: Sequence[str]) -> list[float]:
    """`keep_score` of each discard's card: how much the hand wants to keep it."""
    counts = Counter(hand)
    sizes = [s for i, s in enumerate(view["table"]["hand_sizes"]) if i != view["you"]["seat"]]
    danger = min(sizes, default=15) <= 4
    return [keep_score(a["card"], counts, danger) for a in discards]


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
        for end in rm.lay_off_fits(kind, cards).get(card, ()):
            return [*melds[:i], (meld_id, kind, _laid_off(cards, card, end)), *melds[i + 1 :]]
    return None


def _laid_off(cards: tuple[str, ...], card: str, end: str | None) -> tuple[str, ...]:
    """A meld after a lay-off that fits (R-15): the card at the low end of a run, else at the end."""
    return (card, *cards) if end == rm.LOW else (*cards, card)


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
        distinct = sorted(set(hand), key=rm.card_key)
        for i, (meld_id, kind, cards) in enumerate(melds):
            fits = rm.lay_off_fits(kind, cards)
            for card in distinct:
                for end in fits.get(card, ()):
                    result = _laid_off(cards, card, end)
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


POLICIES: dict[str, Policy] = {"greedy": greedy}
"""Rommé's own policies by level."""

EXPERT_BUDGET = Budget(samples=24, think_ms=300)
"""The expert's default budget in this game (samples a move and a time cap a move, in ms, where the caller
gives it a clock): the one measured against greedy on duplicate deals in docs/strength.md (romme-expert-greedy)."""


# ---------------------------------------------------------------- the expert's worlds


def sample_world(view: Mapping[str, Any], rng: SeededStream) -> engine.Snapshot[Any]:
    """A whole Rommé game that looks exactly like `view` to its seat: unseen cards dealt at random.

    Before the cut (R-3) the whole deck is unseen. In play the other hands and the stock
    are the deck less every card the seat can see (its hand, the discard pile, the melds
    and the jokers out of the game, R-17), shuffled; the lucky grab (R-4) is public, so
    the cutter keeps those of its grabbed cards that the table does not show elsewhere.
    """
    config = world_config(view, rng)
    game = engine.get_game("romme")
    deck = game.canonical_deck(config.players, config.options)
    if view["phase"] == CUT:
        state = _world_state(view, config, deck=tuple(unseen_cards(deck, [], rng)))
        return engine.Snapshot(game, config, state, version=view["version"])
    table = view["table"]
    melds = tuple(LaidMeld(int(m["id"]), int(m["seat"]), str(m["kind"]), tuple(m["cards"])) for m in table["melds"])
    own = tuple(view["you"]["hand"])
    shown = [*table["discard"], *(c for m in melds for c in m.cards), *table["out_of_game"]]
    unseen = unseen_cards(deck, [*own, *shown], rng)
    hands = _world_hands(view, own, shown, unseen, melds, rng)
    unseen = unseen_cards(unseen, [], rng)  # the stock: what is left, in an order of its own
    state = _world_state(
        view,
        config,
        cut_position=table["cut"]["position"],
        grabbed=tuple(table["cut"]["grabbed"]),
        grab_done=True,
        stock=tuple(unseen),
        discard=tuple(table["discard"]),
        hands=hands,
        melds=melds,
        next_meld=len(melds) + 1,
        out=tuple(table["out_of_game"]),
        turn=table["turn"],
        drawn=table["drawn"],
        fresh=_fresh(table, melds),
    )
    return engine.Snapshot(game, config, state, version=view["version"])


def _world_state(view: Mapping[str, Any], config: engine.GameConfig, **round_fields: Any) -> RommeState:
    """The state of a world: the public round and game facts of `view`, and `round_fields`."""
    table = view["table"]
    last = table["last_round"]
    return RommeState(
        config=config,
        round=view["round"],
        dealer=table["dealer"],
        phase=view["phase"],
        hands=round_fields.pop("hands", ((),) * config.players),
        round_scores=tuple(tuple(r) for r in table["round_scores"]),
        totals=tuple(view["scores"]),
        last_round=None if last is None else _round_result(last),
        mark_reached=table["mark_reached"],
        **round_fields,
    )


def _round_result(last: Mapping[str, Any]) -> RoundResult:
    return RoundResult(
        last["round"],
        last["winner"],
        last["reason"],
        last["doubled"],
        tuple(last["meld_points"]),
        tuple(last["hand_points"]),
        tuple(last["scores"]),
    )


def _world_hands(
    view: Mapping[str, Any],
    own: tuple[str, ...],
    shown: Sequence[str],
    unseen: list[str],
    melds: Sequence[LaidMeld],
    rng: SeededStream,
) -> tuple[tuple[str, ...], ...]:
    """Every hand: the seat's own, the others of the right sizes from `unseen` (the cutter's with its
    grabbed cards that are not shown elsewhere), each shaped as a greedy player keeps a hand once it
    has played a turn (`_shaped`)."""
    table, seat = view["table"], int(view["you"]["seat"])
    players = len(table["hand_sizes"])
    turns = DECK_SIZE - HAND_SIZE * players - table["stock_size"] - int(table["drawn"])  # draws: turns, about
    first = (table["dealer"] + 1) % players
    hands: list[tuple[str, ...]] = []
    for other, size in enumerate(table["hand_sizes"]):
        if other == seat:
            hands.append(own)
            continue
        kept = _kept_grab(table, other, shown, unseen)[:size]
        for card in kept:
            unseen.remove(card)
        hand = [unseen.pop() for _ in range(size - len(kept))]
        own_table = [(m.id, m.kind, m.cards) for m in melds if m.seat == other]
        if own_table or size != HAND_SIZE or turns > (other - first) % players:  # it has played a turn
            hand = _shaped(hand, kept, unseen, own_table, min(SHAPING_TURNS, max(1, turns // players)), rng)
        hands.append(rm.sort_cards([*kept, *hand]))
    return tuple(hands)


SHAPING_TURNS = 8
"""At most this many draw-and-discard turns of greedy play shape each other hand of a world."""
REPAIRS = 60
"""At most this many cards are exchanged to take the melds a greedy player would have laid out of a hand."""


def _shaped(
    hand: list[str], kept: Sequence[str], pool: list[str], melds: list[OwnMeld], turns: int, rng: SeededStream
) -> list[str]:
    """A hand as a greedy player holds it after its turn: it lays every meld of two natural cards or
    more and lays off every natural card that fits its melds (R-9 ... R-15), so its hand has none;
    and each turn it draws (R-6) and discards the card it needs least (R-11). Cards come from and go
    back to `pool`, the unseen cards; `kept` stay in the hand."""
    if not pool:
        return hand
    fits = [rm.lay_off_fits(kind, cards) for _, kind, cards in melds]
    for _ in range(REPAIRS):
        spare = _layable(hand, kept, melds, fits, len(hand) + len(kept) + 1)
        if spare is None:
            break
        i = rng.below(len(pool))
        hand[hand.index(spare)], pool[i] = pool[i], spare
    for _ in range(turns):
        i = rng.below(len(pool))
        drawn = [*hand, pool[i]]
        if _layable(drawn, kept, melds, fits, len(drawn) + len(kept)) is not None:
            continue  # greedy would have laid a meld or a card: no such turn went by unseen
        counts = Counter([*drawn, *kept])
        least = min(drawn, key=lambda c: (keep_score(c, counts, False), rm.card_key(c)))
        drawn.remove(least)
        hand, pool[i] = drawn, least
    return hand


def _layable(
    hand: Sequence[str], kept: Sequence[str], melds: list[OwnMeld], fits: Sequence[Mapping[str, Any]], holding: int
) -> str | None:
    """A card of `hand` that greedy, holding `holding` cards in its turn, would lay at once: a natural
    card fitting one of its melds (`fits`: what each meld takes, R-15), a joker too once the hand is
    nearly empty, or a card (a joker first) of a three-card meld with two natural cards or more,
    `kept` cards included (R-12, R-13)."""
    for takes in fits:
        for card in hand:
            if card in takes and (card != JOKER or holding <= ENDGAME_HAND):
                return card
    for kind, cards in rm.minimal_melds([*hand, *kept]):
        loose = [c for c in sorted(cards, key=lambda c: c != JOKER) if c in hand]  # a joker first
        if sum(1 for c in cards if c != JOKER) >= 2 and loose and _merge_ok(melds, kind, cards):
            return loose[0]
    return None


def _kept_grab(table: Mapping[str, Any], other: int, shown: Sequence[str], unseen: Sequence[str]) -> list[str]:
    """R-4: the grabbed cards the cutter `other` may still hold (not shown on the table, still unseen)."""
    cut = table["cut"]
    if cut is None or cut["by"] != other:
        return []
    left = Counter(cut["grabbed"])
    left.subtract(shown)
    left &= Counter(unseen)
    return sorted(left.elements(), key=rm.card_key)


def _fresh(table: Mapping[str, Any], melds: Sequence[LaidMeld]) -> bool:
    """R-20: whether the player to act had no meld when the turn began. Not drawn yet: it has none
    now. Drawn: a guess, that its melds (if any) are the latest ones laid, i.e. laid this turn."""
    turn = table["turn"]
    own = [m.id for m in melds if m.seat == turn]
    if not table["drawn"] or not own:
        return not own
    return all(m.seat == turn for m in melds if m.id > min(own))


DISCARD_CLOSE = 16.0
"""How near the card greedy needs least another card must be (in `keep_score`) for the expert to search it."""
QS_ALTERNATIVES = 2
"""When greedy would throw the QS away, how many of the next cards it needs least the expert weighs against that."""
TAKES_SEARCHED = 3
"""How many of the ways to take the discard pile greedy values best the expert weighs against drawing."""


def expert_candidates(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], limit: int) -> list[int]:
    """Rommé's shortlist for the expert, as indexes into `legal` (greedy's own choice is added to it):

    - the cut (R-3) is blind and going out (R-19) is always right: nothing to search;
    - drawing (R-6) against the best ways to take the discard pile (R-7);
    - with a meld, lay-off or swap at hand (R-9): laying now against discarding the card greedy
      needs least and holding the melds for a later turn (a meld kept in hand can still take the
      pile, R-7), unless the hand can go out this turn;
    - discards (R-11): the cards within DISCARD_CLOSE of the one greedy needs least; when that is
      the QS, the QS against the next QS_ALTERNATIVES cards (it costs 100 in hand, R-19, but is
      worth 100 in a meld).
    """
    types = {a["type"] for a in legal}
    hand = tuple(view["you"]["hand"])
    if "cut" in types:
        return []
    if types & {"draw", "take_discard"}:
        return _draw_shortlist(view, legal, hand, limit)
    if len(hand) == 1:
        return []
    discards = [i for i, a in enumerate(legal) if a["type"] == "discard"]
    scores = discard_scores(view, [legal[i] for i in discards], hand)
    order = sorted(range(len(discards)), key=lambda k: scores[k])
    ranked = [discards[k] for k in order]
    if types & {"meld", "lay_off", "swap_joker"}:
        way_out = len(hand) <= SEARCH_HAND and search_way_out(hand, own_melds(view, int(view["you"]["seat"])))
        return [] if way_out else ranked[:1]
    if legal[ranked[0]]["card"] == "QS":
        return ranked[: 1 + QS_ALTERNATIVES][:limit]
    return [discards[k] for k in order if scores[k] <= scores[order[0]] + DISCARD_CLOSE][:limit]


def _draw_shortlist(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], hand: tuple[str, ...], limit: int
) -> list[int]:
    """Drawing and the ways to take the pile greedy values best, when both are open (R-6, R-7, R-21)."""
    draws = [i for i, a in enumerate(legal) if a["type"] == "draw"]
    valued = take_values(view, legal, hand, own_melds(view, int(view["you"]["seat"])))
    if not draws or not valued:
        return []
    return [*draws, *(legal.index(take) for take, _ in valued[:TAKES_SEARCHED])][:limit]
