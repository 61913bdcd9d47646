"""The web page in a real browser: create games, play them by picking cards, replay them, read the audit.

Golf against three bots is played to the end by clicking cards and places only (and now and then by
keyboard); each other game gets a few moves the same way, its replay stepped. Every page is checked
for sideways scrolling at 320 and 390 px, for German with no English left, and with axe-core for
serious accessibility faults. Screenshots of each game at both widths go to var/screenshots/.
"""

from __future__ import annotations

import json
import secrets
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

pytestmark = [pytest.mark.integration, pytest.mark.browser]

WAIT = 30  # seconds for any one thing to appear (bots act through a real worker)
MAX_MOVES = 300  # a one-round Golf game takes far fewer human moves
PHONES = (320, 390)
DESKTOP = (1280, 900)
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
GAMES = {"golf": (4, {"rounds": "1"}), "switch": (4, {"target": "50"}), "romme": (3, {}), "go5": (3, {})}


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


def phone(browser: Chrome, width: int | None) -> None:
    """Emulate a phone `width` px wide (a window cannot be made that narrow); None: the desktop again."""
    if width is None:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        browser.set_window_size(*DESKTOP)
        return
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": False}
    )
    wait_for(browser, f"the page at {width} px", lambda b: in_page(b, "return window.innerWidth") == width)


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def register_bot(site: str, games: list[str]) -> str:
    """Register a bot for `games` through the API (POST /v1/bots); its name, new in each run."""
    name = f"bot-{secrets.token_hex(4)}"
    request = urllib.request.Request(
        f"{site}/v1/bots",
        data=json.dumps({"name": name, "games": games}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 201
    return name


def assert_fits(browser: Chrome, what: str) -> None:
    """Nothing wider than the window: no sideways scrolling on this screen."""
    overflow = browser.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"{what}: the page is {overflow}px wider than the window"


def shoot(browser: Chrome, folder: Path, name: str) -> None:
    assert browser.save_screenshot(str(folder / f"{name}.png")), name


def set_language(browser: Chrome, site: str, lang: str) -> None:
    browser.get(f"{site}/")
    in_page(browser, "localStorage.setItem('cardtable.lang', arguments[0]);", lang)
    browser.refresh()  # the language is read when the page loads
    wait_for(browser, f"the page in {lang}", lambda b: in_page(b, "return document.documentElement.lang;") == lang)


def create_from_form(
    browser: Chrome, site: str, game: str, players: int, options: dict[str, str], turn_seconds: str = ""
) -> str:
    """Fill the new-game form (seat 1 is you, the rest greedy bots) and return the new game's id."""
    browser.get(f"{site}/#/")
    select = wait_for(browser, "the game list", lambda b: b.find_element(By.ID, "game"))
    Select(select).select_by_value(game)
    players_input = browser.find_element(By.ID, "players")
    players_input.clear()
    players_input.send_keys(str(players), Keys.TAB)
    wait_for(browser, f"{players} seat rows", lambda b: len(b.find_elements(By.CSS_SELECTOR, ".seat-row")) == players)
    kinds = [
        Select(e).first_selected_option.get_attribute("value")
        for e in browser.find_elements(By.CSS_SELECTOR, ".seat-kind")
    ]
    assert kinds == ["human"] + ["bot"] * (players - 1)
    for name, value in options.items():
        field = browser.find_element(By.ID, f"opt-{name}")
        field.clear()
        field.send_keys(value)
    if turn_seconds:
        browser.find_element(By.ID, "turn-seconds").send_keys(turn_seconds)
    browser.find_element(By.ID, "create").click()
    wait_for(browser, "the play page", lambda b: page_data(b, "status") is not None)
    game_id = page_data(browser, "game-id")
    assert game_id and page_data(browser, "game") == game
    return game_id


def my_turn(browser: Chrome) -> bool:
    return page_data(browser, "my-turn") == "true" and bool(pickable(browser) or chips(browser))


def my_turn_or_end(browser: Chrome) -> bool:
    """Is it my turn, or is the game over?"""
    return page_data(browser, "status") == "finished" or my_turn(browser)


def pickable(browser: Chrome) -> list[WebElement]:
    """The cards and places that may be picked now (never a button)."""
    return browser.find_elements(By.CSS_SELECTOR, ".board [data-pick].pickable:not(button)")


def chips(browser: Chrome) -> list[WebElement]:
    """Choices the table cannot show (a suit to name, "send"): buttons of the move box."""
    return browser.find_elements(By.CSS_SELECTOR, ".moves button.chip")


def press(browser: Chrome, element: WebElement, keyboard: bool) -> None:
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    if keyboard:
        browser.execute_script("arguments[0].focus();", element)
        element.send_keys(Keys.ENTER)
    else:
        element.click()


def sent(browser: Chrome) -> int:
    """How many moves the page has sent (bots' moves, and Golf's reveals by others, move the version too)."""
    return int(page_data(browser, "sent") or 0)


def move_by_picking(browser: Chrome, keyboard: bool = False, allow_chips: bool = True) -> list[str]:
    """One move made by picking cards and places (the first one each time) until the page sends it."""
    before = sent(browser)
    picked: list[str] = []
    for _ in range(30):
        if sent(browser) > before:
            return picked
        try:
            cards = pickable(browser)
            if cards:
                element = cards[0]
            else:
                offered = chips(browser)
                if not offered:
                    wait_for(browser, "the move sent", lambda b: sent(b) > before)
                    return picked
                assert allow_chips, f"a choice button was needed after {picked}"
                element = offered[0]
            picked.append(str(element.get_attribute("data-pick")))
            press(browser, element, keyboard)
        except (StaleElementReferenceException, WebDriverException):
            continue  # the page redrew under the pick: look again
        wait_for(
            browser,
            "the pick taken",
            lambda b: sent(b) > before or int(page_data(b, "picks") or 0) > 0 or not pickable(b),
        )
    wait_for(browser, "the move sent", lambda b: sent(b) > before)
    return picked


def assert_cards_have_text(browser: Chrome) -> None:
    """Every card on the page has a text alternative."""
    cards = in_page(
        browser,
        "return [...document.querySelectorAll('.card')].map(c => [(c.getAttribute('aria-label')"
        " || c.querySelector(':scope > .card-name')?.textContent || '').trim(), c.outerHTML]);",
    )
    assert cards, "no card drawn"
    unnamed = [html for label, html in cards if not label]
    assert not unnamed, f"cards without a text alternative: {unnamed[:3]}"


def axe_violations(browser: Chrome) -> list[str]:
    """axe-core's serious and critical violations of the page as it is."""
    if not in_page(browser, "return typeof window.axe !== 'undefined';"):
        browser.execute_script(AXE.read_text())
    result = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        ".then(r => done(r.violations.filter(v => ['serious', 'critical'].includes(v.impact))"
        ".map(v => v.id + ': ' + v.help + ' — ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '))))"
        ".catch(e => done(['axe failed: ' + e]));"
    )
    return list(result)


def replay_at(browser: Chrome) -> int:
    return int(page_data(browser, "at") or 0)


def step(browser: Chrome, button_id: str, expect: int) -> None:
    browser.find_element(By.ID, button_id).click()
    wait_for(browser, f"replay at event {expect}", lambda b: replay_at(b) == expect)
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


def at_widths(browser: Chrome, screenshots: Path, name: str) -> None:
    """No sideways scroll at 320 and 390 px; a screenshot at each, and the desktop again."""
    for width in PHONES:
        phone(browser, width)
        assert_fits(browser, f"{name} at {width} px")
        shoot(browser, screenshots, f"{name}-{width}")
    phone(browser, None)


# ---------------------------------------------------------------- tests


def test_the_lobby_opens_on_golf_fits_a_phone_and_names_seats_as_the_game_does(
    browser: Chrome, site: str, screenshots: Path
) -> None:
    set_language(browser, site, "en")
    browser.get(f"{site}/#/")
    select = wait_for(browser, "the game list", lambda b: b.find_element(By.ID, "game"))
    assert Select(select).first_selected_option.get_attribute("value") == "golf"
    assert "lowest total wins" in text_of(browser, "#new-game").lower()
    labels = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".seat-row > label:first-child")]
    assert labels[:2] == ["Player 1", "Player 2"], labels
    # an option hint's rule id opens that rule in the game's "How to play"
    link = browser.find_element(By.CSS_SELECTOR, "#new-game a[data-rule]")
    rule = link.get_attribute("data-rule")
    link.click()
    wait_for(browser, f"rule {rule} shown", lambda b: b.find_element(By.ID, f"rule-{rule}").is_displayed())
    assert axe_violations(browser) == []
    at_widths(browser, screenshots, "lobby")
    game_id = create_from_form(browser, site, "golf", 2, {"rounds": "1"})
    names = [s["name"] for s in get_json(f"{site}/v1/games/{game_id}")["seats"]]
    assert names == ["Player 1", "greedy bot 2"], names
    assert text_of(browser, ".seat-chooser") == "You play Player 1."
    assert "greedy bot 2" in text_of(browser, ".ring")


def test_golf_against_three_bots_played_to_the_end_by_picking_cards_then_replayed(
    browser: Chrome, site: str, screenshots: Path
) -> None:
    set_language(browser, site, "en")
    players, options = GAMES["golf"]
    game_id = create_from_form(browser, site, "golf", players, options)
    assert text_of(browser, ".wins").lower().startswith("lowest total wins")
    moves = 0
    while page_data(browser, "status") != "finished":
        wait_for(browser, "my turn or the end", my_turn_or_end, timeout=90)
        if page_data(browser, "status") == "finished":
            break
        if moves == 0:  # the first move: pick two of your cards
            assert {e.get_attribute("data-pick") for e in pickable(browser)} >= {"grid:0", "grid:1"}
        keyboard = moves % 4 == 1  # now and then a move by keyboard: Enter on a focused card
        picked = move_by_picking(browser, keyboard, allow_chips=False)
        assert picked, "a move without a pick"
        moves += 1
        assert moves < MAX_MOVES, "the game does not end"
        if moves == 2:
            assert_cards_have_text(browser)
            shoot(browser, screenshots, "golf-playing")
            assert axe_violations(browser) == []
            at_widths(browser, screenshots, "golf")
        if page_data(browser, "last-seq"):
            assert text_of(browser, "#last-move"), "the last move is not said"
    assert text_of(browser, "#status").startswith("Game over:")
    ranking = in_page(
        browser, "return [...document.querySelectorAll('.result ol li')].map(li => [li.className, li.innerText]);"
    )
    assert len(ranking) == players and "won" in ranking[0][0], ranking
    totals = [int(text.rsplit(":", 1)[1].split()[0]) for _, text in ranking]
    assert totals == sorted(totals), f"Golf ranks the lowest total first: {ranking}"
    shoot(browser, screenshots, "golf-finished")
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
    assert wait_for(browser, "the audit's verdict", lambda b: text_of(b, "#verdict .word")) == "PASS"
    step(browser, "replay-first", 1)
    for seq in range(2, 6):
        step(browser, "replay-forward", seq)
    # a finished game's replay shows every hand: the face-down cards are shown, marked, and the mark explained
    assert not browser.find_elements(By.CSS_SELECTOR, ".grids .card.back")
    assert browser.find_elements(By.CSS_SELECTOR, ".grids .card.was-down")
    assert "face down" in text_of(browser, ".legend")
    assert browser.find_elements(By.CSS_SELECTOR, ".card.moved"), "the replay marks the last move's cards"
    assert_cards_have_text(browser)
    assert axe_violations(browser) == []
    shoot(browser, screenshots, "golf-replay-event-5")
    for seq in range(4, 0, -1):
        step(browser, "replay-back", seq)
    jump = browser.find_element(By.ID, "jump-to")
    jump.clear()
    jump.send_keys("5", Keys.ENTER)
    wait_for(browser, "the jump to event 5", lambda b: replay_at(b) == 5)
    assert browser.current_url.endswith(f"#/replay/{game_id}/5")
    at_widths(browser, screenshots, "golf-replay")


@pytest.mark.parametrize("game", ["switch", "romme", "go5"])
def test_a_game_against_bots_takes_moves_made_by_picking_cards_and_replays(
    browser: Chrome, site: str, screenshots: Path, game: str
) -> None:
    set_language(browser, site, "en")
    players, options = GAMES[game]
    game_id = create_from_form(browser, site, game, players, options)
    browser.refresh()  # the seat's token is kept in the tab: a reload still plays seat 0
    wait_for(browser, "the play page again", lambda b: page_data(b, "game-id") == game_id)
    moves = 0
    while moves < 3 and page_data(browser, "status") != "finished":
        wait_for(browser, "my turn", my_turn_or_end, timeout=90)
        if page_data(browser, "status") == "finished":
            break
        assert move_by_picking(browser, keyboard=moves == 1)
        moves += 1
        if moves == 1:
            assert_cards_have_text(browser)
            at_widths(browser, screenshots, game)
    assert moves == 3, f"{game}: {moves} moves made"
    record = get_json(f"{site}/v1/games/{game_id}/record")
    mine = [e for e in record["events"] if e["actor"] == 0]
    assert len(mine) >= 3
    wait_for(browser, "my move in the event log", lambda b: b.find_elements(By.CSS_SELECTOR, ".events li.mine"))
    shoot(browser, screenshots, f"{game}-after-moves")

    last = open_replay(browser)
    assert last >= mine[0]["seq"]
    step(browser, "replay-first", 1)
    step(browser, "replay-forward", 2)
    step(browser, "replay-last", last)
    assert wait_for(browser, "the audit's verdict", lambda b: text_of(b, "#verdict .word")) in ("INCOMPLETE", "PASS")
    shoot(browser, screenshots, f"{game}-replay")


def test_the_german_page_has_no_english_left(browser: Chrome, site: str, screenshots: Path) -> None:
    set_language(browser, site, "de")
    browser.get(f"{site}/#/")
    wait_for(browser, "the game list", lambda b: b.find_element(By.ID, "game"))
    catalogs = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "Promise.all([import('/web/i18n/en.js'), import('/web/i18n/de.js')])"
        ".then(([en, de]) => done([en.default, de.default]));"
    )
    en, de = catalogs
    assert sorted(en) == sorted(de), f"keys only in one catalog: {sorted(set(en) ^ set(de))}"
    english_only = sorted({v for k, v in en.items() if v != de[k] and len(v) >= 12 and "{" not in v})
    assert len(english_only) > 50

    def assert_german(what: str) -> None:
        text = in_page(browser, "return document.body.innerText + ' ' + document.title;")
        labels = in_page(
            browser,
            "return [...document.querySelectorAll('[aria-label]')].map(e => e.getAttribute('aria-label')).join(' ');",
        )
        assert "⟦" not in text + labels, (
            f"{what}: untranslated keys {[w for w in (text + labels).split() if '⟦' in w][:5]}"
        )
        left = [phrase for phrase in english_only if phrase in text]
        assert not left, f"{what}: English left: {left[:5]}"
        assert in_page(browser, "return document.documentElement.lang;") == "de"

    assert_german("the lobby")
    game_id = create_from_form(browser, site, "go5", 3, {})
    wait_for(browser, "my turn", lambda b: my_turn(b), timeout=90)
    assert_german("a Go5 game")
    assert "höchste Summe" in text_of(browser, ".wins")
    shoot(browser, screenshots, "go5-german")
    browser.get(f"{site}/#/replay/{game_id}")
    wait_for(browser, "the replay", lambda b: replay_at(b) > 0)
    wait_for(browser, "the audit's verdict", lambda b: text_of(b, "#verdict .word"))
    assert_german("the replay")
    assert axe_violations(browser) == []
    # the switch goes back to English
    Select(browser.find_element(By.ID, "language")).select_by_value("en")
    wait_for(browser, "English", lambda b: in_page(b, "return document.documentElement.lang;") == "en")
    set_language(browser, site, "en")


def network(offline: bool) -> dict[str, Any]:
    """Chromium's network emulation: offline or back to normal."""
    return {"offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}


def test_a_lost_connection_is_not_a_refusal_and_its_message_goes_once_it_is_back(browser: Chrome, site: str) -> None:
    set_language(browser, site, "en")
    create_from_form(browser, site, "golf", 2, {"rounds": "1"})
    wait_for(browser, "my turn", lambda b: my_turn(b), timeout=60)
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        network(offline=True),
    )
    try:
        cards = pickable(browser)
        press(browser, cards[0], False)
        press(browser, pickable(browser)[0], False)
        wait_for(browser, "the connection message", lambda b: text_of(b, "#connection"))
        assert "reach" in text_of(browser, "#connection")
        assert "Refused" not in text_of(browser, "#alert")
    finally:
        browser.execute_cdp_cmd(
            "Network.emulateNetworkConditions",
            network(offline=False),
        )
    wait_for(browser, "the connection message gone", lambda b: not text_of(b, "#connection"), timeout=60)
    assert my_turn(browser)


def countdown(browser: Chrome) -> int:
    """The seconds the turn bar says are left ("57 s left for this turn"), or -1."""
    text = text_of(browser, "#countdown")
    return int(text.split()[0]) if text else -1


def test_a_timed_turn_shows_a_countdown_and_arrow_keys_move_between_cards(browser: Chrome, site: str) -> None:
    set_language(browser, site, "en")
    create_from_form(browser, site, "golf", 2, {"rounds": "1"}, turn_seconds="120")
    wait_for(browser, "my turn", my_turn, timeout=60)
    assert text_of(browser, "#status") == "Your turn."
    assert 0 < wait_for(browser, "the countdown", lambda b: countdown(b) > 0) <= 120

    def ticking(b: Chrome) -> bool:  # each new version (a bot's reveal) starts the clock again
        version, left = page_data(b, "version"), countdown(b)
        time.sleep(1.5)
        return page_data(b, "version") == version and 0 < countdown(b) < left

    wait_for(browser, "the countdown going down", ticking)
    cards = [str(e.get_attribute("data-pick")) for e in pickable(browser)]
    assert cards[:2] == ["grid:0", "grid:1"], cards
    element = pickable(browser)[0]
    browser.execute_script("arguments[0].focus();", element)
    element.send_keys(Keys.ARROW_RIGHT)
    assert in_page(browser, "return document.activeElement.dataset.pick;") == "grid:1"
    browser.switch_to.active_element.send_keys(Keys.SPACE)
    wait_for(browser, "grid:1 picked", lambda b: page_data(b, "picks") == "1")
    assert in_page(browser, "return document.activeElement.getAttribute('aria-pressed');") == "true"


def bot_choices(browser: Chrome, seat: int) -> dict[str, str]:
    """The registered bots a seat's choice offers: {name: the option's text}."""
    found: dict[str, str] = in_page(
        browser,
        "return Object.fromEntries([...document.querySelectorAll(`#seat-${arguments[0]}-level option[data-bot]`)]"
        ".map((o) => [o.dataset.bot, o.textContent]));",
        seat,
    )
    return found


def open_form(browser: Chrome, site: str, game: str, players: int, reload: bool = False) -> None:
    """The new-game form with `game` and `players` seats chosen (`reload`: in a new document)."""
    browser.get(f"{site}/#/")
    if reload:
        browser.refresh()
    Select(wait_for(browser, "the game list", lambda b: b.find_element(By.ID, "game"))).select_by_value(game)
    players_input = browser.find_element(By.ID, "players")
    players_input.clear()
    players_input.send_keys(str(players), Keys.TAB)
    wait_for(browser, f"{players} seat rows", lambda b: len(b.find_elements(By.CSS_SELECTOR, ".seat-row")) == players)


# the page's fetch, with `online: true` for the bot named in the script: the service says false until bots
# can ask for turns, so that is how the page's "online" is seen
ONLINE_STUB = """
const realFetch = window.fetch;
window.fetch = async (...args) => {
  const answer = await realFetch(...args);
  if (!String(args[0]).startsWith('/v1/bots?') || !answer.ok) return answer;
  const body = await answer.json();
  for (const bot of body.bots) bot.online = bot.name === %s;
  return new Response(JSON.stringify(body), { status: answer.status, headers: answer.headers });
};
"""


def test_a_seat_can_be_a_registered_bot_of_the_game_marked_online_or_not(
    browser: Chrome, site: str, screenshots: Path
) -> None:
    golfer, other_golfer = register_bot(site, ["golf"]), register_bot(site, ["golf", "romme"])
    rummy = register_bot(site, ["romme"])
    set_language(browser, site, "en")
    open_form(browser, site, "golf", 3)
    wait_for(browser, "the registered bots offered", lambda b: golfer in bot_choices(b, 1))
    mine = {golfer, other_golfer, rummy}  # other tests share the service and register bots of their own

    def offered(seat: int) -> dict[str, str]:
        return {name: label for name, label in bot_choices(browser, seat).items() if name in mine}

    assert offered(1) == {golfer: f"{golfer} (offline)", other_golfer: f"{other_golfer} (offline)"}
    assert bot_choices(browser, 0) == bot_choices(browser, 1), "every seat offers them"
    Select(browser.find_element(By.ID, "seat-1-level")).select_by_value(f"bot:{golfer}")
    assert axe_violations(browser) == []
    at_widths(browser, screenshots, "lobby-registered-bot")
    # another game offers its own bots only
    Select(browser.find_element(By.ID, "game")).select_by_value("romme")
    wait_for(browser, "Rommé's bots offered", lambda b: rummy in bot_choices(b, 1))
    assert set(offered(1)) == {other_golfer, rummy}
    Select(browser.find_element(By.ID, "game")).select_by_value("golf")
    wait_for(browser, "Golf's bots offered again", lambda b: golfer in bot_choices(b, 1))

    # one bot in two seats: the service's refusal (422 invalid_bot_seat) is shown, and nothing is created
    for seat in (1, 2):
        Select(browser.find_element(By.ID, f"seat-{seat}-level")).select_by_value(f"bot:{golfer}")
    assert browser.find_element(By.ID, "seat-1-name").get_attribute("placeholder") == golfer
    browser.find_element(By.ID, "create").click()
    refusal = wait_for(browser, "the refusal", lambda b: text_of(b, "#create-error"))
    assert refusal.startswith("Not created: ") and "one seat" in refusal, refusal
    assert browser.current_url.endswith("#/")

    Select(browser.find_element(By.ID, "seat-2-level")).select_by_value("random")
    browser.find_element(By.ID, "create").click()
    wait_for(browser, "the play page", lambda b: page_data(b, "status") is not None)
    game_id = page_data(browser, "game-id")
    seats = get_json(f"{site}/v1/games/{game_id}")["seats"]
    assert [(s["kind"], s["name"], s.get("bot"), s.get("level")) for s in seats] == [
        ("human", "Player 1", None, None),
        ("bot", golfer, golfer, None),
        ("bot", "random bot 3", None, "random"),
    ], seats

    # a bot that is online is marked so, in both languages
    stub = browser.execute_cdp_cmd(
        "Page.addScriptToEvaluateOnNewDocument", {"source": ONLINE_STUB % json.dumps(golfer)}
    )
    try:
        open_form(browser, site, "golf", 2, reload=True)
        wait_for(browser, "the registered bots offered", lambda b: golfer in bot_choices(b, 1))
        assert offered(1) == {golfer: f"{golfer} (online)", other_golfer: f"{other_golfer} (offline)"}
        set_language(browser, site, "de")
        open_form(browser, site, "golf", 2)
        wait_for(browser, "the registered bots offered", lambda b: golfer in bot_choices(b, 1))
        assert offered(1) == {
            golfer: f"{golfer} (verbunden)",
            other_golfer: f"{other_golfer} (nicht verbunden)",
        }
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": stub["identifier"]})
        set_language(browser, site, "en")
