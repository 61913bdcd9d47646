"""The store's Redis adapters, one per concern, built on one client (service/bootstrap.py wires them in)."""

from __future__ import annotations

import dataclasses

from service.storage.archive_store import ArchiveStore
from service.storage.bot_registry import BotRegistry
from service.storage.bot_turns import BotTurnQueues
from service.storage.disputes import DisputeStore
from service.storage.event_store import EventStore
from service.storage.game_counts import GameCounts
from service.storage.game_index import GameIndex
from service.storage.matches import MatchEmbargo, MatchStore
from service.storage.packing import PACKED_CACHE_BYTES, PackedStore
from service.storage.redis_clients import StoreClient
from service.storage.scripts import GameReader
from service.storage.snapshot_store import RedisSnapshots
from service.storage.stream_tickets import StreamTickets


@dataclasses.dataclass(frozen=True)
class RedisStore:
    """Every adapter of the event store's Redis (REDIS_URL): one Redis or a Redis Cluster."""

    client: StoreClient
    events: EventStore  # streams and headers: create, append, read (service/storage/event_store.py)
    packing: PackedStore  # compaction, packed games and the answers kept beside them
    archive: ArchiveStore  # whole games out and back in
    disputes: DisputeStore
    tickets: StreamTickets
    snapshots: RedisSnapshots
    index: GameIndex  # the games by their stage of life
    counts: GameCounts  # games started and finished, for the metrics
    bots: BotRegistry  # registered bots and their tokens' digests
    bot_turns: BotTurnQueues  # the registered bots' turn queues
    matches: MatchStore  # matches on duplicate deals
    embargo: MatchEmbargo  # the games of their deals still in play

    @classmethod
    def connect(
        cls,
        client: StoreClient,
        blocking_client: StoreClient | None = None,
        packed_cache_bytes: int = PACKED_CACHE_BYTES,
    ) -> RedisStore:
        """The adapters on `client` (the blocking reads on `blocking_client`, default `client`);
        `packed_cache_bytes`: how much unpacked text of packed games this process keeps."""
        reader = GameReader(client)
        packing = PackedStore(client, reader, packed_cache_bytes)
        return cls(
            client,
            EventStore(client, packing, blocking_client),
            packing,
            ArchiveStore(client, reader),
            DisputeStore(client),
            StreamTickets(client),
            RedisSnapshots(client),
            GameIndex(client),
            GameCounts(client),
            BotRegistry(client),
            BotTurnQueues(client, blocking_client),
            MatchStore(client),
            MatchEmbargo(client),
        )
