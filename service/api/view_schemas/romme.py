"""Rommé's view parts (domain/romme.py): the table, a seat's own view, the result, the full table."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from domain import romme
from domain import romme_melds as rm
from domain.cards import RANKS, SUITS
from service.api.view_schemas import ViewSchemas, legal_actions_field
from service.api.view_schemas import fields as f
from service.api.view_schemas.fields import NATURAL_CARD, RANK, STANDARD_CARD, SUIT

GAME = romme.ROMME
STANDS_FOR = f"^{RANK}{SUIT}?$"
"""What a card of a meld stands for: a card code (in a run, or a natural card of a set) or, for a
joker in a set, the set's rank (R-14)."""
ROUND_ENDS = (romme.WENT_OUT, romme.STOCK_EMPTY)


class RommeJoker(ma.Schema):
    """A joker in a meld and what it stands for (R-14)."""

    index = f.count("the joker's place among the meld's cards, from 0")
    stands_for = ma.fields.String(
        required=True,
        validate=validate.Regexp(STANDS_FOR),
        **f.text("in a run the card it replaces (`6H`), in a set the set's rank (`Q`)"),
    )


class RommeMeld(ma.Schema):
    """A meld on the table. A set has `rank`; a run has `suit`, `low` and `high`."""

    id = f.count("the meld's id, for `lay_off` and `swap_joker`", minimum=1)
    seat = f.seat(GAME, "whose meld (only its owner adds to it, R-9)")
    kind = ma.fields.String(required=True, validate=validate.OneOf(rm.KINDS), **f.text("`set` or `run` (R-12, R-13)"))
    cards = f.cards(
        STANDARD_CARD,
        "its cards; a run's in order, lowest first (R-13)",
        validate=validate.Length(rm.MIN_SET, rm.MAX_RUN),
    )
    stands_for = ma.fields.List(
        ma.fields.String(validate=validate.Regexp(STANDS_FOR)),
        required=True,
        **f.text("what each card stands for, by place: a card code, or the rank for a joker in a set"),
    )
    jokers = ma.fields.List(ma.fields.Nested(RommeJoker), required=True, **f.text("the jokers in the meld"))
    points = f.count("what the meld's cards are worth (R-18)")
    rank = ma.fields.String(validate=validate.OneOf(RANKS), **f.text("sets only: the set's rank"))
    suit = ma.fields.String(validate=validate.OneOf(SUITS), **f.text("runs only: the run's suit"))
    low = ma.fields.String(
        validate=validate.Regexp(NATURAL_CARD), **f.text("runs only: the card its lowest place stands for")
    )
    high = ma.fields.String(
        validate=validate.Regexp(NATURAL_CARD), **f.text("runs only: the card its highest place stands for")
    )


class RommeCut(ma.Schema):
    """The round's cut (R-3) and lucky grab (R-4)."""

    by = f.seat(GAME, "the cutter, right of the dealer")
    position = f.count("how many cards were lifted", minimum=1, maximum=romme.DECK_SIZE - 1)
    grabbed = f.cards(STANDARD_CARD, "the QS and jokers that lay at the cut and went to the cutter's hand, face up")


class RommeLastRound(ma.Schema):
    """How the last round ended and was scored (R-19 ... R-21)."""

    round = f.count("the round", minimum=1)
    winner = f.seat(GAME, "who went out; null when the stock ran out (R-21)", nullable=True)
    reason = ma.fields.String(
        required=True,
        validate=validate.OneOf(ROUND_ENDS),
        **f.text("`went_out`: a player went out (R-19); `stock_empty`: the stock ran out (R-21)"),
    )
    doubled = f.flag("the scores were doubled for a hand aus (R-20)")
    meld_points = f.counts("each seat's meld points, by seat")
    hand_points = f.counts("each seat's points left in hand, by seat")
    scores = f.points("each seat's score of the round, by seat")


class _RommeTableFields(ma.Schema):
    """What the public and the full table of Rommé share: all but `face_down`, a count in the one
    and the card itself in the other."""

    target = f.option(GAME, "target")
    strict_1000 = f.option(GAME, "strict_1000")
    hand_aus_doubles = f.option(GAME, "hand_aus_doubles")
    dealer = f.seat(GAME, "the round's dealer")
    cutter = f.seat(GAME, "who cuts this round (R-3); null before the first round", nullable=True)
    turn = f.seat(GAME, "whose turn it is; null outside the play phase", nullable=True)
    drawn = f.flag("the player to act has drawn this turn (always false outside the play phase)")
    cut = ma.fields.Nested(
        RommeCut, required=True, allow_none=True, **f.text("the round's cut and lucky grab; null before the cut")
    )
    stock_size = f.count("cards in the stock")
    discard = f.cards(STANDARD_CARD, "the discard pile, bottom first")
    discard_top = f.card(STANDARD_CARD, "the top discard; null when the pile is empty", nullable=True)
    discard_size = f.count("cards in the discard pile")
    hand_sizes = f.counts("cards in each hand, by seat")
    melds = ma.fields.List(ma.fields.Nested(RommeMeld), required=True, **f.text("every meld on the table, as laid"))
    meld_points = f.counts("what each seat's melds are worth, by seat (R-18)")
    out_of_game = f.cards(STANDARD_CARD, "jokers swapped out of melds (R-16): they left the round")
    went_out = f.seat(GAME, "who went out this round (R-19); null until someone does", nullable=True)
    round_scores = f.round_scores()
    totals = f.points("each seat's total so far, by seat")
    last_round = ma.fields.Nested(
        RommeLastRound, required=True, allow_none=True, **f.text("how the last round ended; null before the first ends")
    )
    mark_reached = f.flag("a total has reached the target: the game ends once one player leads alone (R-22, R-23)")


class RommeTable(_RommeTableFields):
    """Rommé's public table."""

    face_down = f.count(
        "cards lying face down after going out (R-11): 0 or 1; the card shows in the full view", maximum=1
    )


class RommeFullTable(_RommeTableFields):
    """Rommé's table with every card, so that each card of the round has its place (R-17)."""

    hands = f.hands(STANDARD_CARD, "every hand, by seat, in C-3 order")
    stock = f.cards(STANDARD_CARD, "the stock, top first")
    face_down = f.cards(STANDARD_CARD, "the card discarded face down to go out (R-11); empty if none")
    deck = f.cards(STANDARD_CARD, "the round's deck, top first, until the cut; then empty")
    lifted = f.cards(STANDARD_CARD, "the cut's lifted packet, top first, until the deal (the lucky grab has left it)")
    lower = f.cards(STANDARD_CARD, "the cut's lower packet, top first, until the deal")


class RommeYou(ma.Schema):
    """What one Rommé seat sees of its own."""

    seat = f.seat(GAME, "your seat")
    hand = f.cards(STANDARD_CARD, "your hand in C-3 order; empty before the deal")
    hand_size = f.count("cards in your hand")
    hand_points = f.count("what your hand is worth (R-18)")
    legal = legal_actions_field(GAME.id)


class RommeResult(f.GameResult):
    """Rommé's result."""

    winners = f.seats(GAME, "the seats with the most points (R-22, R-23, C-7); empty when abandoned")


VIEWS = ViewSchemas(
    table=RommeTable,
    you=RommeYou,
    result=RommeResult,
    full_table=RommeFullTable,
    phases=(romme.BETWEEN_ROUNDS, romme.CUT, romme.DEAL, romme.PLAY, romme.OVER, romme.FINISHED),
)
