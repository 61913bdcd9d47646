"""Headless Chromium (Debian's chromium + chromium-driver) against gunicorn, a redis-server and a worker.

The service processes are the integration tests' fixtures (tests/integration/conftest.py). A
missing browser fails the tests with the command that installs it: they never skip.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from tests.integration.conftest import ROOT, api_url, redis_url, service_env, stop

__all__ = ["api_url", "browser", "redis_url", "screenshots", "site", "worker_process"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOTS = ROOT / "var" / "screenshots"
DESKTOP = (1280, 900)


@pytest.fixture(scope="module")
def worker_process(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen[bytes]]:
    """One RQ worker (`python -m workers`) for the module: the bots play through it."""
    log = (tmp_path_factory.mktemp("worker") / "worker.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "workers"], cwd=ROOT, env=service_env(redis_url), stdout=log, stderr=subprocess.STDOUT
    )
    yield process
    stop(process)
    log.close()


@pytest.fixture(scope="module")
def site(api_url: str, worker_process: subprocess.Popen[bytes]) -> str:
    """The page's address, with the API and a worker behind it."""
    return api_url


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    """Headless Chromium through /usr/bin/chromedriver (never a downloaded driver)."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        pytest.fail(
            f"the browser tests need {' and '.join(missing)}: run scripts/ensure-chromium.sh "
            "(apt-get install chromium chromium-driver); make test does it",
            pytrace=False,
        )
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--disable-extensions",
        "--no-first-run",
        f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the tests leave their screenshots (var/screenshots, kept as test artifacts)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
