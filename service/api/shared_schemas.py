"""The schemas that more than one route module answers with: the view frame and its per-game variants,
the seats, and the bounds every route shares; route modules import these, never each other."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import marshmallow as ma
from marshmallow import validate

from domain import engine
from domain.bots import LEVEL_NAME, LEVELS, all_levels
from service.api.action_event_schemas import game_name
from service.api.spec_plugin import Either, Enum, Named, union_of
from service.api.view_schemas import view_schemas
from service.play.seats import KINDS

MAX_SEQ = 2**53 - 1  # far beyond any game; keeps `after + 1` a valid Redis stream id
SEAT_KINDS = tuple(KINDS)  # every kind of seat the seat registry knows (service/play/seats.py)
SEED_SOURCES = ("server", "creator")
STATUSES = ("active", "finished")


BOT_LEVEL = {
    "type": "string",
    "pattern": f"^{LEVEL_NAME.pattern}$",
    "description": f"a house bot level: {', '.join(f'`{level}`' for level in LEVELS[:-1])} and `{LEVELS[-1]}` play"
    " every game, and a level that a plug-in adds plays the games it names; the catalog lists each game's"
    " (`bot_levels`)",
}
"""The document's BotLevel: the same whatever plug-ins a service has, as the committed openapi.yaml is."""


def _known_level(level: str) -> None:
    """A level this service plays, a plug-in's included (asked at each request: the live registry)."""
    if level not in all_levels():
        raise ma.ValidationError(f"Must be one of: {', '.join(all_levels())}.")


def bot_level(description: str) -> Named:
    """A seat's `level`: documented as BOT_LEVEL, checked against the levels of this service."""
    return Named("BotLevel", BOT_LEVEL, validate=_known_level, metadata={"description": description})


class SeatCreatedSchema(ma.Schema):
    seat = ma.fields.Integer(required=True)
    kind = Enum("SeatKind", SEAT_KINDS, required=True)
    name = ma.fields.String(required=True)
    level = bot_level("house bots only")
    think_ms = ma.fields.Integer()
    bot = ma.fields.String(metadata={"description": "a registered bot's seat: the bot's name"})
    token = ma.fields.String(metadata={"description": "humans only; shown once"})


class SeatViewSchema(ma.Schema):
    seat = ma.fields.Integer(required=True)
    kind = Enum("SeatKind", SEAT_KINDS, required=True)
    name = ma.fields.String(required=True)
    level = bot_level("house bots only")
    think_ms = ma.fields.Integer()
    bot = ma.fields.String(metadata={"description": "a registered bot's seat: the bot's name"})
    score = ma.fields.Integer(required=True)


class GameTyped(ma.fields.Raw):
    """A field of a frame (GameViewFrameSchema, RecordFrameSchema) that each game's schema types."""


class MatchPlaceSchema(ma.Schema):
    match = ma.fields.String(required=True, metadata={"description": "the match's id"})
    deal = ma.fields.Integer(required=True, metadata={"description": "the deal, from 0 (C-8)"})
    rotation = ma.fields.Integer(required=True, metadata={"description": "the rotation of the deal's entrants, from 0"})


DEAL_IN_PLAY = "a match's game whose deal is still being played (`deal_in_play`, C-8); `Retry-After` says when"
MATCH_PLACE = {"description": "a match's game: its match, deal and rotation (C-8); absent for other games"}


class GameViewFrameSchema(ma.Schema):
    """The fields of every game's view, in the order of an answer; each game's own view schema types
    the game's parts (`GameTyped`), which keep their place here (see by_game)."""

    id = ma.fields.String(required=True)
    game = GameTyped()
    rules_version = ma.fields.Integer(
        required=True, metadata={"description": "the version of the game's rules it is played under"}
    )
    stacked = ma.fields.Boolean(required=True)
    status = Enum("GameStatus", STATUSES, required=True)
    version = ma.fields.Integer(required=True)
    round = ma.fields.Integer(required=True)
    phase = GameTyped()
    to_act = ma.fields.List(ma.fields.Integer(), required=True)
    seats = ma.fields.List(ma.fields.Nested(SeatViewSchema), required=True)
    table = GameTyped()
    you = GameTyped()
    actions = GameTyped()
    result = GameTyped()
    turn_seconds = ma.fields.Integer(required=True, allow_none=True, metadata={"description": "null: no timeout"})
    match = ma.fields.Nested(MatchPlaceSchema, metadata=MATCH_PLACE)


def game_view_fields(game: engine.Game[Any], full: bool = False) -> dict[str, ma.fields.Field[Any]]:
    """What a game's view types beyond the frame: its id, phases, action types, table, you and result;
    `full`: the table may be the full one, every card (a finished game's replay)."""
    parts = view_schemas(game)
    table: ma.fields.Field[Any] = ma.fields.Nested(parts.table, required=True, metadata={"description": "public"})
    if full and parts.full_table is not parts.table:
        table = Either(
            [parts.full_table, parts.table],
            required=True,
            metadata={"description": "public; in a finished game's replay without a token, every card"},
        )
    return {
        "game": ma.fields.String(required=True, validate=validate.OneOf([game.id])),
        "phase": ma.fields.String(required=True, validate=validate.OneOf(parts.phases) if parts.phases else None),
        "actions": ma.fields.List(
            ma.fields.String(validate=validate.OneOf([spec.type for spec in game.actions])),
            required=True,
            metadata={"description": "the action types the seat may send now"},
        ),
        "table": table,
        "you": ma.fields.Nested(
            parts.you, metadata={"description": "the seat's own view, with `legal`: every action it may send now"}
        ),
        "result": ma.fields.Nested(
            parts.result, required=True, allow_none=True, metadata={"description": "when finished: totals, winners"}
        ),
    }


class GameVariants(Mapping[str, type[ma.Schema]]):
    """One schema a registered game, by game id, each made at its first use (see by_game)."""

    def __init__(
        self, frame: type[ma.Schema], suffix: str, fields: Callable[[engine.Game[Any]], dict[str, ma.fields.Field[Any]]]
    ) -> None:
        self.frame = frame
        self.suffix = suffix
        self.fields = fields
        self._made: dict[engine.Game[Any], tuple[type[ma.Schema], ma.Schema]] = {}

    def _of(self, game_id: str) -> tuple[type[ma.Schema], ma.Schema]:
        """The game's schema and an instance of it to dump with."""
        game = engine.registered(game_id)
        if game is None:
            raise KeyError(game_id)
        made = self._made.get(game)
        if made is None:
            variant = self.frame.from_dict(self.fields(game), name=f"{game_name(game)}{self.suffix}")
            untyped = [key for key, field in variant._declared_fields.items() if isinstance(field, GameTyped)]
            assert not untyped, f"{game.id}'s {self.suffix} leaves {untyped} untyped"
            made = self._made[game] = (variant, variant())
        return made

    def __getitem__(self, game_id: str) -> type[ma.Schema]:
        return self._of(game_id)[0]

    def __iter__(self) -> Iterator[str]:
        return iter([game.id for game in engine.all_games()])

    def __len__(self) -> int:
        return len(engine.all_games())

    def dump(self, obj: Mapping[str, Any]) -> Any:
        """`obj` dumped through the schema of its game."""
        return self._of(obj["game"])[1].dump(obj)


class ByGame(ma.Schema):
    """An answer that one schema a game types: dumped through its game's schema (which keeps the
    declared fields only) and documented as their oneOf, told apart by `game`."""

    variants: ClassVar[GameVariants]

    def dump(self, obj: Any, *, many: bool | None = None) -> Any:
        if self.many if many is None else many:
            return [self.dump(one, many=False) for one in obj]
        return self.variants.dump(obj)

    @classmethod
    def openapi_schema(cls, converter: Any) -> dict[str, Any]:
        """oneOf the games' schemas with a discriminator on `game`."""
        return union_of(converter, cls.variants, "game")


def by_game(
    frame: type[ma.Schema], suffix: str, fields: Callable[[engine.Game[Any]], dict[str, ma.fields.Field[Any]]]
) -> GameVariants:
    """One schema a game, for every game registered when it is asked for: `frame`'s fields and the game's own
    `fields` (e.g. GolfGameView); a field the frame holds as GameTyped keeps its place, so every game's answer
    has the frame's order."""
    variants = GameVariants(frame, suffix, fields)
    for game_id in variants:  # the built-in games' schemas are checked as the module loads
        variants[game_id]
    return variants


def full_view_fields(game: engine.Game[Any]) -> dict[str, ma.fields.Field[Any]]:
    """A view's fields where the table may be the full one (a finished game's replay)."""
    return game_view_fields(game, full=True)


class GameViewSchema(ByGame):
    """A game as a seat (or a spectator) sees it, typed by its game."""

    variants = by_game(GameViewFrameSchema, "GameView", game_view_fields)
