"""Rommé melds (R-12 ... R-16, R-18): validity, what each joker stands for, lay-off, joker swap,
card values, and the enumeration of every meld a hand can form.

A meld is a kind (`"set"` or `"run"`) and a tuple of card codes. A run is given in
order, lowest first as laid (R-13); that order fixes the card each joker stands for.
Runs go round the corner: rank indexes are taken modulo 13 (`A` = 0 ... `K` = 12), so
`Q K A 2` is consecutive. Equal codes are equal cards (C-1): a hand is a multiset.

Nothing here knows about turns or players; `domain/romme.py` adds R-9 (own melds),
R-10 (keep a card), R-12's one-set-per-rank merge and R-7/R-8 for the discard pile.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import types
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence

from domain.cards import JOKER, RANKS, SUITS
from domain.hands import replaced_at

SET, RUN = "set", "run"
KINDS = (SET, RUN)
MIN_SET, MAX_SET = 3, 8
MIN_RUN, MAX_RUN = 3, 13
MAX_PER_SUIT = 2
LOW, HIGH = "low", "high"
ENDS = (LOW, HIGH)

RANK_INDEX: Mapping[str, int] = {rank: i for i, rank in enumerate(RANKS)}
SUIT_INDEX: Mapping[str, int] = {suit: i for i, suit in enumerate(SUITS)}
CYCLE = len(RANKS)
CACHE_SIZE = 1 << 14
"""Entries kept by each cache of a pure function here (bots ask the same questions again and again)."""

Cards = tuple[str, ...]
Meld = tuple[str, Cards]
"""(kind, cards): a meld as a player lays it."""


# ---------------------------------------------------------------- cards and values


def rank(card: str) -> str:
    """The rank of a natural card."""
    return card[:-1]


def suit(card: str) -> str:
    """The suit of a natural card."""
    return card[-1]


def card_key(card: str) -> tuple[int, int]:
    """C-3 order: suits S H D C, ranks A ... K, the joker last."""
    key = _KEYS.get(card)
    return key if key is not None else _card_key(card)


def _card_key(card: str) -> tuple[int, int]:
    if card == JOKER:
        return (len(SUITS), 0)
    return (SUIT_INDEX[suit(card)], RANK_INDEX[rank(card)])


def sort_cards(cards: Iterable[str]) -> Cards:
    """Cards in C-3 order (a hand, or a set's canonical order)."""
    return tuple(sorted(cards, key=card_key))


def card_value(card: str) -> int:
    """R-18: 2-9 = 5; 10, J, Q, K = 10; A = 20; joker = 20; QS = 100."""
    value = _VALUES.get(card)
    return value if value is not None else _card_value(card)


def _card_value(card: str) -> int:
    if card == JOKER:
        return 20
    if card == "QS":
        return 100
    r = rank(card)
    if r == "A":
        return 20
    if r in ("10", "J", "Q", "K"):
        return 10
    return 5


def points(cards: Iterable[str]) -> int:
    """R-18: the value of some cards (a meld, a hand); a joker counts 20 wherever it lies."""
    return sum(map(card_value, cards))


SUIT_ROWS: Mapping[str, Cards] = {s: tuple(r + s for r in RANKS) for s in SUITS}
"""Each suit's card codes, A ... K."""
_CODES = (*(c for s in SUITS for c in SUIT_ROWS[s]), JOKER)
_KEYS: Mapping[str, tuple[int, int]] = {c: _card_key(c) for c in _CODES}
_VALUES: Mapping[str, int] = {c: _card_value(c) for c in _CODES}
"""Every card's C-3 key and R-18 value, worked out once."""


def code(rank_index: int, suit_code: str) -> str:
    """The card code of a rank index (taken round the corner) in a suit."""
    return RANKS[rank_index % CYCLE] + suit_code


# ---------------------------------------------------------------- validity


@dataclasses.dataclass(frozen=True)
class MeldProblem:
    """Why some cards are not a meld: the rule and a sentence for people."""

    rule: str
    detail: str


def set_problem(cards: Sequence[str]) -> MeldProblem | None:
    """R-12 / R-14: 3-8 cards of one rank, no suit more than twice, at least one natural card."""
    if not MIN_SET <= len(cards) <= MAX_SET:
        return MeldProblem("R-12", f"a set has {MIN_SET} to {MAX_SET} cards, not {len(cards)}")
    naturals = [c for c in cards if c != JOKER]
    if not naturals:
        return MeldProblem("R-14", "a meld needs at least one natural card; jokers alone are no set")
    ranks = sorted({rank(c) for c in naturals}, key=RANK_INDEX.__getitem__)
    if len(ranks) > 1:
        return MeldProblem("R-12", f"a set is of one rank, these cards are of ranks {', '.join(ranks)}")
    per_suit = Counter(suit(c) for c in naturals)
    crowded = [s for s in SUITS if per_suit[s] > MAX_PER_SUIT]
    if crowded:
        return MeldProblem(
            "R-12", f"a set holds no suit more than twice; {crowded[0]} is there {per_suit[crowded[0]]} times"
        )
    return None


def run_problem(cards: Sequence[str]) -> MeldProblem | None:
    """R-13 / R-14: 3-13 cards of one suit in consecutive ranks in the order given, round the corner."""
    if not MIN_RUN <= len(cards) <= MAX_RUN:
        return MeldProblem("R-13", f"a run has {MIN_RUN} to {MAX_RUN} cards, not {len(cards)}")
    naturals = [(i, c) for i, c in enumerate(cards) if c != JOKER]
    if not naturals:
        return MeldProblem("R-14", "a meld needs at least one natural card; jokers alone are no run")
    suits = sorted({suit(c) for _, c in naturals}, key=SUIT_INDEX.__getitem__)
    if len(suits) > 1:
        return MeldProblem("R-13", f"a run is of one suit, these cards are of suits {', '.join(suits)}")
    first_index, first = naturals[0]
    start = RANK_INDEX[rank(first)] - first_index
    for i, card in naturals[1:]:
        if RANK_INDEX[rank(card)] != (start + i) % CYCLE:
            expected = code(start + i, suits[0])
            return MeldProblem(
                "R-13",
                f"a run goes up one rank a card in the order given; place {i + 1} must be {expected}, not {card}",
            )
    return None


def meld_problem(kind: str, cards: Sequence[str]) -> MeldProblem | None:
    """Why `cards` are no meld of `kind` (None when they are one)."""
    if kind == SET:
        return set_problem(cards)
    if kind == RUN:
        return run_problem(cards)
    return MeldProblem("R-12", f"a meld is a set or a run, not {kind!r}")


def is_valid_meld(kind: str, cards: Sequence[str]) -> bool:
    """True when `cards` are a valid meld of `kind` (R-12, R-13, R-14)."""
    return meld_problem(kind, cards) is None


def set_rank(cards: Sequence[str]) -> str:
    """The rank of a valid set."""
    return next(rank(c) for c in cards if c != JOKER)


def run_start(cards: Sequence[str]) -> tuple[str, int]:
    """(suit, rank index of the first place) of a valid run; the index may be negative (mod 13)."""
    i, first = next((i, c) for i, c in enumerate(cards) if c != JOKER)
    return suit(first), (RANK_INDEX[rank(first)] - i) % CYCLE


def represented(kind: str, cards: Sequence[str]) -> tuple[str, ...]:
    """What each card of a valid meld stands for: itself, or for a joker (R-14) the card at its
    place in a run (`"6H"`) or the set's rank in a set (`"Q"`)."""
    return _represented(kind, tuple(cards))


@functools.lru_cache(maxsize=CACHE_SIZE)
def _represented(kind: str, cards: Cards) -> tuple[str, ...]:
    if kind == SET:
        r = set_rank(cards)
        return tuple(r if c == JOKER else c for c in cards)
    s, start = run_start(cards)
    return tuple(code(start + i, s) for i in range(len(cards)))


# ---------------------------------------------------------------- lay-off and joker swap


def lay_off_result(kind: str, cards: Sequence[str], card: str, end: str | None) -> Cards | None:
    """The meld after laying `card` off at `end` (runs) or into it (sets); None when it does not fit.

    R-15: a set takes the card when it stays a set; a run takes it only at its low end
    (before the first card) or its high end (after the last) and must stay a run.
    """
    if kind == SET:
        result = (*cards, card)
        return result if set_problem(result) is None else None
    if end == LOW:
        result = (card, *cards)
    elif end == HIGH:
        result = (*cards, card)
    else:
        return None
    return result if run_problem(result) is None else None


def lay_off_ends(kind: str, cards: Sequence[str], card: str) -> tuple[str | None, ...]:
    """Where `card` fits on a meld: `(None,)` for a set that takes it, else the run ends that do."""
    return _lay_off_ends(kind, tuple(cards), card)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _lay_off_ends(kind: str, cards: Cards, card: str) -> tuple[str | None, ...]:
    if kind == SET:
        return (None,) if lay_off_result(SET, cards, card, None) is not None else ()
    return tuple(end for end in ENDS if lay_off_result(RUN, cards, card, end) is not None)


def lay_off_fits(kind: str, cards: Sequence[str]) -> Mapping[str, tuple[str | None, ...]]:
    """Every card code that fits the meld (R-15), with `lay_off_ends` of each; read-only."""
    return _lay_off_fits(kind, tuple(cards))


@functools.lru_cache(maxsize=CACHE_SIZE)
def _lay_off_fits(kind: str, cards: Cards) -> Mapping[str, tuple[str | None, ...]]:
    return types.MappingProxyType({c: ends for c in _CODES if (ends := _lay_off_ends(kind, cards, c))})


def swap_index(kind: str, cards: Sequence[str], card: str) -> int | None:
    """R-16: the place of the joker that natural `card` replaces, or None when it replaces none.

    In a run the card must be exactly the one the joker stands for; in a set any card of
    the set's rank whose suit is then still there at most twice. In a set the first joker
    is replaced (jokers of a set are alike).
    """
    if card == JOKER or JOKER not in cards:
        return None
    return _swap_index(kind, tuple(cards), card)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _swap_index(kind: str, cards: Cards, card: str) -> int | None:
    if kind == SET:
        index = cards.index(JOKER)
        return index if set_problem(replaced_at(cards, index, card)) is None else None
    stands = represented(RUN, cards)
    for index, (placed, meant) in enumerate(zip(cards, stands, strict=True)):
        if placed == JOKER and meant == card:
            return index
    return None


def swapped(cards: Sequence[str], index: int, card: str) -> Cards:
    """The meld's cards with the joker at `index` replaced by `card`."""
    assert cards[index] == JOKER
    return replaced_at(tuple(cards), index, card)


def merge_problem(existing: Sequence[str], new: Sequence[str]) -> MeldProblem | None:
    """R-12: a second set of a rank joins the first; the joined set must still be a set."""
    problem = set_problem((*existing, *new))
    if problem is None:
        return None
    return MeldProblem(
        "R-12",
        f"a second set of {set_rank(existing)}s joins your first one, and together they break R-12: {problem.detail}",
    )


# ---------------------------------------------------------------- enumeration


def _naturals_by_rank(hand: Counter[str]) -> dict[str, dict[str, int]]:
    """rank -> suit -> copies held (capped at two: a set never takes more of a suit)."""
    out: dict[str, dict[str, int]] = {}
    for card, count in hand.items():
        if card != JOKER and count > 0:
            out.setdefault(rank(card), {})[suit(card)] = min(count, MAX_PER_SUIT)
    return out


def iter_sets(
    hand: Iterable[str], sizes: range = range(MIN_SET, MAX_SET + 1), jokers_max: int | None = None
) -> Iterator[Cards]:
    """Every valid set the multiset `hand` can form with a size in `sizes`, each once.

    Cards in canonical order (naturals in C-3 order, then jokers); sets by rank A ... K,
    then by the copies of each suit, then by the number of jokers.
    """
    counts = Counter(hand)
    held_jokers = counts[JOKER] if jokers_max is None else min(counts[JOKER], jokers_max)
    by_rank = _naturals_by_rank(counts)
    largest = min(MAX_SET, sizes.stop - 1)
    for r in RANKS:
        suits = by_rank.get(r)
        if not suits:
            continue
        choices = [range(suits.get(s, 0), -1, -1) for s in SUITS]
        for copies in itertools.product(*choices):
            naturals = sum(copies)
            if naturals == 0 or naturals > largest or naturals + held_jokers < sizes.start:
                continue  # no number of jokers makes a size in `sizes`
            base = tuple(r + s for s, n in zip(SUITS, copies, strict=True) for _ in range(n))
            for jokers in range(0, held_jokers + 1):
                size = naturals + jokers
                if size > MAX_SET or size > sizes.stop - 1:
                    break
                if size in sizes:
                    yield base + (JOKER,) * jokers


def iter_runs(
    hand: Iterable[str], lengths: range = range(MIN_RUN, MAX_RUN + 1), natural_first: bool = False
) -> Iterator[Cards]:
    """Every valid run the multiset `hand` can form with a length in `lengths`, each once, in order.

    A run is fixed by its suit, its first place, its length and which places hold a
    joker; a place whose natural card the hand lacks must hold one. With
    `natural_first` only the run that uses every natural card it can is given per
    (suit, first place, length). Runs by suit S H D C, first place A ... K, length.
    """
    counts = Counter(hand)
    jokers = counts[JOKER]
    longest = min(lengths.stop - 1, MAX_RUN)
    held_by_suit = _held_by_suit(counts)
    for s in SUITS:
        held = held_by_suit[s]
        if not any(held):
            continue
        row = [c if h else JOKER for c, h in zip(SUIT_ROWS[s], held, strict=True)] * 2  # twice: round the corner
        for start in range(CYCLE):
            missing = 0
            for length in range(1, longest + 1):
                if not held[(start + length - 1) % CYCLE]:
                    missing += 1
                if missing > jokers:
                    break  # a longer run from this place misses at least as many cards
                if length < lengths.start or missing == length:
                    continue
                natural = tuple(row[start : start + length])
                if natural_first:
                    yield natural
                else:
                    yield from _joker_variants(natural, jokers - missing)


def _held_by_suit(counts: Counter[str]) -> dict[str, list[bool]]:
    """suit -> for each rank index A ... K, whether the hand holds that natural card."""
    held = {s: [False] * CYCLE for s in SUITS}
    for card, count in counts.items():
        index, row = RANK_INDEX.get(rank(card)), held.get(suit(card))
        if count > 0 and index is not None and row is not None:
            row[index] = True
    return held


def _joker_variants(natural: Cards, spare: int) -> Iterator[Cards]:
    """`natural` and every variant with up to `spare` more natural cards replaced by jokers,
    keeping at least one natural card."""
    held = [i for i, c in enumerate(natural) if c != JOKER]
    for extra in range(0, min(spare, len(held) - 1) + 1):
        for chosen in itertools.combinations(held, extra):
            if not chosen:
                yield natural
                continue
            cards = list(natural)
            for i in chosen:
                cards[i] = JOKER
            yield tuple(cards)


def iter_melds(hand: Iterable[str]) -> Iterator[Meld]:
    """Every valid meld (R-12, R-13, R-14) that the multiset `hand` can form, each exactly once:
    every set, then every run (every order that fixes different joker places counts).

    Lazy: with many jokers there are tens of thousands of runs; take what you need.
    """
    cards = tuple(hand)
    for s in iter_sets(cards):
        yield SET, s
    for r in iter_runs(cards):
        yield RUN, r


def contains(multiset: Counter[str], cards: Iterable[str]) -> bool:
    """True when `multiset` holds every one of `cards` (with multiplicity)."""
    need = Counter(cards)
    return all(multiset[c] >= n for c, n in need.items())


def minimal_melds(hand: Iterable[str]) -> list[Meld]:
    """Every valid three-card meld of the hand: any meld that exists contains one (with its
    card of interest), so this says whether a meld is possible at all."""
    cards = tuple(hand)
    out: list[Meld] = [(SET, s) for s in iter_sets(cards, range(3, 4))]
    out += [(RUN, r) for r in iter_runs(cards, range(3, 4))]
    return out


def natural_melds(hand: Iterable[str]) -> list[Meld]:
    """The melds a player builds from what they hold: every set of natural cards only, and
    per (suit, first place, length) the run that uses the hand's natural cards, with jokers
    only in its gaps (both ends natural)."""
    cards = tuple(hand)
    out: list[Meld] = [(SET, s) for s in iter_sets(cards, jokers_max=0)]
    for r in iter_runs(cards, natural_first=True):
        if r[0] != JOKER and r[-1] != JOKER:
            out.append((RUN, r))
    return out


def candidate_melds(hand: Iterable[str], cap: int) -> list[Meld]:
    """A finite, canonical list of melds for `legal_actions`: `natural_melds` (longest first),
    then every three-card meld, without repeats, at most `cap` of them."""
    return list(_candidate_melds(tuple(sorted(hand)), cap))


@functools.lru_cache(maxsize=CACHE_SIZE)
def _candidate_melds(cards: Cards, cap: int) -> tuple[Meld, ...]:
    """`candidate_melds` of a hand in a canonical order (the list depends only on the multiset)."""
    natural = sorted(natural_melds(cards), key=lambda m: -len(m[1]))
    out: list[Meld] = []
    seen: set[Meld] = set()
    for meld in itertools.chain(natural, minimal_melds(cards)):
        if meld not in seen:
            seen.add(meld)
            out.append(meld)
            if len(out) >= cap:
                break
    return tuple(out)
