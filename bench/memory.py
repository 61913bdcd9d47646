"""Figure 5: Redis bytes per finished game of each type (`MEMORY USAGE` of its keys), before and after
compaction.

`redis_bytes_per_game_<game>`: the game as it ends (its stream, meta, idempotency answers, disputes)
against its floor, the record's size. `redis_bytes_per_finished_game_<game>`: the same games once packed
(service/storage/packing.py `compact`) against the first figure; target ≤ 15% of it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence

import redis

from bench.bots import BotGame
from bench.report import Figure, Target
from service.play.game_history import GameHistory
from service.storage.packing import PackedStore

KEY_SUFFIXES = ("events", "meta", "idem", "disputes", "packed")
PACKED_TARGET = Target("<=", 0.15)


def game_bytes(client: redis.Redis, game_id: str) -> int:
    """MEMORY USAGE (every element sampled) of every key of the game."""
    total = 0
    for suffix in KEY_SUFFIXES:
        used = client.memory_usage(f"game:{{{game_id}}}:{suffix}", samples=0)
        total += int(used or 0)
    return total


def record_bytes(history: GameHistory, game_id: str) -> int:
    """The size of the game's record as the API sends it (compact JSON, UTF-8)."""
    record = history.record(game_id)
    return len(json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def figures(client: redis.Redis, history: GameHistory, packing: PackedStore, games: Sequence[BotGame]) -> list[Figure]:
    """Per game type: mean bytes in Redis against the mean record size; then packed against unpacked."""
    by_type: dict[str, list[str]] = defaultdict(list)
    for g in games:
        by_type[g.game].append(g.id)
    out, packed = [], []
    for game, ids in sorted(by_type.items()):
        used = sum(game_bytes(client, i) for i in ids) / len(ids)
        record = sum(record_bytes(history, i) for i in ids) / len(ids)
        events = sum(len(history.store.read_raw(i)) for i in ids) / len(ids)
        out.append(Figure(f"redis_bytes_per_game_{game}", used, "B", record, None, f"{events:.0f} events a game"))
        for game_id in ids:
            packing.compact(game_id)
        after = sum(game_bytes(client, i) for i in ids) / len(ids)
        note = "packed; floor: the same games unpacked"
        packed.append(Figure(f"redis_bytes_per_finished_game_{game}", after, "B", used, PACKED_TARGET, note))
    return out + packed
