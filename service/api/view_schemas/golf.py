"""Golf's view parts (domain/golf.py): the table, a seat's own view, the result, the full table."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from marshmallow import validate

from domain import golf
from service.api.view_schemas import ViewSchemas, legal_actions_field
from service.api.view_schemas import fields as f
from service.api.view_schemas.fields import NATURAL_CARD

GAME = golf.GOLF
GRID_SIZES = (6, 9)  # G-2: 2x3 or 3x3


class GolfSlot(ma.Schema):
    """One place of a grid."""

    state = ma.fields.String(
        required=True,
        validate=validate.OneOf((golf.UP, golf.DOWN, golf.EMPTY)),
        **f.text("`up`: the card shows; `down`: face down; `empty`: its column was cleared (G-9)"),
    )
    card = f.card(NATURAL_CARD, "the card when face up (or, in the full view, face down); else null", nullable=True)


def slots(description: str) -> ma.fields.List[Any]:
    """A grid's places by position, row by row (G-2)."""
    return ma.fields.List(
        ma.fields.Nested(GolfSlot),
        required=True,
        validate=validate.Length(min(GRID_SIZES), max(GRID_SIZES)),
        **f.text(description),
    )


class GolfGrid(ma.Schema):
    """One player's grid as the table shows it."""

    seat = f.seat(GAME, "whose grid")
    slots = slots("the places by position, row by row: positions 0-2 are the top row (G-2)")


class GolfTable(ma.Schema):
    """Golf's public table."""

    layout = f.option(GAME, "layout")
    rounds = f.option(GAME, "rounds")
    dealer = f.seat(GAME, "the round's dealer")
    turn = f.seat(GAME, "whose turn it is; null outside the play phase", nullable=True)
    grids = ma.fields.List(ma.fields.Nested(GolfGrid), required=True, **f.text("every seat's grid, in seat order"))
    stock_size = f.count("cards in the stock")
    discard = f.cards(NATURAL_CARD, "the discard pile, bottom first")
    discard_top = f.card(NATURAL_CARD, "the top discard; null when the pile is empty", nullable=True)
    drawn_by = f.seat(GAME, "the seat holding a card drawn from the stock (G-6); null when none is", nullable=True)
    ended_by = f.seat(
        GAME, "the seat that ended the round by turning up its last card (G-11); null until then", nullable=True
    )
    round_scores = f.round_scores("each finished round's scores, penalty included (G-13, G-14), oldest first, by seat")


class GolfFullTable(GolfTable):
    """Golf's table with every card: face-down cards show in the grids; the stock and the drawn card."""

    stock = f.cards(NATURAL_CARD, "the stock, top first")
    drawn = f.card(NATURAL_CARD, "the card drawn from the stock and not yet placed; null when none is", nullable=True)


class GolfYou(ma.Schema):
    """What one Golf seat sees of its own."""

    seat = f.seat(GAME, "your seat")
    hand = ma.fields.List(
        ma.fields.Nested(GolfSlot),
        required=True,
        **f.text("your grid by position (your face-down cards stay hidden); empty before the first deal"),
    )
    drawn = f.card(NATURAL_CARD, "the card you drew from the stock, to swap or discard (G-6); else null", nullable=True)
    legal = legal_actions_field(GAME.id)


class GolfResult(f.GameResult):
    """Golf's result."""

    winners = f.seats(GAME, "the seats with the lowest total (G-15, C-7: equal totals share); empty when abandoned")


VIEWS = ViewSchemas(
    table=GolfTable,
    you=GolfYou,
    result=GolfResult,
    full_table=GolfFullTable,
    phases=(golf.SETUP, golf.PLAY, golf.BETWEEN_ROUNDS, golf.FINISHED),
)
