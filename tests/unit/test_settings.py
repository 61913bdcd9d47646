"""The operator's whole-number settings (service/play/settings.py): one way to read them, one way to refuse."""

from __future__ import annotations

import pytest

from service.play.bot_turns import lease_seconds_from_env
from service.play.matches import MatchSettings, settings_from_env
from service.play.settings import whole_setting


def test_a_whole_setting_is_its_default_when_unset_and_its_digits_when_in_range() -> None:
    assert whole_setting({}, "X", 7) == 7
    assert whole_setting({"X": "  "}, "X", 7) == 7
    assert whole_setting({"X": " 12 "}, "X", 7, 1, 20) == 12


@pytest.mark.parametrize("text", ["-1", "1.5", "0x10", "١٢", "21", "0", "ten"])
def test_a_whole_setting_out_of_range_or_not_plain_digits_is_refused_naming_it(text: str) -> None:
    with pytest.raises(ValueError, match=r"X must be a whole number of seconds from 1 to 20"):
        whole_setting({"X": text}, "X", 7, 1, 20, "seconds")


def test_the_new_settings_read_through_it() -> None:
    assert lease_seconds_from_env({"BOT_TURN_LEASE_SECONDS": "9"}) == 9
    with pytest.raises(ValueError, match="BOT_TURN_LEASE_SECONDS"):
        lease_seconds_from_env({"BOT_TURN_LEASE_SECONDS": "0"})
    assert settings_from_env({"MATCH_DEALS_AT_ONCE": "3", "MATCHES_PER_CLIENT": "0"}) == MatchSettings(3, 0, 20)
    with pytest.raises(ValueError, match="MATCH_DEALS_AT_ONCE"):
        settings_from_env({"MATCH_DEALS_AT_ONCE": "0"})
