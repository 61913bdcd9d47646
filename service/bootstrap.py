"""The wiring root: the object graph of one process, the API's, a worker's or a command-line tool's."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any, TypedDict

import redis

from domain.options import EventLimits
from service.play import plugin_levels
from service.play.best_effort import BestEffort
from service.play.bot_turns import BotTurns, lease_seconds_from_env
from service.play.bots import Bots, bots_max_from_env
from service.play.event_limits import event_limits_from_env
from service.play.game_history import DISPUTES_PER_SEAT, GameHistory
from service.play.game_repository import GameRepository
from service.play.game_service import GameService, utc_now
from service.play.ladder import Ladders
from service.play.match_pace import MatchPace, share_percent_from_env
from service.play.matches import Matches
from service.play.matches import settings_from_env as match_settings_from_env
from service.play.ports import Clock, TurnDispatcher
from service.play.seats import bot_move_seconds, think_ms_max_from_env
from service.play.stream_tickets import StreamTickets
from service.play.turn_scheduler import TurnScheduler
from service.storage.event_store import EventStore
from service.storage.game_index import GameIndex
from service.storage.packing import PACKED_CACHE_BYTES
from service.storage.redis_clients import (
    DEFAULT_REDIS_URL,
    READER_POOL_SIZE,
    StoreClient,
    gatherer_of,
    redis_clients,
)
from service.storage.redis_store import RedisStore
from service.storage.snapshots import SnapshotCache
from service.storage.turn_queue import RQDispatcher


@dataclasses.dataclass(frozen=True)
class Services:
    """One process's object graph: the API's, a worker's or the archive CLI's."""

    store_client: StoreClient  # the event store's Redis (the rate limits count there too)
    storage: RedisStore  # its adapters: events, packing, archive, disputes, tickets, snapshots, index, counts
    dispatcher: TurnDispatcher  # where the next bot turn or turn timeout goes
    games: GameService
    history: GameHistory
    tickets: StreamTickets
    repository: GameRepository  # the games as the read routes and the sweep load them
    bots: Bots  # registered bots: registration, profiles, their tokens
    bot_turns: BotTurns  # registered bots' due turns, handed out with leases
    matches: Matches  # matches on duplicate deals
    ladders: Ladders  # each game's ladder, from its finished matches

    @property
    def index(self) -> GameIndex:
        """The games by their stage of life."""
        return self.storage.index

    @property
    def store(self) -> EventStore:
        """The games' events and headers (the GameService's event log)."""
        return self.storage.events


class ConnectionSettings(TypedDict):
    """Where the event store and the bot queue live (service/storage/redis_clients.py)."""

    REDIS_URL: str
    QUEUE_REDIS_URL: str | None


def connection_settings() -> ConnectionSettings:
    """REDIS_URL (default localhost:6379) and QUEUE_REDIS_URL, from the environment."""
    return {
        "REDIS_URL": os.environ.get("REDIS_URL", DEFAULT_REDIS_URL),
        "QUEUE_REDIS_URL": os.environ.get("QUEUE_REDIS_URL"),
    }


def build_services(
    settings: Mapping[str, Any],
    *,
    redis_client: StoreClient | None = None,
    dispatcher: TurnDispatcher | None = None,
    writes_behind: bool = False,
) -> Services:
    """The object graph, wired once for the API, the workers and the CLIs.

    Without a client it connects to the settings' REDIS_URL and QUEUE_REDIS_URL
    (service/storage/redis_clients.py); a client given serves the store, its blocking reads and the
    queue alike (tests, tools). Without a dispatcher, bot turns go to the RQ queue, which needs one
    plain Redis. DISPUTES_PER_SEAT (default 20) caps each seat's disputes; PACKED_CACHE_BYTES (setting or
    environment, default 32 MiB) bounds the packed games each process keeps unpacked; FOLLOWED_GAMES_MAX
    (default 1,000) the blocking client's connections (service/api/followers.py). The house levels of the
    installed plug-ins are found here, as the process starts (service/play/plugin_levels.py). `writes_behind`
    (the workers): the command path's best-effort notes are written by a thread of their own, so that a bot job
    does not wait for them (service/play/best_effort.py)."""
    plugin_levels.install()
    queue_client: StoreClient
    if redis_client is None:
        store_client, blocking_client, queue_client = redis_clients(
            settings["REDIS_URL"],
            settings.get("QUEUE_REDIS_URL"),
            int(settings.get("FOLLOWED_GAMES_MAX", READER_POOL_SIZE)),
        )
    else:
        store_client = blocking_client = queue_client = redis_client
    storage = RedisStore.connect(store_client, blocking_client, packed_cache_bytes(settings))
    if dispatcher is None:
        if not isinstance(queue_client, redis.Redis):
            raise TypeError("the bot queue needs one plain Redis client: give a dispatcher with a cluster client")
        dispatcher = RQDispatcher(queue_client, store_client)
    games = game_service(storage, dispatcher, best_effort=BestEffort(writes_behind, gatherer=gatherer_of(store_client)))
    history = game_history(storage, games, int(settings.get("DISPUTES_PER_SEAT", DISPUTES_PER_SEAT)))
    tickets = StreamTickets(games.repository, storage.tickets, bots=games.bots)
    assert games.bots is not None  # game_service gives it its registered bots
    bot_turns = BotTurns(storage.bot_turns, storage.bots, games.repository, lease_seconds_from_env())
    matches = Matches(storage.matches, games, history, storage.embargo, match_settings_from_env())
    games.when_ended.append(matches.game_ended)
    history.embargo = matches.check_open
    ladders = Ladders(storage.matches, matches)
    return Services(
        store_client,
        storage,
        dispatcher,
        games,
        history,
        tickets,
        games.repository,
        games.bots,
        bot_turns,
        matches,
        ladders,
    )


def game_service(
    store: RedisStore,
    dispatcher: TurnDispatcher,
    *,
    clock: Clock = utc_now,
    snapshots: SnapshotCache | None = None,
    think_ms_max: int | None = None,
    event_limits: EventLimits | None = None,
    bots_max: int | None = None,
    best_effort: BestEffort | None = None,
) -> GameService:
    """The command use cases on the store's adapters (its events, index and counts), asking `dispatcher` for
    due turns, with their collaborators: the repository (`snapshots`: its snapshot cache, default one on the
    store's snapshots) and the turn scheduler. `think_ms_max` (default: EXPERT_THINK_MS_MAX, else 2000) caps an
    expert's think time a move; `event_limits` (default: MAX_EVENTS_DEFAULT and MAX_EVENTS_LIMIT) a new game's
    `max_events` (C-9); `bots_max` (default: BOTS_MAX, else 10,000) caps the registered bots, and
    BOT_MOVE_SECONDS is checked here, at start; `best_effort`: how the notes no move waits for are written
    (service/play/best_effort.py; default: at once)."""
    bot_move_seconds()
    best_effort = best_effort or BestEffort()
    return GameService(
        store.events,
        GameRepository(store.events, snapshots if snapshots is not None else SnapshotCache(store=store.snapshots)),
        store.index,
        store.counts,
        TurnScheduler(dispatcher, store.bot_turns, best_effort),
        think_ms_max if think_ms_max is not None else think_ms_max_from_env(),
        event_limits if event_limits is not None else event_limits_from_env(),
        clock,
        Bots(store.bots, clock, bots_max if bots_max is not None else bots_max_from_env()),
        best_effort,
        MatchPace(store.counts, share_percent_from_env()),
    )


def game_history(store: RedisStore, games: GameService, disputes_per_seat: int = DISPUTES_PER_SEAT) -> GameHistory:
    """The read side for review and disputes, on the store's events, kept answers and disputes."""
    return GameHistory(
        games.repository, store.events, store.packing, store.disputes, games.clock, disputes_per_seat, games.bots
    )


def packed_cache_bytes(settings: Mapping[str, Any]) -> int:
    """PACKED_CACHE_BYTES from the settings, else the environment, else the store's default: a whole number."""
    text = str(settings.get("PACKED_CACHE_BYTES", os.environ.get("PACKED_CACHE_BYTES", PACKED_CACHE_BYTES)))
    if not text.isascii() or not text.isdigit():
        raise ValueError(f"PACKED_CACHE_BYTES must be a whole number of bytes, not {text!r}")
    return int(text)
