"""Plug-in levels in domain/bots: the domain is told of them (it loads nothing), lists them for the games they
name and hands out their policies; they never take a built-in level's name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from domain import bots
from domain.bots import LEVELS, PluginLevel, all_levels, levels_for, plugin_level, policy_for, use_plugin_levels
from domain.shuffle import SeededStream


def first_legal(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream) -> dict[str, Any]:
    return dict(legal[0])


@pytest.fixture(autouse=True)
def no_plugins_after() -> Iterator[None]:
    before = bots.plugin_levels()
    yield
    use_plugin_levels(before)


def test_a_plug_in_level_plays_the_games_it_names_and_only_those() -> None:
    use_plugin_levels([PluginLevel("first-legal", ("golf", "go5"), first_legal, "tests:first_legal")])
    assert levels_for("golf") == (*LEVELS, "first-legal")
    assert levels_for("switch") == LEVELS
    assert all_levels() == (*LEVELS, "first-legal")
    assert policy_for("golf", "first-legal") is first_legal
    with pytest.raises(ValueError, match="does not play 'switch'"):
        policy_for("switch", "first-legal")
    level = plugin_level("first-legal")
    assert level is not None and level.origin == "tests:first_legal"


def test_the_service_s_list_replaces_the_one_before() -> None:
    use_plugin_levels([PluginLevel("aa", ("golf",), first_legal), PluginLevel("zz", ("golf",), first_legal)])
    assert levels_for("golf") == (*LEVELS, "aa", "zz")
    use_plugin_levels([PluginLevel("zz", ("golf",), first_legal)])
    assert levels_for("golf") == (*LEVELS, "zz") and plugin_level("aa") is None
    use_plugin_levels([])
    assert all_levels() == LEVELS


def test_two_levels_of_one_name_are_refused_and_the_ones_before_stay() -> None:
    use_plugin_levels([PluginLevel("aa", ("golf",), first_legal)])
    with pytest.raises(ValueError, match="two plug-in levels are named 'bb'"):
        use_plugin_levels([PluginLevel("bb", ("golf",), first_legal), PluginLevel("bb", ("go5",), first_legal)])
    assert all_levels() == (*LEVELS, "aa")


@pytest.mark.parametrize(
    ("name", "games", "policy", "problem"),
    [
        ("greedy", ("golf",), first_legal, "built-in level"),
        ("expert", ("golf",), first_legal, "built-in level"),
        ("First_Legal", ("golf",), first_legal, "level's name"),
        ("x", ("golf",), first_legal, "level's name"),
        ("a" * 33, ("golf",), first_legal, "level's name"),
        ("first-legal", (), first_legal, "games"),
        ("first-legal", ["golf"], first_legal, "games"),
        ("first-legal", ("golf", 7), first_legal, "games"),
        ("first-legal", ("golf", "golf"), first_legal, "each game once"),
        ("first-legal", ("golf",), "not a function", "policy"),
    ],
)
def test_a_plug_in_level_of_the_wrong_shape_is_refused(name: str, games: Any, policy: Any, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        PluginLevel(name, games, policy)
