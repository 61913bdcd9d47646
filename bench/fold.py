"""Figure 1: events per second folding stored games from scratch, against `json.loads` plus a dict update.

Both passes start from the entries' text as stored in Redis (read before the clock starts). The fold
is the service's own: `GameRepository.load_header` (not timed) and the same `_advance` that `load` runs:
parse each record, rebuild its event and apply it. Each pass runs `REPEATS` times, interleaved, and
the fastest run of each counts (the least disturbed by anything else on the machine). A full
garbage collection runs before each pass (outside the clock), so that each starts in the same state.
"""

from __future__ import annotations

import gc
import json
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from bench.bots import BotGame
from bench.report import Figure, Target
from service.play.game_service import GameService

REPEATS = 15
TARGET = Target(">=", 0.5)


def floor_pass(texts: Sequence[str]) -> float:
    """Seconds to parse every entry and note it in a dict."""
    gc.collect()  # each pass starts from the same collector state, whatever ran before it
    started = time.perf_counter()
    seen: dict[str, Any] = {}
    for text in texts:
        record = json.loads(text)
        seen[record["type"]] = record["seq"]
    return time.perf_counter() - started


def fold_pass(service: GameService, game_id: str, texts: Sequence[str]) -> float:
    """Seconds to fold a stored game from its entries' text, as `GameRepository.load` does from scratch."""
    header = service.repository.load_header(game_id)
    gc.collect()
    started = time.perf_counter()
    folded = service.repository._advance(header, [json.loads(text) for text in texts])
    elapsed = time.perf_counter() - started
    if folded.version != len(texts) or not folded.snap.finished:
        raise RuntimeError(f"game {game_id} folded to version {folded.version} of {len(texts)}")
    return elapsed


def figures(service: GameService, games: Sequence[BotGame]) -> list[Figure]:
    """The overall figure, then one per game type."""
    texts = {g.id: service.store.read_raw(g.id) for g in games}
    best_fold: dict[str, float] = {}
    best_floor: dict[str, float] = {}
    for _ in range(REPEATS):
        for g in games:
            best_floor[g.id] = min(best_floor.get(g.id, float("inf")), floor_pass(texts[g.id]))
            best_fold[g.id] = min(best_fold.get(g.id, float("inf")), fold_pass(service, g.id, texts[g.id]))
    by_type: dict[str, list[str]] = defaultdict(list)
    for g in games:
        by_type[g.game].append(g.id)
    out = [_figure("fold_events_per_s", [g.id for g in games], texts, best_fold, best_floor)]
    for game, ids in sorted(by_type.items()):
        out.append(_figure(f"fold_events_per_s_{game}", ids, texts, best_fold, best_floor))
    return out


def _figure(
    name: str, ids: Sequence[str], texts: dict[str, list[str]], fold: dict[str, float], floor: dict[str, float]
) -> Figure:
    events = sum(len(texts[i]) for i in ids)
    fold_rate = events / sum(fold[i] for i in ids)
    floor_rate = events / sum(floor[i] for i in ids)
    return Figure(name, fold_rate, "events/s", floor_rate, TARGET, f"{events} events")
