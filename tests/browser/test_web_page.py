"""The web page in a real browser: create games, play them by clicking, replay them, read the audit.

Golf against three bots is played to the end with clicks (the first legal move each time); each
other game gets a smoke test: created against bots from the form, one move clicked, the view and
the event log updated, its replay stepped. Screenshots go to var/screenshots/.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

pytestmark = [pytest.mark.integration, pytest.mark.browser]

WAIT = 30  # seconds for any one thing to appear (bots act through a real worker)
MAX_MOVES = 300  # a one-round Golf game takes far fewer human moves
PHONE = (390, 844)
DESKTOP = (1280, 900)


# ---------------------------------------------------------------- helpers


def wait_for(browser: Chrome, what: str, check: Callable[[Chrome], Any], timeout: float = WAIT) -> Any:
    """Wait until `check` is truthy (stale elements mean: look again)."""
    return WebDriverWait(browser, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(
        check, f"timed out waiting for {what}"
    )


def in_page(browser: Chrome, script: str, *args: Any) -> Any:
    """Run `script` in the page: one read in one go, so a redraw cannot leave it half-done (stale)."""
    return browser.execute_script(script, *args)


def page_data(browser: Chrome, name: str) -> str | None:
    """An attribute `data-<name>` of the current page (play or replay)."""
    found: str | None = in_page(
        browser,
        "const p = document.querySelector('.page'); return p ? p.getAttribute(arguments[0]) : null;",
        f"data-{name}",
    )
    return found


def text_of(browser: Chrome, selector: str) -> str:
    """The shown text of the first element matching `selector` ("" if there is none)."""
    found: str = in_page(
        browser, "const e = document.querySelector(arguments[0]); return e ? e.innerText.trim() : '';", selector
    )
    return found


def enabled_moves(browser: Chrome) -> list[WebElement]:
    return [b for b in browser.find_elements(By.CSS_SELECTOR, ".moves button.action") if b.is_enabled()]


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def create_from_form(
    browser: Chrome, site: str, screenshots: Path, game: str, players: int, options: dict[str, str]
) -> str:
    """Fill the new-game form (seat 1 is you, the rest greedy bots) and return the new game's id."""
    browser.get(f"{site}/")
    select = wait_for(browser, "the game list", lambda b: b.find_element(By.ID, "game"))
    Select(select).select_by_value(game)
    players_input = browser.find_element(By.ID, "players")
    players_input.clear()
    players_input.send_keys(str(players), Keys.TAB)
    wait_for(browser, f"{players} seat rows", lambda b: len(b.find_elements(By.CSS_SELECTOR, ".seat-row")) == players)
    kind_selects = browser.find_elements(By.CSS_SELECTOR, ".seat-kind")
    kinds = [Select(e).first_selected_option.get_attribute("value") for e in kind_selects]
    assert kinds == ["human"] + ["bot"] * (players - 1)
    for name, value in options.items():
        field = browser.find_element(By.ID, f"opt-{name}")
        field.clear()
        field.send_keys(value)
    assert_fits(browser, f"the new-game form for {game}")
    shoot(browser, screenshots, f"{game}-new-game-form")
    browser.find_element(By.ID, "create").click()
    wait_for(browser, "the play page", lambda b: page_data(b, "status") is not None)
    game_id = page_data(browser, "game-id")
    assert game_id and page_data(browser, "game") == game
    return game_id


def click_first_move(browser: Chrome, keyboard: bool = False) -> str:
    """Click (or press Enter on) the first enabled legal-action button; returns its action once the page moved on."""
    version = int(page_data(browser, "version") or 0)
    for attempt in range(5):
        try:
            button: WebElement = wait_for(browser, "an enabled move", lambda b: next(iter(enabled_moves(b)), None))
            action = str(button.get_attribute("data-key"))
            if keyboard:
                button.send_keys(Keys.ENTER)
            else:
                button.click()
            break
        except StaleElementReferenceException:
            if attempt == 4:
                raise  # the page kept redrawing under the click
    wait_for(browser, "the new state after a move", lambda b: int(page_data(b, "version") or 0) > version)
    return action


def assert_cards_have_text(browser: Chrome) -> None:
    """Every card on the page has a text alternative."""
    cards = in_page(
        browser,
        "return [...document.querySelectorAll('.card')]"
        ".map(c => [(c.getAttribute('aria-label') || '').trim(), c.outerHTML]);",
    )
    assert cards, "no card drawn"
    unnamed = [html for label, html in cards if not label]
    assert not unnamed, f"cards without a text alternative: {unnamed[:3]}"


def assert_fits(browser: Chrome, what: str) -> None:
    """Nothing wider than the window: no sideways scrolling on this screen."""
    overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{what}: the page is {overflow}px wider than the window"


def shoot(browser: Chrome, folder: Path, name: str) -> None:
    assert browser.save_screenshot(str(folder / f"{name}.png")), name


def replay_at(browser: Chrome) -> int:
    return int(page_data(browser, "at") or 0)


def step(browser: Chrome, button_id: str, expect: int) -> None:
    browser.find_element(By.ID, button_id).click()
    wait_for(browser, f"replay at event {expect}", lambda b: replay_at(b) == expect)
    position = text_of(browser, "#replay-position")
    assert position.startswith(f"Event {expect} of "), position
    current = in_page(
        browser, "return [...document.querySelectorAll('.replay-events li.current')].map(li => li.dataset.seq);"
    )
    assert current == [str(expect)]


def open_replay(browser: Chrome) -> int:
    """Follow the play page's replay link; returns the number of events shown."""
    browser.find_element(By.ID, "replay-link").click()
    wait_for(browser, "the replay", lambda b: replay_at(b) > 0)
    last = replay_at(browser)
    assert in_page(browser, "return document.querySelectorAll('.replay-events li').length;") == last
    return last


# ---------------------------------------------------------------- tests


def test_golf_against_three_bots_played_to_the_end_by_clicking_then_replayed(
    browser: Chrome, site: str, screenshots: Path
) -> None:
    browser.set_window_size(*DESKTOP)
    game_id = create_from_form(browser, site, screenshots, "golf", 4, {"rounds": "1"})
    shoot(browser, screenshots, "golf-start")
    moves = 0
    while page_data(browser, "status") != "finished":
        wait_for(
            browser,
            "my turn or the end",
            lambda b: page_data(b, "status") == "finished" or enabled_moves(b),
            timeout=60,
        )
        if page_data(browser, "status") == "finished":
            break
        keyboard = moves % 4 == 1  # now and then a move by keyboard: Enter on the focused button
        try:
            click_first_move(browser, keyboard)
        except StaleElementReferenceException:
            continue  # the page redrew under the click: look again
        moves += 1
        if keyboard:  # the focus stays with the moves: on the next turn it is on a move again
            wait_for(browser, "my turn or the end", lambda b: page_data(b, "status") == "finished" or enabled_moves(b))
            if page_data(browser, "status") != "finished":
                focused = in_page(browser, "const f = document.activeElement; return [f.className, f.outerHTML];")
                assert "action" in focused[0], focused[1]
        assert moves < MAX_MOVES, "the game does not end"
        if moves == 3:
            assert_cards_have_text(browser)
            shoot(browser, screenshots, "golf-playing")
    status = text_of(browser, "#status")
    assert status.startswith("Game over:"), status
    assert browser.find_elements(By.CSS_SELECTOR, ".result .winners")
    shoot(browser, screenshots, "golf-finished")
    # the service agrees: finished, every move of seat 0 made through the page
    view = get_json(f"{site}/v1/games/{game_id}")
    assert view["status"] == "finished" and view["result"]["winners"]
    record = get_json(f"{site}/v1/games/{game_id}/record")
    assert len([e for e in record["events"] if e["actor"] == 0]) >= moves > 0
    # the page followed the game on the seat's live stream: a ticket in its URL, never the token
    fetched = in_page(browser, "return performance.getEntriesByType('resource').map((e) => e.name);")
    streams = [url for url in fetched if f"/v1/games/{game_id}/stream?" in url]
    assert streams and all("&ticket=" in url for url in streams), fetched[-20:]
    assert f"{site}/v1/games/{game_id}/stream-tickets" in fetched
    assert not [url for url in fetched if "/events?" in url and "wait=" in url], "the long-poll was not needed"

    last = open_replay(browser)
    assert last == record["version"]
    verdict = wait_for(browser, "the audit's verdict", lambda b: text_of(b, "#verdict .word"))
    assert verdict == "PASS"
    step(browser, "replay-first", 1)
    for seq in range(2, 6):
        step(browser, "replay-forward", seq)
    # a finished game's replay shows every hand: the face-down cards are shown, marked as such
    assert not browser.find_elements(By.CSS_SELECTOR, ".grids .card.back")
    assert browser.find_elements(By.CSS_SELECTOR, ".grids .card.was-down")
    assert_cards_have_text(browser)
    shoot(browser, screenshots, "golf-replay-event-5")
    for seq in range(4, 0, -1):
        step(browser, "replay-back", seq)
    jump = browser.find_element(By.ID, "jump-to")
    jump.clear()
    jump.send_keys("5", Keys.ENTER)
    wait_for(browser, "the jump to event 5", lambda b: replay_at(b) == 5)
    assert browser.current_url.endswith(f"#/replay/{game_id}/5")
    browser.set_window_size(*PHONE)
    assert_fits(browser, "golf replay on a phone")
    shoot(browser, screenshots, "golf-replay-phone")
    browser.set_window_size(*DESKTOP)


SMOKE = {
    "switch": (4, {"target": "50"}),
    "romme": (3, {}),
    "go5": (3, {}),
}


@pytest.mark.parametrize("game", sorted(SMOKE))
def test_a_game_created_against_bots_takes_a_clicked_move_and_replays(
    browser: Chrome, site: str, screenshots: Path, game: str
) -> None:
    players, options = SMOKE[game]
    browser.set_window_size(*PHONE)
    game_id = create_from_form(browser, site, screenshots, game, players, options)
    assert_fits(browser, f"{game} on a phone")
    browser.refresh()  # the seat's token is kept in the tab: a reload still plays seat 0
    wait_for(browser, "the play page again", lambda b: page_data(b, "game-id") == game_id)
    wait_for(browser, "my turn", lambda b: enabled_moves(b), timeout=60)
    assert_cards_have_text(browser)
    shoot(browser, screenshots, f"{game}-my-turn-phone")
    action = json.loads(click_first_move(browser))
    # the move is in the service's record, and in the page's event log as mine
    record = get_json(f"{site}/v1/games/{game_id}/record")
    mine = [e for e in record["events"] if e["actor"] == 0]
    assert mine, f"no event of seat 0 after {action}"
    wait_for(browser, "my move in the event log", lambda b: b.find_elements(By.CSS_SELECTOR, ".events li.mine"))
    browser.set_window_size(*DESKTOP)
    shoot(browser, screenshots, f"{game}-after-move")

    last = open_replay(browser)
    assert last >= mine[0]["seq"]
    step(browser, "replay-first", 1)
    step(browser, "replay-forward", 2)
    step(browser, "replay-back", 1)
    step(browser, "replay-last", last)
    verdict = wait_for(browser, "the audit's verdict", lambda b: text_of(b, "#verdict .word"))
    assert verdict in ("INCOMPLETE", "PASS")  # a running game's seed is still secret
    shoot(browser, screenshots, f"{game}-replay")
