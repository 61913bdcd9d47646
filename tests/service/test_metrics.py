"""GET /metrics (Prometheus text, service/ops/metrics.py) and request ids (service/ops/logs.py), in one process."""

from __future__ import annotations

import functools
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from service.app import create_app
from service.bootstrap import game_service
from service.ops import logs, metrics
from service.storage.redis_store import RedisStore
from service.storage.turn_queue import RQDispatcher
from tests.conftest import RecordingDispatcher, create_golf
from tests.service.sse import SseReader
from tests.service.test_api_errors import FlakyStore
from workers.reconcile import Reconciler, waiting_for

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
TWO_BOTS = [{"kind": "bot", "level": "greedy"}, {"kind": "bot", "level": "random"}]


def scrape(client: FlaskClient) -> Samples:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.content_type.startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.get_data(as_text=True))
        for sample in family.samples
    }


def sample(name: str, **labels: str) -> float:
    """A sample of this process's own metrics (0 before its first change)."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


def value(samples: Samples, name: str, **labels: str) -> float:
    wanted = set(labels.items())
    return sum(v for (sample, have), v in samples.items() if sample == name and wanted <= set(have))


def test_requests_are_counted_by_route_and_status_with_latencies(client: FlaskClient) -> None:
    before = scrape(client)
    game = create_golf(client)
    assert client.get(f"/v1/games/{game['id']}").status_code == 200
    assert client.get("/v1/games/nosuchgame1").status_code == 404
    assert client.get("/no/such/path").status_code == 404
    after = scrape(client)
    route = "/v1/games/<game_id>"
    assert value(after, "cardtable_http_requests_total", route=route, status="200") == 1 + value(
        before, "cardtable_http_requests_total", route=route, status="200"
    )
    assert value(after, "cardtable_http_requests_total", route=route, status="404") == 1 + value(
        before, "cardtable_http_requests_total", route=route, status="404"
    )
    assert value(after, "cardtable_http_requests_total", route="unmatched", status="404") >= 1
    assert value(after, "cardtable_http_request_duration_seconds_count", method="GET", route=route) == 2 + value(
        before, "cardtable_http_request_duration_seconds_count", method="GET", route=route
    )
    assert not any(game["id"] in dict(labels).get("route", "") for _, labels in after), "no raw paths as labels"


def test_games_active_and_finished_are_counted_in_redis(client: FlaskClient, dispatcher: RecordingDispatcher) -> None:
    before = scrape(client)
    create_golf(client, seats=TWO_BOTS, options={"rounds": 1})
    during = scrape(client)
    assert value(during, "cardtable_games_active", game="golf") == 1 + value(before, "cardtable_games_active")
    dispatcher.drain()
    after = scrape(client)
    assert value(after, "cardtable_games_active", game="golf") == value(before, "cardtable_games_active")
    assert value(after, "cardtable_games_finished", game="golf") == 1 + value(before, "cardtable_games_finished")
    assert value(after, "cardtable_bot_turns_total", game="golf") > value(
        before, "cardtable_bot_turns_total", game="golf"
    )
    assert value(after, "cardtable_store_up") == 1


def test_store_errors_are_counted_and_the_scrape_still_answers() -> None:
    flaky = FlakyStore()
    before = scrape(flaky.client)
    flaky.down()
    try:
        assert flaky.client.get("/readyz").status_code == 503
        assert flaky.client.post("/v1/games", json={"game": "golf", "seats": TWO_BOTS}).status_code == 503
        during = scrape(flaky.client)
    finally:
        flaky.up()
    assert value(during, "cardtable_store_errors_total") >= 2 + value(before, "cardtable_store_errors_total")
    assert value(during, "cardtable_store_up") == 0
    assert ("cardtable_games_active", (("game", "golf"),)) not in during, "nothing made up while Redis is away"


def test_the_bot_queue_depth_is_read_at_scrape_time() -> None:
    server = fakeredis.FakeServer()
    store = fakeredis.FakeRedis(server=server, decode_responses=True)
    dispatcher = RQDispatcher(fakeredis.FakeRedis(server=server), store)
    client = create_app({"TESTING": True}, redis_client=store, dispatcher=dispatcher).test_client()
    assert value(scrape(client), "cardtable_bot_queue_depth", state="queued") == 0
    create_golf(client, seats=TWO_BOTS)
    assert value(scrape(client), "cardtable_bot_queue_depth", state="queued") == 1


def test_the_reconciler_counts_its_repairs() -> None:
    server = fakeredis.FakeServer()
    queue_client = fakeredis.FakeRedis(server=server)
    dispatcher = RQDispatcher(queue_client, fakeredis.FakeRedis(server=server, decode_responses=True))
    service = game_service(RedisStore.connect(fakeredis.FakeRedis(server=server, decode_responses=True)), dispatcher)
    game = service.create_game("golf", TWO_BOTS, {})
    queue_client.delete(dispatcher.queue.key)  # the bot job is lost
    before = sample("cardtable_reconciler_repairs_total", kind="bot_turn")
    reconciler = Reconciler(dispatcher, functools.partial(waiting_for, service))
    assert reconciler.run_once() == [(game["id"], game["version"])]
    assert sample("cardtable_reconciler_repairs_total", kind="bot_turn") == before + 1
    assert reconciler.run_once() == []
    assert sample("cardtable_reconciler_repairs_total", kind="bot_turn") == before + 1


def test_a_long_poll_is_an_open_watcher_while_it_waits(app: flask.Flask, client: FlaskClient) -> None:
    game = create_golf(client, seats=[{"kind": "human"}, {"kind": "human"}])
    watchers = app.extensions["watchers"]
    real_wait = watchers.wait
    while_waiting: list[float] = []

    def wait(*args: Any) -> Any:
        while_waiting.append(sample("cardtable_watchers_open", kind="longpoll"))
        return real_wait(*args)

    watchers.wait = wait
    before = sample("cardtable_watchers_open", kind="longpoll")
    assert client.get(f"/v1/games/{game['id']}/events?after=99&wait=0.2").status_code == 200
    assert client.get(f"/v1/games/{game['id']}/events?after=99").status_code == 200
    assert while_waiting == [before + 1, before], "only a call that waits is a watcher"
    assert sample("cardtable_watchers_open", kind="longpoll") == before


@pytest.mark.parametrize(
    ("sent", "echoed"),
    [
        ("abc-123", True),
        ("trace.7:x_Y", True),
        ("", False),
        ("has space", False),
        ("<script>", False),
        ("a" * 129, False),
    ],
)
def test_the_request_id_is_echoed_when_sane_and_made_up_otherwise(client: FlaskClient, sent: str, echoed: bool) -> None:
    answer = client.get("/healthz", headers={"X-Request-Id": sent})
    request_id = answer.headers["X-Request-Id"]
    assert (request_id == sent) is echoed
    assert logs.SANE_REQUEST_ID.fullmatch(request_id)


def test_problem_answers_carry_a_request_id_too(client: FlaskClient) -> None:
    answer = client.post("/v1/games", data="{", content_type="application/json")
    assert answer.status_code == 400 and len(answer.headers["X-Request-Id"]) == 32


def test_log_lines_are_json_with_the_request_id(client: FlaskClient, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="cardtable.access"):
        client.get("/v1/catalog", headers={"X-Request-Id": "log-me-1"})
    records = [r for r in caplog.records if r.name == "cardtable.access"]
    assert len(records) == 1
    logs.RequestIdFilter("api").filter(records[0])
    line = json.loads(logs.json_formatter().format(records[0]))
    assert line["request_id"] == "log-me-1"
    assert (line["route"], line["status"], line["method"]) == ("/v1/catalog", 200, "GET")
    assert (line["logger"], line["process_kind"], line["level"]) == ("cardtable.access", "api", "INFO")
    assert line["duration_ms"] >= 0 and line["message"] == "GET /v1/catalog 200"


def test_every_line_logged_while_a_request_is_served_carries_its_id(app: flask.Flask) -> None:
    """Not only the access line: any logger's line written inside the request has its id, none outside it."""
    lines: list[str] = []

    class Lines(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(f"{record.getMessage()} {getattr(record, 'request_id', '-')}")

    handler = Lines()
    handler.addFilter(logs.RequestIdFilter("api"))
    logger = logging.getLogger("workings")
    logger.addHandler(handler)

    @app.route("/logs-a-line")
    def logs_a_line() -> str:
        logger.warning("inside")
        return "ok"

    try:
        assert app.test_client().get("/logs-a-line", headers={"X-Request-Id": "inside-1"}).status_code == 200
        logger.warning("outside")
    finally:
        logger.removeHandler(handler)
    assert lines == ["inside inside-1", "outside None"]


def test_a_restarted_api_forgets_the_live_gauges_of_processes_killed_without_clean_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(metrics.MULTIPROC_DIR_VARIABLE, str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid, live_pid = int(dead.stdout), os.getpid()
    for pid in (dead_pid, live_pid):
        (tmp_path / f"gauge_livesum_{pid}.db").write_bytes(b"")
    (tmp_path / f"counter_{dead_pid}.db").write_bytes(b"")
    metrics.forget_dead_processes()
    left = sorted(path.name for path in tmp_path.iterdir())
    assert left == [f"counter_{dead_pid}.db", f"gauge_livesum_{live_pid}.db"]


def test_an_open_stream_is_an_open_watcher_until_it_closes(fake_redis: fakeredis.FakeRedis) -> None:
    settings = {"TESTING": True, "STREAM_HEARTBEAT_SECONDS": 0.05}
    client = create_app(settings, redis_client=fake_redis, dispatcher=RecordingDispatcher()).test_client()
    game = create_golf(client, seats=[{"kind": "human"}, {"kind": "human"}])
    before = sample("cardtable_watchers_open", kind="stream")
    reader = SseReader(client.get(f"/v1/games/{game['id']}/stream", buffered=False))
    assert reader.until(lambda message: message.get("event") == "GameCreated")
    assert sample("cardtable_watchers_open", kind="stream") == before + 1
    reader.close()  # the follower ends at the next heartbeat
    reader.rest()
    assert sample("cardtable_watchers_open", kind="stream") == before


def test_invented_methods_share_one_label_so_the_metrics_stay_bounded(client: FlaskClient) -> None:
    """A client may send any upper-case token as a method; each used to become a label value of its own (3,000 of
    them grew /metrics from 3.7 KB to 6.1 MB). Methods outside HTTP's own are counted as `other`."""
    for number in range(40):
        assert client.open("/healthz", method=f"INVENTED{number}").status_code == 405
    methods = {dict(labels).get("method") for (name, labels) in scrape(client) if name.startswith("cardtable_http_")}
    assert not any(method.startswith("INVENTED") for method in methods if method), methods
    assert value(scrape(client), "cardtable_http_requests_total", method="other", status="405") >= 40


def test_an_abandoned_game_leaves_the_active_games_and_is_counted_as_abandoned(app: flask.Flask) -> None:
    """An abandoned game was counted neither finished nor anything else, so `games_active` kept it for good."""
    client = app.test_client()
    created = create_golf(client)
    before = scrape(client)
    app.extensions["games"].abandon(created["id"], "no action for 30 days")
    after = scrape(client)
    assert (
        value(after, "cardtable_games_active", game="golf") == value(before, "cardtable_games_active", game="golf") - 1
    )
    assert value(after, "cardtable_games_abandoned", game="golf") == 1 + value(
        before, "cardtable_games_abandoned", game="golf"
    )
    assert value(after, "cardtable_games_finished", game="golf") == value(
        before, "cardtable_games_finished", game="golf"
    )
