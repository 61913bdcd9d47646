"""`broken-import`: a plug-in whose import fails (a dependency that is not installed)."""

from __future__ import annotations

import cardtable_test_bots_missing_dependency  # noqa: F401  # there is no such module

games = ("golf",)


def policy(view: object, legal: list[dict[str, object]], rng: object) -> dict[str, object]:
    return dict(legal[0])
