"""How many games started and finished, by game (`stats:games`), for the metrics (best effort: counted right
after the append that starts or ends a game); and whether people are playing now (`stats:people-playing`, a key
that expires), which a match's games yield to (service/play/match_pace.py)."""

from __future__ import annotations

from service.storage.keys import GAME_COUNTS_KEY, PEOPLE_PLAYING_KEY
from service.storage.redis_clients import StoreClient
from service.storage.scripts import store_call, text


class GameCounts:
    """The hash `stats:games`: `started:<game>`, `finished:<game>` and `abandoned:<game>` counts."""

    def __init__(self, client: StoreClient) -> None:
        self._redis = client

    def count_game(self, game: str, moment: str) -> None:
        """Count a game of type `game` that has `moment` (started, finished, abandoned), for the metrics."""
        store_call(self._redis.hincrby, GAME_COUNTS_KEY, f"{moment}:{game}", 1)

    def game_counts(self) -> dict[str, int]:
        """Every count kept by count_game, as `<moment>:<game>` -> count."""
        counts = store_call(self._redis.hgetall, GAME_COUNTS_KEY)
        return {text(key): int(value) for key, value in counts.items()}

    def note_people_playing(self, seconds: float) -> None:
        """Note that people are playing, for `seconds` from now."""
        store_call(self._redis.set, PEOPLE_PLAYING_KEY, "1", px=max(1, round(seconds * 1000)))

    def people_playing(self) -> bool:
        """Whether people acted within the time their last note gave."""
        return bool(store_call(self._redis.exists, PEOPLE_PLAYING_KEY))
