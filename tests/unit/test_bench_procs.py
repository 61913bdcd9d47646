"""The bench measures the API as `make run` deploys it: gunicorn with the same settings file."""

from __future__ import annotations

import configparser
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
