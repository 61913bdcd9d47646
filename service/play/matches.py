"""Matches on duplicate deals (rules C-8, shared/API.md "Matches"): any entrants, house levels, plug-in levels or
registered bots, play the same deals with their seats rotated, so that luck cancels.

A match's games are ordinary games (replay, audit, disputes and the archive work on them) with ids of their own,
`<match id>-<deal>-<rotation>`, so a game is never started twice for one (deal, rotation): a second start finds
the id taken. The games of one deal run one after another, deals in parallel up to MATCH_DEALS_AT_ONCE
(default 4). `advance` starts what is due and finishes the match when every game has finished: it runs when a
match is created, whenever one of its games ends (GameService.when_ended, in the process that ended it) and on
every reconciler pass for every running match (workers/reconcile.py), so a lost step is repaired within seconds
and a match never stalls.

Until every game of a deal has finished, its games show nothing but each seat's own view (`check_open`: 403
`deal_in_play`): their cards are those of games still to be played. The match's seed and nonce are shown once
it has finished.

Settings (environment): MATCH_DEALS_AT_ONCE, MATCHES_PER_CLIENT (running matches one client may have, default
2; 0: no limit) and MATCHES_RUNNING_MAX (running matches in all, default 20).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import secrets
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from domain import engine
from domain.bots import levels_for
from domain.duplicate_deals import (
    DealGame,
    deal_game,
    deal_scores,
    deal_seed,
    entrant_label,
    match_commitment,
    results,
    seating,
)
from domain.errors import DomainError
from domain.shuffle import is_valid_seed, new_nonce, new_server_seed
from domain.verify import MATCH_FORMAT
from service.play.bot_turns import rfc3339
from service.play.errors import BadBotSeat, BadMatch, DealInPlay, MatchesFull, MatchNotFound
from service.play.game_history import GameHistory
from service.play.game_service import GameService
from service.play.loaded_game import LoadedGame, MatchPlace
from service.play.ports import Embargo, MatchBook
from service.play.settings import whole_setting
from service.storage.outcomes import GameExists

log = logging.getLogger(__name__)
DEALS_RANGE = (1, 1000)
DEALS_AT_ONCE = 4
MATCHES_PER_CLIENT = 2
MATCHES_RUNNING_MAX = 20
PAGE_MAX = 100
HEADERS_KEPT = 2 * MATCHES_RUNNING_MAX  # running matches' headers a process keeps (a few hundred bytes each)
SECONDS_A_GAME = 5  # what a deal's game left is thought to take, for a refusal's Retry-After


@dataclasses.dataclass(frozen=True)
class MatchSettings:
    """The operator's bounds on matches."""

    deals_at_once: int = DEALS_AT_ONCE
    per_client: int = MATCHES_PER_CLIENT
    running_max: int = MATCHES_RUNNING_MAX


def settings_from_env(environ: Mapping[str, str] = os.environ) -> MatchSettings:
    """MATCH_DEALS_AT_ONCE (at least 1), MATCHES_PER_CLIENT and MATCHES_RUNNING_MAX: whole numbers."""
    return MatchSettings(
        whole_setting(environ, "MATCH_DEALS_AT_ONCE", DEALS_AT_ONCE, 1, unit="deals"),
        whole_setting(environ, "MATCHES_PER_CLIENT", MATCHES_PER_CLIENT, unit="matches"),
        whole_setting(environ, "MATCHES_RUNNING_MAX", MATCHES_RUNNING_MAX, 1, unit="matches"),
    )


def scores_by_deal(count: int, played: Sequence[DealGame]) -> list[list[float] | None]:
    """Each deal's scores by entrant (C-8), in deal order; None for a deal with a game of no hand scored."""
    scored = deal_scores(count, played)
    deals = 1 + max((game.deal for game in played), default=-1)
    return [scored.get(deal) for deal in range(deals)]


def game_id_of(match_id: str, deal: int, rotation: int) -> str:
    """The id of the match's game of (deal, rotation): one id, so one game, for each."""
    return f"{match_id}-{deal}-{rotation}"


def now_ms() -> int:
    return int(time.time() * 1000)


class Matches:
    """The match use cases: create, advance, read, list, the record; the refusal of a deal still in play."""

    def __init__(
        self,
        store: MatchBook,
        games: GameService,
        history: GameHistory,
        embargo: Embargo,
        settings: MatchSettings = MatchSettings(),  # frozen: one shared default is fine
        clock_ms: Callable[[], int] = now_ms,
    ) -> None:
        """`embargo`: where the games of deals still in play are kept closed."""
        self.store = store
        self.embargo = embargo
        self.games = games
        self.history = history
        self.settings = settings
        self.clock_ms = clock_ms
        self._headers: OrderedDict[str, dict[str, str]] = OrderedDict()  # running matches' headers, as read
        self._headers_lock = threading.Lock()  # the API ends games in several threads

    # ------------------------------------------------------------ create

    def create(
        self,
        game: str,
        entrants: Sequence[Mapping[str, Any]],
        deals: int,
        options: Mapping[str, Any],
        seed: str | None = None,
        client: str = "",
    ) -> dict[str, Any]:
        """Check and store a new match, start its first games; its view (BadMatch naming the field,
        MatchesFull)."""
        self._check(game, entrants, deals, options, seed)
        self._admit(client)
        match_id = secrets.token_urlsafe(9)
        match_seed, nonce = seed or new_server_seed(), new_nonce()
        created = self.clock_ms()
        fields = {
            "id": match_id,
            "game": game,
            "options": dict(options),
            "entrants": [dict(entrant) for entrant in entrants],
            "deals": deals,
            "seed": match_seed,
            "nonce": nonce,
            "seed_commitment": match_commitment(match_seed, nonce),
            "status": "running",
            "created_at": created,
            "client": client,
            "finished_games": 0,  # kept by the scripts that note games (service/storage/matches.py)
            "deals_begun": 0,
        }
        if not self.store.create(match_id, fields, created):
            raise MatchesFull("could not allocate a match id; try again", per_client=False)
        self.advance(match_id)
        return self.view(match_id)

    def _check(
        self, game: str, entrants: Sequence[Mapping[str, Any]], deals: int, options: Mapping[str, Any], seed: str | None
    ) -> None:
        if engine.registered(game) is None:
            raise BadMatch(f"game: no game {game!r} in the catalog")
        low, high = DEALS_RANGE
        if not low <= deals <= high:
            raise BadMatch(f"deals: {low} to {high}, not {deals}")
        if seed is not None and not is_valid_seed(seed):
            raise BadMatch("seed: 1 to 128 printable ASCII characters (C-4)")
        levels = levels_for(game)
        for index, entrant in enumerate(entrants):
            if ("level" in entrant) == ("bot" in entrant):
                raise BadMatch(f"entrants.{index}: names either a `level` or a `bot`")
            if "level" in entrant and entrant["level"] not in levels:
                raise BadMatch(f"entrants.{index}: no level {entrant['level']!r} plays {game} (levels: {list(levels)})")
        labels = [entrant_label(entrant) for entrant in entrants]
        if len(set(labels)) != len(labels):
            raise BadMatch("entrants: each entrant at most once")
        try:
            engine.make_config(game, len(entrants), options, "check", limits=self.games.event_limits)
        except DomainError as error:
            field = "entrants" if "player" in error.detail.lower() else "options"
            raise BadMatch(f"{field}: {error.detail}") from error
        requests = [{"kind": "bot", "bot": entrant["bot"]} for entrant in entrants if "bot" in entrant]
        if requests:
            if self.games.bots is None:
                raise BadMatch("entrants: this service seats no registered bots")
            try:
                self.games.bots.check_seats(game, requests)
            except BadBotSeat as error:
                raise BadMatch(error.detail.replace("seats:", "entrants:", 1)) from error

    def _admit(self, client: str) -> None:
        """MatchesFull when the operator's bounds on running matches are reached."""
        running = self.store.running()
        if len(running) >= self.settings.running_max:
            raise MatchesFull(f"at most {self.settings.running_max} matches run at once; try later", per_client=False)
        if self.settings.per_client:
            mine = sum(1 for match_id in running if (self.store.meta(match_id) or {}).get("client") == client)
            if mine >= self.settings.per_client:
                limit = self.settings.per_client
                raise MatchesFull(f"at most {limit} running matches per client; try when one ends", per_client=True)

    # ------------------------------------------------------------ running

    def advance(self, match_id: str) -> int:
        """Start the match's games that are due and finish it once all have; the number of games started.
        Safe to run at any time, from any process, any number of times (a reconciler's pass, every few seconds):
        each game noted as started is looked at afresh and every deal done is opened, which repairs a game's end
        that was not noted (its process stopped) and an opening that was lost."""
        meta = self.store.meta(match_id)
        if meta is None:
            raise MatchNotFound(match_id)
        if meta["status"] != "running":
            self.store.index_finished(match_id, meta["game"], int(meta["finished_at"]))
            return 0
        entrants, deals = json.loads(meta["entrants"]), int(meta["deals"])
        count = len(entrants)
        first, window = self._window(meta)
        states = self.store.game_states(match_id, window, count)
        ends = self._refresh(match_id, states)
        finished = {key for key, state in states.items() if state == "finished"}
        done = {deal for deal, _ in finished if all((deal, r) in finished for r in range(count))}
        opened = [game_id_of(match_id, deal, rotation) for deal in done for rotation in range(count)]
        all_finished = first * count + len(finished) == deals * count
        due = [] if all_finished else self._due(count, deals, states, first)
        due = self.store.note_games(match_id, ends, due)  # each game to start is noted, then closed, then stored
        self._open_and_start(match_id, meta, entrants, opened, due)
        if window is not None and (below := next((d for d in window if d not in done), window.stop)) > first:
            self.store.opened_below(match_id, below)
        if all_finished:
            self._finish(match_id, meta, entrants)
        return len(due)

    @staticmethod
    def _window(meta: Mapping[str, str]) -> tuple[int, range | None]:
        """The deals a pass looks at: from the first not known to be done and opened (`deals_opened`) to the last
        begun, in a match that keeps its counts, so that a pass costs the same however long the match is; every
        deal (None) in a match made before they were kept. And the first of them."""
        if not _keeps_counts(meta):
            return 0, None
        first = int(meta.get("deals_opened", "0"))
        return first, range(first, max(first, int(meta.get("deals_begun", "0"))))

    def _open_and_start(
        self,
        match_id: str,
        meta: Mapping[str, str],
        entrants: list[dict[str, Any]],
        opened: Sequence[str],
        started: Sequence[tuple[int, int]],
    ) -> None:
        """Open the games of the deals done, close the games noted started, then store those games."""
        self.embargo.update(
            opened, {game_id_of(match_id, deal, rotation): (match_id, deal) for deal, rotation in started}
        )
        for deal, rotation in started:
            self._start(match_id, meta, entrants, deal, rotation)

    def _refresh(self, match_id: str, states: dict[tuple[int, int], str]) -> list[tuple[int, int]]:
        """Look afresh at each game noted as started (its last record: a pass folds none of them): one that has
        ended is `finished` in `states` (and returned, to be noted); one that was never stored (a start whose
        process stopped between the note and the game) leaves `states`."""
        ended = []
        for (deal, rotation), state in list(states.items()):
            if state != "started":
                continue
            has_ended = self.history.has_ended(game_id_of(match_id, deal, rotation))
            if has_ended is None:
                del states[(deal, rotation)]
            elif has_ended:
                states[(deal, rotation)] = "finished"
                ended.append((deal, rotation))
        return ended

    def _due(
        self, count: int, deals: int, states: Mapping[tuple[int, int], str], first: int = 0
    ) -> list[tuple[int, int]]:
        """The games to start, as (deal, rotation): each deal's next game once the one before it has finished, at
        most `deals_at_once` deals at once; the deals before `first` are done."""
        playing = {deal for (deal, _), state in states.items() if state == "started"}
        begun = {deal for deal, _ in states}
        finished = Counter(deal for (deal, _), state in states.items() if state == "finished")
        due = []
        for deal in range(first, deals):
            rotation = finished[deal]
            if rotation == count or deal in playing:
                continue
            if deal not in begun and len(playing) >= self.settings.deals_at_once:
                break
            due.append((deal, rotation))
            playing.add(deal)
        return due

    def _start(
        self, match_id: str, meta: Mapping[str, str], entrants: list[dict[str, Any]], deal: int, rotation: int
    ) -> None:
        """Game `rotation` of `deal` (noted and closed already), seated by C-8 and dealt from the deal's seed."""
        seats = [{"kind": "bot", **entrant, "name": entrant_label(entrant)} for entrant in seating(entrants, rotation)]
        try:
            self.games.create_game(
                meta["game"],
                seats,
                json.loads(meta["options"]),
                seed=deal_seed(meta["seed"], deal),
                game_id=game_id_of(match_id, deal, rotation),
                place=MatchPlace(match_id, deal, rotation),
            )
        except GameExists:
            log.info("match %s: the game of deal %s, rotation %s was started already", match_id, deal, rotation)

    def _finish(self, match_id: str, meta: Mapping[str, str], entrants: list[dict[str, Any]]) -> None:
        """Every game has finished: the results and the deal scores (the ladder's input), from the games'
        recorded events (no game folded), and the match finished (once: a second finish, in this process or another,
        keeps the first's). Every deal is done, so every game is opened first: the process that ended another deal's
        last game may not have opened that deal yet (it is between noting the end and opening it)."""
        game = engine.get_game(meta["game"])
        ids = [
            [game_id_of(match_id, deal, rotation) for rotation in range(len(entrants))]
            for deal in range(int(meta["deals"]))
        ]
        self.embargo.update([game_id for deal in ids for game_id in deal], {})
        played = []
        for deal, deal_ids in enumerate(ids):
            for rotation, game_id in enumerate(deal_ids):
                events = self.history.events(game_id)
                played.append(deal_game(deal, rotation, events, game.round_scored.__name__))
        finished_at = self.clock_ms()
        labels = [entrant_label(e) for e in entrants]
        self.store.finish(match_id, results(labels, played), finished_at, scores_by_deal(len(labels), played))
        stored = self.store.meta(match_id) or {}
        self.store.index_finished(match_id, meta["game"], int(stored.get("finished_at", finished_at)))

    def advance_running(self) -> int:
        """`advance` every running match (a reconciler pass): the games started."""
        started = 0
        for match_id in self.store.running():
            try:
                started += self.advance(match_id)
            except Exception:
                log.exception("could not advance the match %s", match_id)
        return started

    def game_ended(self, loaded: LoadedGame) -> None:
        """A game ended in this process: when it is a match's, note it and start what follows it (the deal's next
        game, else the first deal not begun), reading none of the match's other games; finish the match with its
        last game. A match that keeps no counts (made before they were kept) is advanced as a pass does."""
        place = loaded.place
        if place is None:
            return
        meta = self._header(place.match)
        if meta is None:
            return
        entrants, deals = json.loads(meta["entrants"]), int(meta["deals"])
        count, last = len(entrants), place.rotation == len(entrants) - 1
        following = None if last else (place.deal, place.rotation + 1)
        noted = self.store.end_game(place.match, (place.deal, place.rotation), following, deals)
        if noted is None:
            self.advance(place.match)
            return
        finished, started = noted
        opened = [game_id_of(place.match, place.deal, rotation) for rotation in range(count)] if last else []
        self._open_and_start(place.match, meta, entrants, opened, [started] if started is not None else [])
        if finished == deals * count:
            self._finish(place.match, meta, entrants)

    def _header(self, match_id: str) -> dict[str, str] | None:
        """A running match's header as read when this process first needed it (what a game's end or a closed game's
        refusal reads of it, the game, options, seed, entrants and deals, never changes; its status is checked by
        the store's `end_game`); None for a match that is gone or not running when first read."""
        with self._headers_lock:
            meta = self._headers.get(match_id)
        if meta is None:
            meta = self.store.meta(match_id)
            if meta is None or meta["status"] != "running":
                return None
        with self._headers_lock:
            self._headers[match_id] = meta
            self._headers.move_to_end(match_id)
            while len(self._headers) > HEADERS_KEPT:
                self._headers.popitem(last=False)
        return meta

    # ------------------------------------------------------------ reading

    def check_open(self, game_id: str) -> None:
        """DealInPlay while the game is a match's whose deal is still being played (C-8); nothing for others."""
        closed = self.embargo.embargoed(game_id)
        if closed is None:
            return
        match_id, deal = closed
        meta = self._header(match_id) or {}
        count = len(json.loads(meta.get("entrants", "[]")))
        states = self.store.game_states(match_id, range(deal, deal + 1), count)
        left = count - sum(state == "finished" for state in states.values())
        raise DealInPlay(deal, max(1, left) * SECONDS_A_GAME)

    def check_place(self, place: MatchPlace | None) -> None:
        """`check_open` for a game whose place is known (its header's): a game of no match needs no look-up."""
        if place is not None:
            self.check_open(game_id_of(place.match, place.deal, place.rotation))

    def view(self, match_id: str, with_games: bool = True) -> dict[str, Any]:
        """The match as `GET /v1/matches/{id}` shows it (its seed and nonce once it has finished); without its
        games, as a page of matches lists it."""
        meta = self.store.meta(match_id)
        if meta is None:
            raise MatchNotFound(match_id)
        entrants, deals = json.loads(meta["entrants"]), int(meta["deals"])
        counted = not with_games and _keeps_counts(meta)  # a page's match: its count, not its games read
        states = {} if counted else self.store.game_states(match_id)
        games_finished = (
            int(meta["finished_games"]) if counted else sum(state == "finished" for state in states.values())
        )
        finished = meta["status"] == "finished"
        total = deals * len(entrants)
        out: dict[str, Any] = {
            "id": match_id,
            "game": meta["game"],
            "options": json.loads(meta["options"]),
            "entrants": entrants,
            "deals": deals,
            "games_total": total,
            "status": meta["status"],
            "better": "lower" if engine.get_game(meta["game"]).lowest_wins else "higher",
            "progress": {"games_finished": games_finished, "games_total": total},
            "results": json.loads(meta["results"]) if finished else [],
            "seed_commitment": meta["seed_commitment"],
            "created_at": rfc3339(int(meta["created_at"])),
        }
        if with_games:
            out["games"] = self._games(match_id, [entrant_label(entrant) for entrant in entrants], states)
        if finished:
            out.update(seed=meta["seed"], nonce=meta["nonce"], finished_at=rfc3339(int(meta["finished_at"])))
        return out

    @staticmethod
    def _games(match_id: str, labels: list[str], states: Mapping[tuple[int, int], str]) -> list[dict[str, Any]]:
        """The match's started games, in (deal, rotation) order, each with its entrants by seat."""
        seats = [seating(labels, rotation) for rotation in range(len(labels))]  # the same in every deal
        return [
            {
                "deal": deal,
                "rotation": rotation,
                "game_id": game_id_of(match_id, deal, rotation),
                "status": "finished" if state == "finished" else "active",
                "seats": list(seats[rotation]),
            }
            for (deal, rotation), state in sorted(states.items())
        ]

    def page(self, before: float | None, limit: int) -> tuple[list[dict[str, Any]], float | None]:
        """A page of matches, newest first, each without its games; and the cursor of the next page."""
        found = self.store.newest(before, min(limit, PAGE_MAX) + 1)
        shown = [self.view(match_id, with_games=False) for match_id, _ in found[:limit]]
        return shown, (found[limit - 1][1] if len(found) > limit else None)

    def record(self, match_id: str) -> dict[str, Any]:
        """The match record (a finished match's): its view and every game's record, to check offline."""
        view = self.view(match_id)
        if view["status"] != "finished":
            raise DealInPlay(None, SECONDS_A_GAME)
        records = [self.history.record(game["game_id"]) for game in view["games"]]
        return {"format": MATCH_FORMAT, **view, "records": records}


def _keeps_counts(meta: Mapping[str, str]) -> bool:
    """The match keeps its counts (`finished_games`, `deals_begun`): every match made since they were kept."""
    return "finished_games" in meta
