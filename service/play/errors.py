"""What the play layer refuses, as exceptions with a stable `code` and a `detail` (no HTTP here:
service/api/problems.py maps each class to its problem response at the edge)."""

from __future__ import annotations

from domain.errors import DomainError
from domain.errors import RuleViolation as DomainRuleViolation


class PlayError(Exception):
    """Base of every refusal of the play layer: nothing was written when one is raised."""

    code: str  # each class's own, or a Refusal's
    rule: str | None = None

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def as_data(self) -> dict[str, str]:
        """The refusal as JSON data, its code, detail and rule id (when it has one): what a dispute keeps
        of a step that does not replay (the API shows it as its problem, service/api/problems.py)."""
        data = {"code": self.code, "detail": self.detail}
        if self.rule:
            data["rule"] = self.rule
        return data


class Refusal(PlayError):
    """A refusal whose code comes with it (the rules', a malformed field's); `rule`: the rule id."""

    def __init__(self, code: str, detail: str, rule: str | None = None) -> None:
        super().__init__(detail)
        self.code = code
        self.rule = rule


class InvalidRequest(Refusal):
    """The request is malformed (a bad seed, an option out of range, a card the game does not know)."""


class Unauthorized(PlayError):
    """No token, or one that is not one of this game's seats."""

    code = "unauthorized"

    def __init__(self, detail: str = "this token is not valid for a seat of this game") -> None:
        super().__init__(detail)


class GameNotFound(PlayError):
    """No game has this id."""

    code = "game_not_found"

    def __init__(self, game_id: str) -> None:
        super().__init__(f"no game with id {game_id!r}")
        self.game_id = game_id


class VersionConflict(PlayError):
    """The caller's version is no longer current (or an append met another one at its version)."""

    code = "version_conflict"

    def __init__(self, expected: int, current: int) -> None:
        super().__init__(f"expected version {expected}, but the game is at version {current}")
        self.expected = expected
        self.current = current


class RulesRefusal(Refusal):
    """The rules refuse the action; `rule` names the rule (domain.errors.RuleViolation)."""


def refusal(error: DomainError) -> PlayError:
    """The domain's refusal as the play layer's: the rules' as RulesRefusal, malformed input as
    InvalidRequest, each with the domain's code, detail and rule id."""
    kind = RulesRefusal if isinstance(error, DomainRuleViolation) else InvalidRequest
    return kind(error.code, error.detail, error.rule)


class EventOutOfRange(PlayError):
    """A replay or a dispute names an event the game does not have."""

    code = "event_out_of_range"

    def __init__(self, last: int, asked: int) -> None:
        super().__init__(f"this game has events 1 to {last}, not {asked}")


class TooManyDisputes(PlayError):
    """The seat has filed its most disputes in this game."""

    code = "too_many_disputes"

    def __init__(self, per_seat: int) -> None:
        super().__init__(f"a seat may file at most {per_seat} disputes in a game")


class IdempotencyKeyReused(PlayError):
    """The Idempotency-Key was used for a different request in this game."""

    code = "idempotency_key_reused"

    def __init__(self) -> None:
        super().__init__("this Idempotency-Key was used for a different request in this game")


class StreamDamaged(PlayError):
    """The stored events of the game do not replay."""

    code = "stream_damaged"

    def __init__(self) -> None:
        super().__init__("the stored game does not replay; GET its /audit for the first bad event")


class NoFreeGameId(PlayError):
    """No free game id was found: the store answered `exists` to every one tried."""

    code = "store_unavailable"  # to the client, a store that cannot take a new game now

    def __init__(self) -> None:
        super().__init__("could not allocate a game id")


class BotExists(PlayError):
    """A bot of that name is registered already."""

    code = "bot_exists"

    def __init__(self, name: str) -> None:
        super().__init__(f"a bot named {name!r} is registered already")


class BotNotFound(PlayError):
    """No bot has that name."""

    code = "bot_not_found"

    def __init__(self, name: str) -> None:
        super().__init__(f"no bot named {name!r}")


class BotsFull(PlayError):
    """As many bots are registered as the operator allows (BOTS_MAX)."""

    code = "bots_full"

    def __init__(self, cap: int) -> None:
        super().__init__(f"this service takes at most {cap} registered bots")


class BadBotSeat(PlayError):
    """A seat names a bot that cannot sit there: a registered bot unknown, not registered for the game, or in two
    seats; a house level that does not play the game (a plug-in's for other games)."""

    code = "invalid_bot_seat"


def token_needed(what: str) -> str:
    """What an Unauthorized says when `what` (e.g. "an action") came without a seat token."""
    return f"{what} needs 'Authorization: Bearer <seat token>'"


class MatchNotFound(PlayError):
    """No match has this id."""

    code = "match_not_found"

    def __init__(self, match_id: str) -> None:
        super().__init__(f"no match with id {match_id!r}")


class BadMatch(PlayError):
    """A match that cannot be played as asked: a wrong number of entrants, an unknown entrant, a bot not registered
    for the game, an entrant twice, bad options; the detail names the field."""

    code = "invalid_match"


class MatchesFull(PlayError):
    """As many matches run as the operator allows, for this client or in all; `retry_after` in seconds."""

    code = "matches_full"
    retry_after = 30

    def __init__(self, detail: str, per_client: bool) -> None:
        super().__init__(detail)
        self.per_client = per_client
        if per_client:
            self.code = "rate_limited"  # as every per-client limit


class DealInPlay(PlayError):
    """A match's game whose deal is still being played: its cards are those of a game still to come (C-8), so
    nothing of it is shown but each seat's own view; `retry_after`: about when it opens, in seconds."""

    code = "deal_in_play"

    def __init__(self, deal: int | None, retry_after: int) -> None:
        what = (
            f"this game's deal ({deal}) is still being played in the match: only a seat's own view is shown until "
            "every game of the deal has finished (C-8)"
            if deal is not None
            else "the match is still being played: its record (with its seed) is made once it has finished"
        )
        super().__init__(f"{what}; try again in about {retry_after} s")
        self.retry_after = retry_after


class LadderNotFound(PlayError):
    """No game of the catalog has this id, so there is no ladder of it."""

    code = "ladder_not_found"

    def __init__(self, game: str) -> None:
        super().__init__(f"no game {game!r} in the catalog, so no ladder of it")
