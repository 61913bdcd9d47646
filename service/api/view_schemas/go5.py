"""Go5's view parts (domain/go5.py): the table, a seat's own view, the result, the full table."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from domain import go5
from service.api.view_schemas import ViewSchemas, legal_actions_field
from service.api.view_schemas import fields as f

GAME = go5.GO5
NUMBER_CARD = f"[{min(go5.NUMBERS)}-{max(go5.NUMBERS)}]-(?:{'|'.join(go5.PATTERNS)})-(?:{'|'.join(go5.COLOURS)})"
CARD = f"^(?:{NUMBER_CARD}|{go5.JOKER})$"
"""A Go5 card code that a hand, a set or the discard pile holds (V-2): `3-waves-blue` or `joker`;
stop cards are never held (V-6): they are counted in `stops`."""
ANY_CARD = f"^(?:{NUMBER_CARD}|{go5.JOKER}|{go5.STOP})$"
"""Any Go5 card code (V-2), `stop` included: what the stock holds."""
ROUND_ENDS = (go5.FIVE_REACHED, go5.GO5_CALLED, go5.STOCK_EMPTY)
SET_VALUE = {
    "oneOf": [
        {"type": "integer", "minimum": min(go5.NUMBERS), "maximum": max(go5.NUMBERS)},
        {"type": "string", "enum": [*go5.PATTERNS, *go5.COLOURS]},
    ]
}


class Go5Set(ma.Schema):
    """A set on the table (V-9)."""

    id = f.count("the set's id, for `lay_off`, `swap` and `go5`", minimum=1)
    owner = f.seat(GAME, "whose set")
    feature = ma.fields.String(
        required=True,
        validate=validate.OneOf(go5.FEATURES),
        **f.text("what its cards share: number, pattern or colour"),
    )
    value = ma.fields.Raw(
        required=True,
        metadata={
            "description": "the shared value: a number 1-7, a pattern or a colour, as `feature` says",
            **SET_VALUE,
        },
    )
    cards = f.cards(CARD, "its cards in the order played", validate=validate.Length(3, go5.FIVE))
    joker = f.flag("the set holds a joker")


class Go5Player(ma.Schema):
    """What everybody sees of one player."""

    seat = f.seat(GAME, "whose")
    hand_size = f.count("cards in the hand")
    stops = f.count("stop cards lying in front of the player, still to play (V-6, V-10)")
    sets = ma.fields.List(ma.fields.Nested(Go5Set), required=True, **f.text("the player's sets, as laid"))


class Go5Table(ma.Schema):
    """Go5's public table."""

    dealer = f.seat(GAME, "the round's dealer")
    turn = f.seat(GAME, "whose turn it is; null outside the draw and play phases", nullable=True)
    stock_size = f.count("cards in the stock")
    discard_top = f.card(CARD, "the top discard; null when the pile is empty", nullable=True)
    discard_size = f.count("cards in the discard pile (only its top card shows)")
    go5_open = f.flag("a Go5 call on the top discard is open (V-13): until the next draw")
    discarded_by = f.seat(
        GAME, "who made the discard that a Go5 call may take (V-13); null once the next player has drawn", nullable=True
    )
    played = f.flag("the player to act has made the turn's one play (V-8)")
    stop_played = f.flag("the player to act has played a stop card this turn (V-10)")
    reshuffles = f.count("reshuffles of the discard pile this round (V-14)")
    players = ma.fields.List(ma.fields.Nested(Go5Player), required=True, **f.text("every player, in seat order"))
    stops_out = f.count("stop cards played this round: they left the round")
    round_scores = f.round_scores()
    round_ends = ma.fields.List(
        ma.fields.String(validate=validate.OneOf(ROUND_ENDS)),
        required=True,
        **f.text(
            "how each finished round ended, oldest first: `five` (a five-card set, V-12), `go5` (a call, V-13) "
            "or `stock_empty` (V-14)"
        ),
    )
    closer = f.seat(
        GAME, "who ended the last round (five or go5); null during a round or after an empty stock", nullable=True
    )
    pattern_values = f.option(GAME, "pattern_values")
    joker_value = f.option(GAME, "joker_value")
    target = f.option(GAME, "target")


class Go5FullTable(Go5Table):
    """Go5's table with every card: the stock, the whole discard pile and the hands."""

    stock = f.cards(ANY_CARD, "the stock, top first (stop cards included)")
    discard = f.cards(CARD, "the discard pile, bottom first")
    hands = f.hands(CARD, "every hand, by seat, in canonical order (V-3)")


class Go5You(ma.Schema):
    """What one Go5 seat sees of its own."""

    seat = f.seat(GAME, "your seat")
    hand = f.cards(CARD, "your hand in canonical order (V-3)")
    stops = f.count("your stop cards still to play (V-10)")
    go5 = f.counts(
        "ids of your four-card sets that the top discard completes, while you may call Go5 (V-13)", minimum=1
    )
    legal = legal_actions_field(GAME.id)


class Go5Result(f.GameResult):
    """Go5's result."""

    winners = f.seats(GAME, "the seats with the most points (V-16, C-7: equal totals share); empty when abandoned")


VIEWS = ViewSchemas(
    table=Go5Table,
    you=Go5You,
    result=Go5Result,
    full_table=Go5FullTable,
    phases=(go5.DRAW, go5.PLAY, go5.ROUND_OVER, go5.BETWEEN_ROUNDS, go5.FINISHED),
)
