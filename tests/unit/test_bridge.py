"""The bridge (workers/bridge/) against a fake of the registered-bots contract (tests/bridge_fake.py):
each turn is posted once, with its version and its id as Idempotency-Key; a dropped reply is resent
with the same key; a 409 is skipped; the turns request backs off after a 503; a `--command` that
crashes is started again, and a line that is not a legal action leaves the turn unposted."""

from __future__ import annotations

import collections
import json
import logging
import random
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest

from domain import engine
from domain.shuffle import SeededStream
from tests.bridge_fake import TOKEN, FakeService
from workers.bridge.client import ServiceClient
from workers.bridge.command import CommandPlayer
from workers.bridge.players import LevelPlayer, Player, PolicyPlayer, policy_view
from workers.bridge.runner import Backoff, Bridge


@contextmanager
def bridge_on(
    fake: FakeService, make_player: Callable[[], Player], concurrency: int = 1, backoff: Callable[[], Backoff] = Backoff
) -> Iterator[Bridge]:
    bridge = Bridge(ServiceClient(fake.url, TOKEN), make_player, concurrency, wait=1, backoff=backoff)
    bridge.start()
    try:
        yield bridge
    finally:
        bridge.shut_down(5.0)


def first_legal(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    return legal[0]


def keys_posted(fake: FakeService) -> collections.Counter[str]:
    return collections.Counter(request.headers["idempotency-key"] for request in fake.actions())


def test_each_turn_is_posted_once_with_its_version_and_its_id_as_idempotency_key() -> None:
    """The first turn is handed out again (its lease runs out) while the bot thinks: it is still posted once."""
    with FakeService(lease=0.1) as fake:
        game_id = fake.add_game()
        first_turn = f"{game_id}:{fake.games[game_id].snap.version}"

        def slow_on_the_first_turn(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
            if view["version"] == int(first_turn.split(":")[1]):
                fake.wait_until(lambda: fake.games[game_id].handouts[view["version"]] >= 2)
            return legal[0]

        with bridge_on(fake, lambda: PolicyPlayer(slow_on_the_first_turn), concurrency=2) as bridge:
            fake.wait_until(lambda: fake.finished(game_id))
        posted = keys_posted(fake)
        assert fake.games[game_id].handouts[int(first_turn.split(":")[1])] >= 2
        assert posted[first_turn] == 1
        assert set(posted.values()) == {1}
        assert fake.games[game_id].timeouts == 0
        assert bridge.stats.played == len(posted) == len(fake.games[game_id].played)
        for request in fake.actions():
            assert request.headers["authorization"] == f"Bearer {TOKEN}"
            assert request.body["expected_version"] == int(request.headers["idempotency-key"].split(":")[1])


def test_log_turns_keeps_each_turn_as_received_one_json_line_each(tmp_path: Path) -> None:
    """`--log-turns`: what the service sent the bot, for review (every turn handed out, in order)."""
    log_path = tmp_path / "turns.jsonl"
    with FakeService() as fake, log_path.open("a", encoding="utf-8") as turn_log:
        game_id = fake.add_game()
        bridge = Bridge(ServiceClient(fake.url, TOKEN), lambda: PolicyPlayer(first_legal), 1, wait=1, turn_log=turn_log)
        bridge.start()
        try:
            fake.wait_until(lambda: fake.finished(game_id))
        finally:
            bridge.shut_down(5.0)
    logged = [json.loads(line) for line in log_path.read_text(encoding="utf-8").splitlines()]
    assert logged and {turn["game_id"] for turn in logged} == {game_id}
    assert {turn["turn"] for turn in logged} >= set(keys_posted(fake))
    assert all(set(turn) >= {"turn", "view", "legal", "deadline"} for turn in logged)


def test_an_action_whose_reply_was_dropped_is_sent_again_with_the_same_key_and_body() -> None:
    with FakeService() as fake:
        fake.drop_action_replies = 1
        game_id = fake.add_game()
        with bridge_on(fake, lambda: PolicyPlayer(first_legal)) as bridge:
            fake.wait_until(lambda: fake.finished(game_id))
        first, again = fake.actions()[:2]
        assert first.status == "dropped"
        assert again.status == 200
        assert again.headers["idempotency-key"] == first.headers["idempotency-key"]
        assert again.body == first.body
        assert keys_posted(fake)[first.headers["idempotency-key"]] == 2
        assert bridge.stats.played == len(keys_posted(fake)) == len(fake.games[game_id].played)


def test_a_409_is_skipped_and_the_bridge_plays_on() -> None:
    """The game moves on (its deadline passed) while the bot thinks: the 409 is not retried."""
    with FakeService() as fake:
        game_id = fake.add_game()
        moved: list[str] = []

        def too_slow_once(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
            if not moved:
                moved.append(f"{game_id}:{view['version']}")
                fake.play_timeout(game_id)
            return legal[0]

        with bridge_on(fake, lambda: PolicyPlayer(too_slow_once)) as bridge:
            fake.wait_until(lambda: fake.finished(game_id))
        conflicts = [r for r in fake.actions() if r.status == 409]
        assert [r.headers["idempotency-key"] for r in conflicts] == moved
        assert keys_posted(fake)[moved[0]] == 1
        assert bridge.stats.conflicts == 1
        assert bridge.stats.played == len(fake.games[game_id].played) > 0


class RecordedBackoff(Backoff):
    delays: ClassVar[list[float]] = []

    def __init__(self) -> None:
        super().__init__(base=0.02, cap=0.1, rng=random.Random(7))

    def next_delay(self) -> float:
        delay = super().next_delay()
        self.delays.append(delay)
        return delay


def test_the_turns_request_backs_off_after_a_503_and_plays_when_the_service_is_back() -> None:
    RecordedBackoff.delays = []
    with FakeService() as fake:
        fake.turn_faults.extend([503] * 4)
        game_id = fake.add_game()
        with bridge_on(fake, lambda: PolicyPlayer(first_legal), backoff=RecordedBackoff) as bridge:
            fake.wait_until(lambda: bridge.stats.played >= 1)
    turns_requests = [r for r in fake.requests if r.path == "/v1/bots/me/turns"]
    assert [r.status for r in turns_requests[:5]] == [503, 503, 503, 503, 200]
    ceilings = [0.02, 0.04, 0.08, 0.1]  # doubled each time, capped
    assert len(RecordedBackoff.delays) == 4
    for delay, ceiling in zip(RecordedBackoff.delays, ceilings, strict=True):
        assert ceiling / 2 <= delay <= ceiling
    assert bridge.stats.reconnects == 4
    assert fake.games[game_id].played


def test_backoff_grows_to_its_cap_with_jitter_and_starts_again_after_a_success() -> None:
    backoff = Backoff(base=0.5, cap=30.0, rng=random.Random(1))
    delays = [backoff.next_delay() for _ in range(10)]
    for n, delay in enumerate(delays):
        ceiling = min(30.0, 0.5 * 2**n)
        assert ceiling / 2 <= delay <= ceiling
    assert len(set(delays[-3:])) == 3  # capped, and still jittered
    backoff.reset()
    assert backoff.next_delay() <= 0.5


def write_bot(tmp_path: Path, body: str) -> str:
    """A command bot in Python: `body` runs once per start, with `legal_of(line)` and the `starts` count."""
    script = tmp_path / "bot.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys
            from pathlib import Path
            count = Path(__file__).with_suffix(".starts")
            starts = int(count.read_text()) + 1 if count.exists() else 1
            count.write_text(str(starts))
            def answer(action):
                print(json.dumps(action), flush=True)
            """
        )
        + textwrap.dedent(body)
    )
    return f"{sys.executable} {script}"


def test_a_command_that_exits_after_each_answer_is_started_again_for_every_turn(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    command = write_bot(tmp_path, "turn = json.loads(sys.stdin.readline())\nanswer(turn['legal'][0])\nsys.exit(3)\n")
    with FakeService() as fake, caplog.at_level(logging.WARNING, "workers.bridge"):
        game_id = fake.add_game()
        with bridge_on(fake, lambda: CommandPlayer(command)) as bridge:
            fake.wait_until(lambda: fake.finished(game_id))
    played = len(fake.games[game_id].played)
    assert played > 1
    assert fake.games[game_id].timeouts == 0
    assert bridge.stats.played == played
    assert int((tmp_path / "bot.starts").read_text()) == played
    assert "command started again" in caplog.text


def test_a_command_that_crashes_on_a_turn_is_started_again_and_asked_that_turn_once_more(tmp_path: Path) -> None:
    command = write_bot(
        tmp_path,
        """
        if starts == 1:
            sys.stdin.readline()
            sys.exit(1)
        for line in sys.stdin:
            answer(json.loads(line)["legal"][0])
        """,
    )
    with FakeService() as fake:
        game_id = fake.add_game()
        first_turn = fake.games[game_id].turn_id
        with bridge_on(fake, lambda: CommandPlayer(command)) as bridge:
            fake.wait_until(lambda: fake.finished(game_id))
    assert keys_posted(fake)[first_turn] == 1
    assert fake.games[game_id].timeouts == 0
    assert bridge.stats.played == len(fake.games[game_id].played) > 0
    assert (tmp_path / "bot.starts").read_text() == "2"


def test_a_command_that_crashes_on_every_turn_leaves_the_turns_to_their_deadline(tmp_path: Path) -> None:
    command = write_bot(tmp_path, "sys.stdin.readline()\nsys.exit(1)\n")
    with FakeService(turn_seconds=1.0) as fake:
        game_id = fake.add_game()
        first_turn = fake.games[game_id].turn_id
        with bridge_on(fake, lambda: CommandPlayer(command)) as bridge:
            fake.wait_until(lambda: fake.games[game_id].timeouts >= 2)
    assert not fake.actions()
    assert first_turn not in keys_posted(fake)
    assert bridge.stats.left >= 2
    assert int((tmp_path / "bot.starts").read_text()) >= 4  # started again, and asked twice a turn


def test_a_line_that_is_not_a_legal_action_leaves_the_turn_unposted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    command = write_bot(
        tmp_path,
        """
        for n, line in enumerate(sys.stdin):
            answer({"type": "teleport"} if n == 0 else json.loads(line)["legal"][0])
        """,
    )
    with FakeService(turn_seconds=1.0) as fake, caplog.at_level(logging.WARNING, "workers.bridge"):
        game_id = fake.add_game()
        first_turn = fake.games[game_id].turn_id
        with bridge_on(fake, lambda: CommandPlayer(command)) as bridge:
            fake.wait_until(lambda: fake.finished(game_id))
    assert first_turn not in keys_posted(fake)
    assert fake.games[game_id].timeouts == 1
    assert bridge.stats.left == 1
    assert f"turn {first_turn} left to its deadline: the action is not among the" in caplog.text
    assert (tmp_path / "bot.starts").read_text() == "1"


@pytest.mark.parametrize("game", ["golf", "romme", "switch", "go5"])
def test_the_house_policies_get_back_exactly_the_view_the_engine_gives_them(game: str) -> None:
    """`--level` rebuilds `domain.engine.view` from the API's view and the game's options, at every
    step of a random game (so the remote house levels play from what the workers' ones see)."""
    with FakeService() as fake:
        game_id = fake.add_game(game, engine.get_game(game).min_players, options={})
        fake_game = fake.games[game_id]
        options = dict(fake_game.snap.config.options)
        rng = SeededStream("view-check", game)
        for _ in range(60):
            if fake_game.snap.finished:
                break
            seat = fake_game.snap.to_act()[0]
            fake_game.bot_seat = seat
            expected = engine.view(fake_game.snap, seat)
            rebuilt = policy_view(fake.render(fake_game, seat), options)
            assert {key: rebuilt[key] for key in expected} == expected
            fake_game.snap = engine.act(fake_game.snap, seat, rng.choice(expected["you"]["legal"]))[0]


def test_a_level_plays_from_the_options_a_turn_brings_without_reading_the_record() -> None:
    """The service's turns bring the game's options: a match's game, whose record is closed while its deal is
    played (C-8), is played all the same."""
    with FakeService(turn_options=True) as fake:
        game_id = fake.add_game("switch", 4, {"match_rank": False, "target": 50})

        def closed(game_id: str) -> dict[str, Any]:
            raise LookupError("deal_in_play")

        with bridge_on(fake, lambda: LevelPlayer("greedy", TOKEN, closed)) as bridge:
            fake.wait_until(lambda: fake.finished(game_id), timeout=60)
    assert not [r for r in fake.requests if r.path.endswith("/record")]
    assert bridge.stats.left == 0 and bridge.stats.played == len(fake.games[game_id].played) > 0


def test_a_level_plays_switch_from_the_view_and_the_options_of_the_games_record() -> None:
    """Switch's greedy reads the `match_rank` option, which the view does not carry: the record's is used,
    fetched once for the game."""
    with FakeService() as fake:
        game_id = fake.add_game("switch", 4, {"match_rank": False, "target": 50})
        options_of = ServiceClient(fake.url, TOKEN).game_options
        with bridge_on(fake, lambda: LevelPlayer("greedy", TOKEN, options_of)) as bridge:
            fake.wait_until(lambda: fake.finished(game_id), timeout=60)
    records = [r for r in fake.requests if r.path == f"/v1/games/{game_id}/record"]
    assert len(records) == 1
    assert bridge.stats.left == 0
    assert fake.games[game_id].timeouts == 0
    assert bridge.stats.played == len(fake.games[game_id].played) > 0
