"""The bench measures the API as `make run` deploys it: gunicorn with the same settings file."""

from __future__ import annotations

import configparser
import os
import shlex

import pytest

from bench import procs
from bench.__main__ import APP


def make_run_gunicorn(program: str) -> list[str]:
    """The gunicorn arguments of a program of scripts/supervisord.conf, from the binary on."""
    conf = configparser.RawConfigParser()
    conf.read(procs.ROOT / "scripts" / "supervisord.conf")
    words = shlex.split(conf.get(f"program:{program}", "command"))
    start = next(i for i, word in enumerate(words) if word.endswith("/bin/gunicorn"))
    return words[start + 1 :]


@pytest.mark.parametrize("program", ["api", "stream"])
def test_the_bench_starts_gunicorn_with_make_runs_arguments(program: str) -> None:
    command = procs.gunicorn_command(APP)
    assert command[command.index(str(procs.BIN / "gunicorn")) + 1 :] == make_run_gunicorn(program)


@pytest.mark.parametrize(("cores", "processes"), [(1, 1), (2, 1), (3, 2), (4, 2), (16, 8), (None, 1)])
def test_the_stream_tier_runs_a_process_for_every_two_cores(
    monkeypatch: pytest.MonkeyPatch, cores: int | None, processes: int
) -> None:
    """As scripts/run.sh's STREAM_WORKERS default: (cores + 1) // 2, at least one (None: the count is unknown)."""
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert procs.stream_workers_default() == processes
    assert procs.stream_workers_default(cores) == processes


@pytest.mark.parametrize(("cores", "processes"), [(1, 2), (2, 3), (8, 9), (None, 2)])
def test_the_matches_workers_are_one_more_than_the_cores(
    monkeypatch: pytest.MonkeyPatch, cores: int | None, processes: int
) -> None:
    """As scripts/run.sh's MATCH_WORKERS default (None: the count is unknown, taken as one core)."""
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert procs.match_workers_default() == processes
    assert 'MATCH_WORKERS="${MATCH_WORKERS:-$((CORES + 1))}"' in (procs.ROOT / "scripts" / "run.sh").read_text()
