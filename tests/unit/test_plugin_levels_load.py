"""service/play/plugin_levels.py's loader: what a second package or a plug-in that exits on import does to the
levels found (the tests' own package, tests/plugins, covers the rest in tests/service/test_plugin_levels.py)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from domain import bots
from service.play import plugin_levels
from service.play.plugin_levels import GROUP

PLUGINS_LOG = "service.play.plugin_levels"


def install_package(folder: Path, name: str, modules: dict[str, str], entry_points: dict[str, str]) -> None:
    """A package as pip installs it: its modules (by dotted name, each in a package of its own name) and a
    dist-info with its entry points in the group `cardtable.bots`."""
    for module, source in modules.items():
        path = folder.joinpath(*module.split("."))
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.with_suffix(".py").write_text(source, encoding="utf-8")
    dist = folder / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    lines = [f"{level} = {target}" for level, target in entry_points.items()]
    (dist / "entry_points.txt").write_text("\n".join([f"[{GROUP}]", *lines, ""]), encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path, where a test installs its packages; nothing of them is left after it."""
    before = bots.plugin_levels()
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    bots.use_plugin_levels(before)
    for name in [name for name in sys.modules if name.split(".")[0] in ("alpha_bots", "beta_bots")]:
        del sys.modules[name]


GOOD = 'games = ["golf"]\n\n\ndef policy(view, legal, rng):\n    return dict(legal[0])\n'


def test_a_level_two_packages_declare_is_the_first_s_and_the_second_is_logged(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    install_package(site / "a", "alpha-bots", {"alpha_bots.level": GOOD}, {"same": "alpha_bots.level"})
    install_package(
        site / "b", "beta-bots", {"beta_bots.level": GOOD}, {"same": "beta_bots.level", "other": "beta_bots.level"}
    )
    sys.path[:0] = [str(site / "a"), str(site / "b")]
    try:
        with caplog.at_level(logging.WARNING, logger=PLUGINS_LOG):
            levels = plugin_levels.install()
    finally:
        del sys.path[:2]
    assert [(level.name, level.origin) for level in levels] == [
        ("same", "alpha_bots.level"),
        ("other", "beta_bots.level"),
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "bot plug-in 'same' (beta_bots.level) left out: alpha_bots.level has that name"
    ]
    assert bots.levels_for("golf")[-2:] == ("other", "same")


def test_a_plug_in_that_exits_as_it_is_imported_is_left_out_and_the_process_goes_on(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    modules = {"alpha_bots.level": GOOD, "alpha_bots.quits": "import sys\n\nsys.exit(3)\n"}
    install_package(site, "alpha-bots", modules, {"quits": "alpha_bots.quits", "fine": "alpha_bots.level:nothing"})
    with caplog.at_level(logging.WARNING, logger=PLUGINS_LOG):
        assert plugin_levels.install() == ()
    said = [r.getMessage() for r in caplog.records]
    assert said[0] == "bot plug-in 'quits' (alpha_bots.quits) left out: it failed to load: SystemExit: 3"
    assert said[1].startswith(
        "bot plug-in 'fine' (alpha_bots.level:nothing) left out: it failed to load: AttributeError"
    )
