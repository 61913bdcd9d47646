"""Snapshots kept in Redis beside a game's stream (`game:{<id>}:snapshots`, hash: version -> the game folded
to that version, encoded by service/storage/snapshot_codec.py); service/storage/snapshots.py decides when."""

from __future__ import annotations

from redis.client import NEVER_DECODE

from service.storage import keys
from service.storage.redis_clients import StoreClient
from service.storage.scripts import store_call


class RedisSnapshots:
    """The SnapshotStore of service/storage/snapshots.py, in Redis."""

    def __init__(self, client: StoreClient) -> None:
        self._redis = client

    def put_snapshot(self, game_id: str, version: int, blob: bytes) -> None:
        """Keep the game folded to `version` (an encoded snapshot) beside its stream."""
        store_call(self._redis.hset, keys.snapshots(game_id), str(version), blob)

    def snapshot_versions(self, game_id: str) -> list[int]:
        """The versions the game has snapshots of (one every SNAPSHOT_EVERY events: a short list)."""
        return sorted(int(field) for field in store_call(self._redis.hkeys, keys.snapshots(game_id)))

    def snapshot(self, game_id: str, version: int) -> bytes | None:
        """The encoded snapshot at `version`, if there is one."""
        key = keys.snapshots(game_id)
        blob: bytes | None = store_call(self._redis.execute_command, "HGET", key, str(version), **{NEVER_DECODE: []})
        return blob

    def drop_snapshots(self, game_id: str) -> None:
        """Forget the game's snapshots (its stream is not what they were folded from)."""
        store_call(self._redis.delete, keys.snapshots(game_id))
