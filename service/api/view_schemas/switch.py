"""Switch's view parts (domain/switch.py): the table, a seat's own view, the result, the full table."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from domain import switch
from domain.cards import SUITS
from service.api.view_schemas import ViewSchemas, legal_actions_field
from service.api.view_schemas import fields as f
from service.api.view_schemas.fields import STANDARD_CARD

GAME = switch.SWITCH
DIRECTIONS = ("clockwise", "counterclockwise")


class SwitchTable(ma.Schema):
    """Switch's public table."""

    dealer = f.seat(GAME, "the hand's dealer")
    turn = f.seat(GAME, "whose turn it is; null outside the choose_suit and play phases", nullable=True)
    direction = ma.fields.String(
        required=True,
        validate=validate.OneOf(DIRECTIONS),
        **f.text("the direction of play (a K reverses it, S-3, S-5)"),
    )
    top_card = f.card(STANDARD_CARD, "the top card of the discard pile; null before the first deal", nullable=True)
    suit = ma.fields.String(
        required=True,
        allow_none=True,
        validate=validate.OneOf(SUITS),
        **f.text(
            "the current suit (S-4, S-5); null when there is none: after a JK start card (S-5), "
            "or while the first player names the suit of a J start card (S-3)"
        ),
    )
    pending_draw = f.count("cards the next player must draw unless they stack a 2 or a joker (S-7)")
    hand_sizes = f.counts("cards in each hand, by seat; empty before the first deal")
    out = f.seats(GAME, "the seats without cards this hand")
    stock_size = f.count("cards in the stock")
    discard = f.cards(STANDARD_CARD, "the discard pile, bottom first")
    drawn_by = f.seat(
        GAME, "the seat holding a card it drew and may still play (S-6); null when none is", nullable=True
    )
    round_scores = f.round_scores("each finished hand's scores (S-10), oldest first, by seat")
    hand_size = f.option(GAME, "hand_size")
    match_rank = f.option(GAME, "match_rank")
    target = f.option(GAME, "target")


class SwitchFullTable(SwitchTable):
    """Switch's table with every card: the hands, the stock and the drawn card."""

    hands = f.hands(STANDARD_CARD, "every hand, by seat, in C-3 order")
    stock = f.cards(STANDARD_CARD, "the stock, top first")
    drawn = f.card(STANDARD_CARD, "the card drawn this turn that may still be played (S-6); else null", nullable=True)


class SwitchYou(ma.Schema):
    """What one Switch seat sees of its own."""

    seat = f.seat(GAME, "your seat")
    hand = f.cards(STANDARD_CARD, "your hand in C-3 order")
    hand_value = f.count("what your hand would score now (S-10)")
    drawn = f.card(
        STANDARD_CARD, "the card you drew this turn, to play or keep with `pass` (S-6); else null", nullable=True
    )
    playable = f.cards(STANDARD_CARD, "every card of your hand that some legal play plays now, once each, C-3 order")
    legal = legal_actions_field(GAME.id)


class SwitchResult(f.GameResult):
    """Switch's result."""

    winners = f.seats(GAME, "the seats with the lowest total (S-11, C-7: equal totals share); empty when abandoned")


VIEWS = ViewSchemas(
    table=SwitchTable,
    you=SwitchYou,
    result=SwitchResult,
    full_table=SwitchFullTable,
    phases=(switch.CHOOSE_SUIT, switch.PLAY, switch.HAND_OVER, switch.BETWEEN_ROUNDS, switch.FINISHED),
)
