"""The figures of a bench run: each with its floor, the ratio to it and its target; JSON and a table."""

from __future__ import annotations

import dataclasses
import json
import math
import operator
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

_COMPARE: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "<": operator.lt,
    ">": operator.gt,
}


@dataclasses.dataclass(frozen=True)
class Target:
    """What a figure must reach: its ratio to the floor (`on="ratio"`) or its value (`on="value"`)."""

    op: str
    bound: float
    on: str = "ratio"
    unit: str = ""

    def __post_init__(self) -> None:
        if self.op not in _COMPARE or self.on not in ("ratio", "value"):
            raise ValueError(f"no such target: {self.on} {self.op} {self.bound}")

    def met(self, figure: Figure) -> bool | None:
        """Whether the figure meets it; None when what it is judged on is unknown."""
        subject = figure.ratio if self.on == "ratio" else figure.value
        if subject is None or math.isnan(subject):
            return None
        return _COMPARE[self.op](subject, self.bound)

    def __str__(self) -> str:
        bound = f"{self.bound:g}"
        if self.on == "ratio":
            return f"ratio {self.op} {bound}"
        return f"{self.op} {bound} {self.unit}".rstrip()


@dataclasses.dataclass(frozen=True)
class Figure:
    """One measured figure and the floor it is measured against in the same run."""

    name: str
    value: float
    unit: str
    floor: float | None = None
    target: Target | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """value / floor; None without a floor (or a zero one)."""
        if self.floor is None or self.floor == 0:
            return None
        return self.value / self.floor

    def met(self) -> bool | None:
        """Whether the target is met; None without a target."""
        return None if self.target is None else self.target.met(self)

    def to_json(self) -> dict[str, Any]:
        """The entry of var/bench.json: name, value, unit, floor, ratio, target."""
        ratio = self.ratio
        return {
            "name": self.name,
            "value": _rounded(self.value),
            "unit": self.unit,
            "floor": None if self.floor is None else _rounded(self.floor),
            "ratio": None if ratio is None else round(ratio, 4),
            "target": None if self.target is None else str(self.target),
        }


def _rounded(number: float) -> float:
    """Four significant digits are plenty for a benchmark figure."""
    if number == 0 or math.isnan(number) or math.isinf(number):
        return number
    return round(number, max(0, 3 - math.floor(math.log10(abs(number)))))


def write_json(figures: Sequence[Figure], path: Path) -> None:
    """Write the figures as a JSON list, one entry per figure."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([f.to_json() for f in figures], indent=2) + "\n", encoding="utf-8")


def _number(number: float | None) -> str:
    if number is None:
        return "-"
    if abs(number) >= 100:
        return f"{number:,.0f}"
    return f"{number:.3g}"


def _verdict(figure: Figure) -> str:
    met = figure.met()
    if met is None:
        return "-"
    return "[green]met[/green]" if met else "[red]not met[/red]"


def table(figures: Sequence[Figure], title: str = "Benchmarks") -> Table:
    """A rich table: figure, value, floor, ratio, target and whether it is met."""
    out = Table(title=title)
    for column, justify in (("figure", "left"), ("value", "right"), ("unit", "left"), ("floor", "right")):
        out.add_column(column, justify=justify)  # type: ignore[arg-type]
    for column in ("ratio", "target", "met", "note"):
        out.add_column(column, justify="right" if column == "ratio" else "left")
    for figure in figures:
        ratio = figure.ratio
        out.add_row(
            figure.name,
            _number(figure.value),
            figure.unit,
            _number(figure.floor),
            "-" if ratio is None else f"{ratio:.2f}",
            "-" if figure.target is None else str(figure.target),
            _verdict(figure),
            figure.note,
        )
    return out


def print_table(figures: Sequence[Figure], console: Console | None = None) -> None:
    """Print the table of figures."""
    (console or Console()).print(table(figures))


def markdown(figures: Sequence[Figure]) -> str:
    """The figures as a Markdown table, for docs/performance.md."""
    lines = ["| figure | value | floor | ratio | target | met |", "|---|---:|---:|---:|---|---|"]
    for figure in figures:
        ratio = figure.ratio
        met = figure.met()
        lines.append(
            f"| `{figure.name}` | {_number(figure.value)} {figure.unit} | {_number(figure.floor)} | "
            f"{'-' if ratio is None else f'{ratio:.2f}'} | {'-' if figure.target is None else str(figure.target)} | "
            f"{'-' if met is None else 'yes' if met else 'no'} |"
        )
    return "\n".join(lines)
