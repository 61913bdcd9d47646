"""Fields that the games' view schemas share: card codes, seats, counts, scores, options, results.

Each helper returns a new marshmallow field; `required` and `allow_none` say whether the value is
always there and whether it may be null, and the description says what a client reads in it.
"""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from marshmallow import validate

from domain.cards import JOKER, RANKS, SUITS
from domain.engine import Game
from domain.options import MAX_EVENTS

RANK = "(?:" + "|".join(RANKS) + ")"
SUIT = "[" + "".join(SUITS) + "]"
NATURAL_CARD = f"^{RANK}{SUIT}$"
"""A French-suited card without the joker (C-1): rank A, 2 ... 10, J, Q, K, then suit S H D C."""
STANDARD_CARD = f"^(?:{RANK}{SUIT}|{JOKER})$"
"""Any C-1 card code: a natural card or the joker `JK`."""


def text(description: str, **kwargs: Any) -> dict[str, Any]:
    """Field keywords with a description for the document."""
    return {"metadata": {"description": description}, **kwargs}


def card(pattern: str, description: str, *, nullable: bool = False) -> ma.fields.String:
    """One card code of the game's codes (`pattern`, anchored); null where `nullable`."""
    return ma.fields.String(required=True, allow_none=nullable, validate=validate.Regexp(pattern), **text(description))


def cards(pattern: str, description: str, **kwargs: Any) -> ma.fields.List[Any]:
    """A list of card codes of the game's codes, in the order the description gives."""
    return ma.fields.List(
        ma.fields.String(validate=validate.Regexp(pattern)), required=True, **text(description, **kwargs)
    )


def hands(pattern: str, description: str) -> ma.fields.List[Any]:
    """Every hand's card codes, by seat (a full view)."""
    return ma.fields.List(
        ma.fields.List(ma.fields.String(validate=validate.Regexp(pattern))), required=True, **text(description)
    )


def seat(game: Game[Any], description: str, *, nullable: bool = False) -> ma.fields.Integer:
    """A seat number of this game (C-2): 0 to the most players less one."""
    return ma.fields.Integer(
        required=True,
        allow_none=nullable,
        validate=validate.Range(0, game.max_players - 1),
        **text(description),
    )


def seats(game: Game[Any], description: str) -> ma.fields.List[Any]:
    """A list of seat numbers of this game."""
    return ma.fields.List(
        ma.fields.Integer(validate=validate.Range(0, game.max_players - 1)), required=True, **text(description)
    )


def count(description: str, *, minimum: int = 0, maximum: int | None = None) -> ma.fields.Integer:
    """A whole number from `minimum` (a count: 0) up, always there."""
    return ma.fields.Integer(required=True, validate=validate.Range(minimum, maximum), **text(description))


def counts(description: str, *, minimum: int = 0) -> ma.fields.List[Any]:
    """A list of whole numbers from `minimum` up (per seat, in seat order, where the description says so)."""
    return ma.fields.List(ma.fields.Integer(validate=validate.Range(min=minimum)), required=True, **text(description))


def points(description: str) -> ma.fields.List[Any]:
    """Points per seat, in seat order; they may be below zero."""
    return ma.fields.List(ma.fields.Integer(), required=True, **text(description))


def round_scores(
    description: str = "every finished round's scores, oldest first; each lists the seats in order",
) -> ma.fields.List[Any]:
    """The scores of every round so far: one list per round, one number per seat."""
    return ma.fields.List(ma.fields.List(ma.fields.Integer()), required=True, **text(description))


def flag(description: str) -> ma.fields.Boolean:
    """A true/false that is always there."""
    return ma.fields.Boolean(required=True, **text(description))


def option(game: Game[Any], name: str) -> ma.fields.Field[Any]:
    """The value of one of the game's options, described and bounded as the catalog has it."""
    spec = next(spec for spec in game.options if spec.name == name)
    about = f"option `{name}`: {spec.description}"
    if spec.choices:
        return ma.fields.String(required=True, validate=validate.OneOf(spec.choices), **text(about))
    if isinstance(spec.default, bool):
        return flag(about)
    within = validate.Range(spec.minimum, spec.maximum)
    if name == MAX_EVENTS:  # C-9's: none in a game of an older rules version; its ceiling is the operator's
        return ma.fields.Integer(validate=within, **text(f"{about}; none in a game of an older rules version"))
    if isinstance(spec.default, list):  # a list of integers, as long as its default
        size = len(spec.default)
        return ma.fields.List(
            ma.fields.Integer(validate=within), required=True, validate=validate.Length(size, size), **text(about)
        )
    return ma.fields.Integer(required=True, validate=within, **text(about))


class GameResult(ma.Schema):
    """A finished game's result: the totals and the winners; an abandoned game's says so and why, and
    so does that of a game that ran out of events (C-9).

    Each game's module subclasses it (its own component, with its own words on who wins)."""

    totals = points("each seat's final total, in seat order")
    winners = ma.fields.List(
        ma.fields.Integer(validate=validate.Range(min=0)),
        required=True,
        **text("the seats that won (C-7: equal best totals share the win); empty for an abandoned game"),
    )
    abandoned = ma.fields.Boolean(
        validate=validate.Equal(True), **text("only in an abandoned game: true (the game ended without a winner)")
    )
    reason = ma.fields.String(
        **text(
            "only in a game that did not end by its own rules: why it was abandoned, or `event_limit` when it"
            " ran out of events (C-9: the hand in play unscored, the winners by the totals so far)"
        )
    )
