"""docs/storage.md#how-long-games-are and C-9's pages: the measured game lengths stay below the default
`max_events` the docs state, the stated default and ceiling are the code's, and each shown command runs."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from domain.options import MAX_EVENTS_DEFAULT
from service.play.event_limits import MAX_EVENTS_CEILING
from workers import simulate

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def section(path: Path, heading: str) -> str:
    """The text of a `## ` section of a page, up to the next one."""
    text = path.read_text(encoding="utf-8")
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


LENGTHS = section(DOCS / "storage.md", "How long games are")
COMMANDS = [line for line in LENGTHS.splitlines() if line.startswith("python -m workers.simulate ")]


def test_c9_the_docs_state_the_codes_default_and_ceiling() -> None:
    """C-9: the players' page, the operator's page and the lengths' section name the same default and ceiling."""
    common = section(DOCS / "rules" / "common.md", "The rules").split('<a id="C-9"></a>')[1]
    operations = section(DOCS / "operations.md", "Game length")
    for text in (common, operations):
        assert f"{MAX_EVENTS_DEFAULT:,}" in text and f"{MAX_EVENTS_CEILING:,}" in text
    assert f"{MAX_EVENTS_DEFAULT:,}" in LENGTHS


def test_c9_no_measured_game_of_greedy_or_expert_bots_at_the_default_options_reaches_the_default() -> None:
    """C-9: the default max_events lies above the longest greedy and expert game the table shows, with margin."""
    rows = re.findall(r"^\| (\w+) \| (\d+) (greedy|expert|random) \| \d+ \| [^|]+ \| ([\d,]+|-) \|$", LENGTHS, re.M)
    assert {(game, level) for game, _, level, _ in rows} >= {
        (game, level) for game in ("golf", "romme", "switch", "go5") for level in ("greedy", "expert")
    }
    longest = max(int(most.replace(",", "")) for _, _, level, most in rows if level != "random")
    assert longest * 4 < MAX_EVENTS_DEFAULT, longest
    assert str(f"{longest:,}") in section(DOCS / "rules" / "common.md", "The rules")


@pytest.mark.parametrize("command", COMMANDS)
def test_each_game_length_command_runs(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Each shown command runs as written but for one game and a limit of 300 events (to stay quick), and
    reports the events per game and the most events that the table quotes."""
    argv = shlex.split(command)[3:]
    argv[argv.index("--games") + 1] = "1"
    options = json.loads(argv[argv.index("--options") + 1])
    assert options["max_events"] == 10_000_000  # the runs lift the limit
    argv[argv.index("--options") + 1] = json.dumps({**options, "max_events": 300})
    assert simulate.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert 0 < summary["events_per_game"] <= summary["events_max"] <= 300
    assert summary["event_limit_ends"] in (0, 1) and summary["games"] == 1


def test_the_lengths_section_shows_commands() -> None:
    assert len(COMMANDS) >= 2
