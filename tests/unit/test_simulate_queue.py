"""`--via-queue` without a service: a bad URL or an unreachable service is a clear error, not a traceback."""

from __future__ import annotations

import socket

import pytest

from workers import simulate

ARGS = ["--game", "golf", "--games", "2", "--seats", "greedy,random", "--json"]


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("url", ["localhost:8000", "ftp://127.0.0.1:8000", "http://"])
def test_a_url_that_is_not_a_service_base_url_exits_2(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert simulate.main([*ARGS, "--via-queue", url]) == 2
    assert "base URL" in capsys.readouterr().err


def test_concurrency_below_one_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert simulate.main([*ARGS, "--via-queue", "http://127.0.0.1:8000", "--concurrency", "0"]) == 2
    assert "--concurrency" in capsys.readouterr().err


def test_an_unreachable_service_exits_1_and_says_where(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{unused_port()}"
    assert simulate.main([*ARGS, "--via-queue", url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("simulate: cannot reach the service") and url in err
