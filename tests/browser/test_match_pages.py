"""The match pages in a real browser: a match started through the form, its progress bar, its results with the
paired intervals drawn as bars, its games' replays; the list of matches; a registered bot's page and the
ladder page. Each page is checked with axe-core and for sideways scrolling at 320 and 390 px.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from tests.browser.test_web_page import (
    at_widths,
    axe_violations,
    get_json,
    in_page,
    page_data,
    replay_at,
    set_language,
    text_of,
    wait_for,
)
from tests.integration.conftest import ROOT, stop

pytestmark = [pytest.mark.integration, pytest.mark.browser]

MATCH_WAIT = 180  # seconds for a small all-bot match to finish through one worker, on a loaded machine too

# every change of the match page noted as it happens: the progress bar (value, max) and the page's status, so
# that a bar shown only for a moment is seen too
WATCH_PROGRESS = """
window.matchStates = [];
new MutationObserver(() => {
  const page = document.querySelector('.page.match');
  const bar = document.getElementById('match-progress');
  if (page) window.matchStates.push([page.dataset.status ?? null, bar ? bar.value : null, bar ? bar.max : null]);
}).observe(document.body, { subtree: true, childList: true, attributes: true });
"""


def post_json(url: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def cells(browser: Chrome, selector: str) -> list[list[str]]:
    """The text of each cell of each row matching `selector`."""
    found: list[list[str]] = in_page(
        browser,
        "return [...document.querySelectorAll(arguments[0])].map(r => [...r.cells].map(c => c.innerText.trim()));",
        selector,
    )
    return found


def wait_for_finish(browser: Chrome, site: str, match_id: str, *logs: Path) -> None:
    """Wait for the match page to show the match finished; if it does not, fail with what the service says of
    the match, what the page logged and the tails of `logs` (so that a stall can be told from a slow page)."""
    try:
        wait_for(browser, "the match finished", lambda b: page_data(b, "status") == "finished", timeout=MATCH_WAIT)
    except TimeoutException:
        match = get_json(f"{site}/v1/matches/{match_id}")
        games = [(g.get("deal"), g.get("rotation"), g.get("status")) for g in match.get("games", [])]
        bots = {e["bot"]: get_json(f"{site}/v1/bots/{e['bot']}") for e in match["entrants"] if "bot" in e}
        tails = {path.name: path.read_text(errors="replace")[-4000:] for path in logs if path.exists()}
        console = [entry.get("message") for entry in browser.get_log("browser")][-20:]
        pytest.fail(
            f"match {match_id} not finished on the page after {MATCH_WAIT} s: the service says {match['status']}, "
            f"{match['progress']}, games {games}; bots {bots}; the page shows {page_data(browser, 'status')}; "
            f"console {console}; logs {tails}"
        )


def test_a_match_started_through_the_form_shows_its_progress_then_its_results_with_bars(
    browser: Chrome, site: str, screenshots: Path
) -> None:
    set_language(browser, site, "en")
    browser.get(f"{site}/#/matches")
    Select(wait_for(browser, "the match form", lambda b: b.find_element(By.ID, "match-game"))).select_by_value("golf")
    count = browser.find_element(By.ID, "entrant-count")
    count.clear()
    count.send_keys("2", Keys.TAB)
    wait_for(browser, "two entrants", lambda b: len(b.find_elements(By.CSS_SELECTOR, ".entrant-row")) == 2)
    Select(browser.find_element(By.ID, "entrant-0")).select_by_value("random")
    Select(browser.find_element(By.ID, "entrant-1")).select_by_value("greedy")
    deals = browser.find_element(By.ID, "deals")
    deals.clear()
    deals.send_keys("3")
    rounds = browser.find_element(By.ID, "opt-rounds")
    rounds.clear()
    rounds.send_keys("1")
    assert axe_violations(browser) == []
    at_widths(browser, screenshots, "match-form")

    in_page(browser, WATCH_PROGRESS)
    browser.find_element(By.ID, "start-match").click()
    wait_for(browser, "the match page", lambda b: page_data(b, "match-id"))
    match_id = str(page_data(browser, "match-id"))
    assert browser.current_url.endswith(f"#/match/{match_id}")
    wait_for_finish(browser, site, match_id)
    states = in_page(browser, "return window.matchStates;")
    running = [(value, top) for status, value, top in states if status == "running" and top is not None]
    assert running and all(top == 6 and 0 <= value <= 6 for value, top in running), states
    assert not [s for s in states if s[0] == "finished" and s[2] is not None], "no progress bar once finished"
    assert "finished" in text_of(browser, "#match-status")

    match = get_json(f"{site}/v1/matches/{match_id}")
    assert match["status"] == "finished" and match["options"] == {"rounds": 1} and match["deals"] == 3
    assert [e["level"] for e in match["entrants"]] == ["random", "greedy"]
    # the standings, best first (Golf: fewer points per hand), and every paired difference with its bar
    results = {r["entrant"]: r for r in match["results"]}
    best_first = sorted(results.values(), key=lambda r: r["mean_points_per_hand"])
    standings = cells(browser, "#standings tbody tr")
    assert [row[1] for row in standings] == [r["entrant"] for r in best_first]
    assert [row[3] for row in standings] == [f"{r['mean_points_per_hand']:.2f}" for r in best_first]
    assert [row[4] for row in standings] == [str(r["timeouts"]) for r in best_first], "moves played at a deadline"
    pairs = in_page(
        browser,
        "return [...document.querySelectorAll('#paired tbody tr')].map(r => ({entrant: r.dataset.entrant,"
        " vs: r.dataset.vs, reading: r.querySelector('.verdict-text').innerText,"
        " label: r.querySelector('svg.pair-bar[role=img]')?.getAttribute('aria-label'),"
        " interval: r.querySelectorAll('svg.pair-bar rect.interval').length,"
        " mean: r.querySelectorAll('svg.pair-bar circle.mean').length}));",
    )
    assert len(pairs) == 2, pairs
    for shown in pairs:
        pair = next(p for p in results[shown["entrant"]]["paired"] if p["vs"] == shown["vs"])
        low, high = pair["ci95"]  # three deals: an interval
        assert shown["interval"] == 1 and shown["mean"] == 1, shown
        assert shown["label"].startswith(f"{shown['entrant']} minus {shown['vs']}: {pair['mean']:+.2f}"), shown
        expected = "not told apart" if low <= 0 <= high else ("better" if high < 0 else "worse")
        assert shown["reading"].startswith(expected), (shown, pair)
    assert browser.find_element(By.ID, "match-record").get_attribute("href").endswith(f"/v1/matches/{match_id}/record")
    assert axe_violations(browser) == []
    at_widths(browser, screenshots, "match-finished")

    # every game is linked to its replay once its deal is done: one of them opens and passes its audit
    links = in_page(browser, "return [...document.querySelectorAll('#match-games a.replay-link')].map(a => a.hash);")
    assert sorted(links) == sorted(f"#/replay/{game['game_id']}" for game in match["games"]), links
    assert len(links) == 6
    browser.find_element(By.CSS_SELECTOR, "#match-games a.replay-link").click()
    wait_for(browser, "the replay", lambda b: replay_at(b) > 0)
    assert page_data(browser, "game-id") == match["games"][0]["game_id"]
    assert wait_for(browser, "the audit's verdict", lambda b: text_of(b, "#verdict .word")) == "PASS"

    # the list of matches shows it, newest first, linked to its page
    browser.get(f"{site}/#/matches")
    wait_for(browser, "the match listed", lambda b: b.find_elements(By.CSS_SELECTOR, "#match-list li"))
    first = browser.find_element(By.CSS_SELECTOR, "#match-list li")
    assert first.get_attribute("data-match-id") == match_id
    assert "Golf: random, greedy" in first.text and "3 deals" in first.text and "finished" in first.text


def test_the_form_shows_a_refusal_and_starts_nothing(browser: Chrome, site: str) -> None:
    set_language(browser, site, "en")
    browser.get(f"{site}/#/matches")
    wait_for(browser, "the match form", lambda b: b.find_elements(By.CSS_SELECTOR, ".entrant-row"))
    for row in (0, 1):
        Select(browser.find_element(By.ID, f"entrant-{row}")).select_by_value("greedy")
    before = get_json(f"{site}/v1/matches?limit=1")["matches"]
    browser.find_element(By.ID, "start-match").click()
    refusal = wait_for(browser, "the refusal", lambda b: text_of(b, "#match-error"))
    assert refusal.startswith("Not started: entrants: each entrant at most once"), refusal
    assert browser.current_url.endswith("#/matches")
    assert get_json(f"{site}/v1/matches?limit=1")["matches"] == before


@pytest.fixture
def bridged_bot(site: str, tmp_path: Path) -> Iterator[str]:
    """A bot registered for Golf, its turns played by the bridge (the first legal action, docs/examples/first_legal.py);
    its name."""
    name = f"bot-{secrets.token_hex(4)}"
    status, bot = post_json(
        f"{site}/v1/bots", {"name": name, "games": ["golf"], "description": "plays the first legal move"}
    )
    assert status == 201, bot
    log = (tmp_path / "bridge.log").open("wb")
    bridge = subprocess.Popen(
        [sys.executable, "-m", "workers.bridge", "--url", site, "--policy", "first_legal:choose"],
        cwd=ROOT,
        env={**os.environ, "CARDTABLE_BOT_TOKEN": bot["token"], "PYTHONPATH": str(ROOT / "docs" / "examples")},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield name
    finally:
        stop(bridge)
        log.close()


# the page's fetch, answering GET /v1/ladder/... with the ladder given in the script
def check_ladder_pages(browser: Chrome, site: str, bot: str, ladder: dict[str, Any], screenshots: Path) -> None:
    """The bot's page shows its place on the Golf ladder, the ladder page every entry in order."""
    entries = ladder["ladder"]
    rank = [entry["entrant"] for entry in entries].index(f"bot:{bot}") + 1
    mine = entries[rank - 1]
    browser.get(f"{site}/#/bot/{bot}")
    wait_for(browser, "its ladder place", lambda b: b.find_elements(By.CSS_SELECTOR, "#bot-ladders"))
    assert cells(browser, "#bot-ladders tbody tr") == [
        [str(rank), "Golf", f"{mine['rating']['ordinal']:.2f}", f"{mine['rating']['mu']:.2f}"]
        + [f"{mine['rating']['sigma']:.2f}", str(mine["matches"]), str(mine["deals"]), str(mine["hands"])]
    ]
    assert axe_violations(browser) == []
    browser.find_element(By.CSS_SELECTOR, "#bot-profile a[href='#/ladder/golf']").click()
    wait_for(browser, "the ladder", lambda b: b.find_elements(By.CSS_SELECTOR, "#ladder"))
    rows = cells(browser, "#ladder tbody tr")
    assert [row[:3] for row in rows] == [
        [str(i + 1), entry["entrant"].removeprefix("bot:"), f"{entry['rating']['ordinal']:.2f}"]
        for i, entry in enumerate(entries)
    ]
    assert browser.find_element(By.CSS_SELECTOR, f"#ladder a.entrant[href='#/bot/{bot}']")
    rated = ladder["matches"]
    assert text_of(browser, "#ladder-matches") == f"Rated on {rated} finished match{'' if rated == 1 else 'es'}."
    assert axe_violations(browser) == []
    at_widths(browser, screenshots, "ladder-page")


def test_a_bots_page_shows_its_profile_ladder_places_and_matches_and_the_ladder_page_its_game(
    browser: Chrome, site: str, screenshots: Path, bridged_bot: str, tmp_path: Path
) -> None:
    name = bridged_bot
    body = {"game": "golf", "options": {"rounds": 1}, "entrants": [{"bot": name}, {"level": "random"}], "deals": 2}
    status, created = post_json(f"{site}/v1/matches", body)
    assert status == 201, created
    set_language(browser, site, "en")
    browser.get(f"{site}/#/match/{created['id']}")
    wait_for_finish(browser, site, created["id"], tmp_path / "bridge.log")
    entrant = browser.find_element(By.CSS_SELECTOR, f"#standings a.entrant[href='#/bot/{name}']")
    entrant.click()  # a registered bot in the results links to its page

    wait_for(browser, "the bot's page", lambda b: page_data(b, "bot") == name)
    profile = get_json(f"{site}/v1/bots/{name}")
    assert profile["played"] == 4
    assert text_of(browser, "#bot-played") == "4" and text_of(browser, "#bot-timeouts") == str(profile["timeouts"])
    listed = wait_for(
        browser,
        "its match listed",
        lambda b: in_page(b, "return [...document.querySelectorAll('#match-list li')].map(li => li.dataset.matchId);"),
    )
    assert listed == [created["id"]]
    assert axe_violations(browser) == []
    at_widths(browser, screenshots, "bot-page")
    ladder = get_json(f"{site}/v1/ladder/golf")
    assert f"bot:{name}" in [entry["entrant"] for entry in ladder["ladder"]]
    check_ladder_pages(browser, site, name, ladder, screenshots)

    # the pages speak German too: no key left untranslated
    set_language(browser, site, "de")
    pages = (
        (f"#/match/{created['id']}", "#paired"),
        (f"#/bot/{name}", "#bot-profile"),
        ("#/ladder/golf", "#ladder-none, #ladder-matches"),
    )
    for page, ready in pages:
        browser.get(f"{site}/{page}")
        wait_for(browser, f"{page} in German", lambda b, ready=ready: b.find_elements(By.CSS_SELECTOR, ready))
        shown = in_page(browser, "return document.body.innerText + ' ' + document.title;")
        assert "⟦" not in shown and "Vergleich" in shown, shown[:500]
    set_language(browser, site, "en")
