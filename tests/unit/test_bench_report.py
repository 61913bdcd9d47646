"""The bench's report on made-up figures: var/bench.json's entries, the targets and the table."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from bench import __main__ as bench_main
from bench.procs import ROOT
from bench.report import Figure, Target, markdown, print_table, write_json

FIGURES = [
    Figure("fold_events_per_s", 30_000.0, "events/s", 120_000.0, Target(">=", 0.5), "5000 events"),
    Figure("actions_rps_c16", 410.0, "actions/s", 400.0, Target(">=", 1.0)),
    Figure("actions_p99_ms_c16", 25.123456, "ms", 30.0, Target("<", 20, on="value", unit="ms")),
    Figure("redis_bytes_per_game_golf", 113_040.0, "B", 89_578.0),
    Figure("action_cost_ratio_5000_vs_10", 5.0, "ms", None, Target("<=", 1.5)),
]


def test_each_figure_is_one_entry_with_exactly_the_issue_fields(tmp_path: Path) -> None:
    path = tmp_path / "var" / "bench.json"
    write_json(FIGURES, path)
    entries = json.loads(path.read_text(encoding="utf-8"))
    assert [e["name"] for e in entries] == [f.name for f in FIGURES]
    assert all(set(e) == {"name", "value", "unit", "floor", "ratio", "target"} for e in entries)
    fold = entries[0]
    assert fold == {
        "name": "fold_events_per_s",
        "value": 30_000,
        "unit": "events/s",
        "floor": 120_000,
        "ratio": 0.25,
        "target": "ratio >= 0.5",
    }
    assert entries[2]["value"] == 25.12  # four significant digits
    assert entries[2]["target"] == "< 20 ms"
    assert entries[3]["target"] is None
    assert entries[4]["floor"] is None and entries[4]["ratio"] is None


@pytest.mark.parametrize(
    ("figure", "met"),
    [
        (FIGURES[0], False),  # a ratio of 0.25 against at least 0.5
        (FIGURES[1], True),  # 410 against a floor of 400, at least 1
        (FIGURES[2], False),  # 25 ms against under 20 ms, whatever the floor
        (FIGURES[3], None),  # no target
        (FIGURES[4], None),  # a ratio target without a floor cannot be judged
        (Figure("p99", 19.9, "ms", 1.0, Target("<", 20, on="value")), True),
        (Figure("cost", 15.0, "ms", 10.0, Target("<=", 1.5)), True),
        (Figure("cost", 15.1, "ms", 10.0, Target("<=", 1.5)), False),
    ],
)
def test_a_target_is_judged_on_the_ratio_or_on_the_value(figure: Figure, met: bool | None) -> None:
    assert figure.met() is met


def test_an_unknown_comparison_is_refused() -> None:
    with pytest.raises(ValueError, match="no such target"):
        Target("~", 1.0)


def test_the_table_shows_every_figure_with_its_floor_ratio_and_verdict() -> None:
    console = Console(width=200, record=True, color_system=None)
    print_table(FIGURES, console)
    text = console.export_text()
    for figure in FIGURES:
        assert figure.name in text
    assert "120,000" in text and "0.25" in text and "ratio >= 0.5" in text
    assert text.count("not met") == 2
    assert "1.02" in text  # 410 / 400


def test_the_markdown_table_has_a_row_per_figure() -> None:
    lines = markdown(FIGURES).splitlines()
    assert lines[0].startswith("| figure | value | floor | ratio | target | met |")
    assert len(lines) == 2 + len(FIGURES)
    assert lines[2] == "| `fold_events_per_s` | 30,000 events/s | 120,000 | 0.25 | ratio >= 0.5 | no |"


def test_every_bench_command_the_docs_show_is_one_the_bench_takes() -> None:
    """`python -m bench --only X` in docs/performance.md names a part the bench's parser offers."""
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"python -m bench --only (\w+)", text))
    offered = set(bench_main.ONLY_PARTS)
    assert shown and shown <= offered, shown - offered
