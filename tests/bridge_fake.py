"""A fake of the registered-bots HTTP contract (its "Registered bots"), for the bridge's tests.

It serves, on a free local port, exactly what the bridge uses:

- `GET /v1/bots/me/turns?wait=S&limit=N` with `Authorization: Bearer <bot token>`: `{"turns": [...]}`,
  each `{"turn", "game_id", "game", "rules_version", "seat", "version", "deadline", "view", "legal"}`,
  `turn` = `<game_id>:<version>`; blocks up to `wait` seconds until one is due; a turn handed out is not
  handed out again for `lease` seconds, then again until it is played; one whose game moved on is gone.
- `POST /v1/games/{id}/actions` with the bot token, `expected_version` and `Idempotency-Key`: 200
  `{"version", "events", "state"}`, a resent key with the same body gets the first answer, 409
  `version_conflict` for a stale version, 422 for what the rules refuse, 401 without the token.
- `GET /v1/games/{id}/record`: the game's id, game, rules version, options and seats (not its events).

The games are real (domain.engine); the bot holds one seat of each, the other seats are played at once
by the `random` policy, and a turn not played by its deadline is played for the seat by `greedy` (the
turn timeout). Faults are asked for by the test: answers to the next turns requests (`turn_faults`), a
reply dropped after the action was applied (`drop_action_replies`), a hook when a turn is handed out.
Every request is recorded. This is a fake of the contract, not the service: the tests of the real
endpoints come with the server side of registered bots.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import threading
import time
import urllib.parse
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from domain import engine
from domain.bots import choose_action
from domain.errors import DomainError
from domain.shuffle import SeededStream

TOKEN = "bot-token-of-the-fake"


@dataclasses.dataclass
class FakeGame:
    id: str
    snap: engine.Snapshot[Any]
    bot_seat: int
    turn_seconds: float
    due_since: float = 0.0  # monotonic time the bot's current turn became due
    lease_until: float = 0.0  # the current turn is not handed out again before this
    handouts: collections.Counter[int] = dataclasses.field(default_factory=collections.Counter)  # by version
    answers: dict[str, tuple[str, int, dict[str, Any]]] = dataclasses.field(default_factory=dict)  # key -> answer
    timeouts: int = 0
    played: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # the bot's accepted actions

    @property
    def turn_id(self) -> str:
        return f"{self.id}:{self.snap.version}"

    def bot_due(self) -> bool:
        return not self.snap.finished and self.bot_seat in self.snap.to_act()


@dataclasses.dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int | str  # "dropped": the reply was not sent


class FakeService:
    """See the module's docstring. `with FakeService() as fake:` serves at `fake.url`."""

    def __init__(self, lease: float = 5.0, turn_seconds: float = 10.0, turn_options: bool = False) -> None:
        """`turn_options`: each turn brings the game's options, as the service's do."""
        self.lease = lease
        self.turn_options = turn_options
        self.turn_seconds = turn_seconds
        self.games: dict[str, FakeGame] = {}
        self.requests: list[Request] = []
        self.turn_faults: collections.deque[int] = collections.deque()  # statuses for the next turns requests
        self.drop_action_replies = 0  # the next N actions are applied and their replies dropped
        self.on_handout: Callable[[dict[str, Any]], None] | None = None
        self.changed = threading.Condition()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeService:
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # ------------------------------------------------------------------ the test's side

    def add_game(
        self, game: str = "golf", players: int = 2, options: dict[str, Any] | None = None, seed: str = "fake-1"
    ) -> str:
        """A new game with the bot in seat 0; the house seats play at once."""
        config = engine.make_config(game, players, options if options is not None else {"rounds": 1}, seed)
        with self.changed:
            game_id = f"g{len(self.games) + 1}"
            fake = FakeGame(game_id, engine.start(config)[0], 0, self.turn_seconds)
            self.games[game_id] = fake
            self._house_plays(fake)
            self.changed.notify_all()
        return game_id

    def play_timeout(self, game_id: str) -> None:
        """Play the bot's due turn for it (`greedy`), as the service does at the deadline."""
        with self.changed:
            fake = self.games[game_id]
            self._timeout(fake)
            self.changed.notify_all()

    def actions(self, game_id: str | None = None) -> list[Request]:
        """The action requests received (for one game), in order, dropped replies included."""
        return [r for r in self.requests if r.method == "POST" and (game_id is None or f"/{game_id}/" in r.path)]

    def wait_until(self, condition: Callable[[], bool], timeout: float = 30.0) -> None:
        """Block until `condition()` holds (checked whenever a request changed something)."""
        ends = time.monotonic() + timeout
        with self.changed:
            while not condition():
                if time.monotonic() > ends:
                    raise AssertionError("the fake service waited in vain")
                self.changed.wait(0.05)

    def finished(self, game_id: str) -> bool:
        return self.games[game_id].snap.finished

    # ------------------------------------------------------------------ the games (under self.changed)

    def _house_plays(self, fake: FakeGame) -> None:
        while not fake.snap.finished:
            house = [seat for seat in fake.snap.to_act() if seat != fake.bot_seat]
            if not house:
                break
            view = engine.view(fake.snap, house[0])
            rng = SeededStream("fake-house", f"{fake.snap.version}/{house[0]}")
            action = choose_action(fake.snap.config.game, "random", view, view["you"]["legal"], rng)
            fake.snap = engine.act(fake.snap, house[0], action)[0]
        fake.due_since = time.monotonic()
        fake.lease_until = 0.0

    def _timeout(self, fake: FakeGame) -> None:
        view = engine.view(fake.snap, fake.bot_seat)
        rng = SeededStream("fake-timeout", str(fake.snap.version))
        action = choose_action(fake.snap.config.game, "greedy", view, view["you"]["legal"], rng)
        fake.snap = engine.act(fake.snap, fake.bot_seat, action)[0]
        fake.timeouts += 1
        self._house_plays(fake)

    def _expire(self, now: float) -> None:
        for fake in self.games.values():
            while fake.bot_due() and now > fake.due_since + fake.turn_seconds:
                self._timeout(fake)

    def render(self, fake: FakeGame, seat: int) -> dict[str, Any]:
        """The seat's view as `GET /v1/games/{id}` gives it (service/play/game_view.py's shape)."""
        view = engine.view(fake.snap, seat)
        view.pop("options")
        scores = view.pop("scores")
        seats = [
            {"seat": s, "kind": "bot", "name": "acme" if s == fake.bot_seat else f"Bot {s}", "score": scores[s]}
            | ({} if s == fake.bot_seat else {"level": "random"})
            for s in range(fake.snap.config.players)
        ]
        head = {"id": fake.id, "game": fake.snap.config.game, "stacked": False}
        return {**head, **view, "seats": seats, "turn_seconds": fake.turn_seconds}

    def _turn(self, fake: FakeGame) -> dict[str, Any]:
        deadline = datetime.now(UTC) + timedelta(seconds=fake.due_since + fake.turn_seconds - time.monotonic())
        view = self.render(fake, fake.bot_seat)
        return {
            "turn": fake.turn_id,
            "game_id": fake.id,
            "game": fake.snap.config.game,
            "rules_version": fake.snap.config.rules_version,
            "seat": fake.bot_seat,
            "version": fake.snap.version,
            "deadline": deadline.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "view": view,
            "legal": view["you"]["legal"],
            **({"options": dict(fake.snap.config.options)} if self.turn_options else {}),
        }

    # ------------------------------------------------------------------ the endpoints

    def get_turns(self, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        try:
            wait = int(query.get("wait", ["0"])[0])
            limit = int(query.get("limit", ["10"])[0])
        except ValueError:
            return _problem(400, "invalid_request", "wait and limit are whole numbers")
        if not 0 <= wait <= 30 or not 1 <= limit <= 100:
            return _problem(400, "invalid_request", "wait is 0 to 30, limit 1 to 100")
        if self.turn_faults:
            status = self.turn_faults.popleft()
            return _problem(status, "store_unavailable", "the event store cannot be reached")
        ends = time.monotonic() + wait
        handed: list[dict[str, Any]] = []
        with self.changed:
            while True:
                now = time.monotonic()
                self._expire(now)
                for fake in self.games.values():
                    if len(handed) < limit and fake.bot_due() and fake.lease_until <= now:
                        fake.lease_until = now + self.lease
                        fake.handouts[fake.snap.version] += 1
                        handed.append(self._turn(fake))
                if handed or now >= ends:
                    break
                self.changed.wait(min(0.05, ends - now))
        for turn in handed:
            if self.on_handout is not None:
                self.on_handout(turn)
        return 200, {"turns": handed}

    def post_action(self, game_id: str, key: str | None, body: Any) -> tuple[int, dict[str, Any]]:
        with self.changed:
            fake = self.games.get(game_id)
            if fake is None:
                return _problem(404, "game_not_found", f"no game {game_id}")
            if not isinstance(body, dict):
                return _problem(400, "invalid_request", "the body is a JSON object")
            spelled = json.dumps(body, sort_keys=True)
            if key is not None and key in fake.answers:
                first_body, status, answer = fake.answers[key]
                if first_body != spelled:
                    return _problem(422, "idempotency_key_reused", "this Idempotency-Key was used for another request")
                return status, answer
            status, answer = self._act(fake, dict(body))
            if key is not None and status in (200, 422):
                fake.answers[key] = (spelled, status, answer)
            self.changed.notify_all()
            return status, answer

    def _act(self, fake: FakeGame, action: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        expected = action.pop("expected_version", None)
        if expected is not None and expected != fake.snap.version:
            problem = _problem(409, "version_conflict", f"expected {expected}, the game is at {fake.snap.version}")
            return problem[0], {**problem[1], "current_version": fake.snap.version}
        before = fake.snap.version
        try:
            fake.snap, events = engine.act(fake.snap, fake.bot_seat, action)
        except DomainError as error:
            return _problem(422, error.code, str(error))
        fake.played.append(action)
        state = self.render(fake, fake.bot_seat)
        self._house_plays(fake)
        answer = {"version": fake.snap.version, "events": [{"seq": before + i + 1} for i in range(len(events))]}
        return 200, {**answer, "state": state}

    def get_record(self, game_id: str) -> tuple[int, dict[str, Any]]:
        with self.changed:
            fake = self.games.get(game_id)
            if fake is None:
                return _problem(404, "game_not_found", f"no game {game_id}")
            config = fake.snap.config
            seats = [{k: v for k, v in s.items() if k != "score"} for s in self.render(fake, 0)["seats"]]
            return 200, {
                "id": fake.id,
                "game": config.game,
                "rules_version": config.rules_version,
                "options": dict(config.options),
                "seats": seats,
            }


def _problem(status: int, code: str, detail: str) -> tuple[int, dict[str, Any]]:
    return status, {"type": f"about:blank#{code}", "title": code, "status": status, "code": code, "detail": detail}


def _handler(fake: FakeService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            headers = {name.lower(): value for name, value in self.headers.items()}
            status, answer = self._route(method, url, headers, body)
            dropped = method == "POST" and status == 200 and fake.drop_action_replies > 0
            if dropped:
                fake.drop_action_replies -= 1
            with fake.changed:
                fake.requests.append(Request(method, url.path, headers, body, "dropped" if dropped else status))
                fake.changed.notify_all()
            if dropped:
                self.close_connection = True
                return
            data = json.dumps(answer).encode("utf-8")
            self.send_response(status)
            kind = "application/json" if status < 400 else "application/problem+json"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _route(
            self, method: str, url: urllib.parse.SplitResult, headers: dict[str, str], body: Any
        ) -> tuple[int, dict[str, Any]]:
            parts = url.path.strip("/").split("/")
            if method == "GET" and parts[:2] == ["v1", "games"] and len(parts) == 4 and parts[3] == "record":
                return fake.get_record(parts[2])
            if headers.get("authorization") != f"Bearer {TOKEN}":
                return _problem(401, "unauthorized", "a bot token is needed")
            if method == "GET" and url.path == "/v1/bots/me/turns":
                return fake.get_turns(urllib.parse.parse_qs(url.query))
            if method == "POST" and parts[:2] == ["v1", "games"] and len(parts) == 4 and parts[3] == "actions":
                return fake.post_action(parts[2], headers.get("idempotency-key"), body)
            return _problem(404, "not_found", f"no route {method} {url.path}")

    return Handler
