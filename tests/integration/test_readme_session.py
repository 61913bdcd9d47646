"""The README's curl session, run against a live service, shows what the service answers.

The section "A session with curl" is parsed as a shell session: each `$ ` line (with the lines that
continue it) is a command, and the lines after it, up to the next command, are what it prints. The
variable assignments are kept, and each `curl` command is sent, with the same method, headers and
body, to gunicorn with a worker and a redis-server of the test's own (the README's `localhost:8000`
is replaced by its address; curl itself is not needed). Its answer must match what the README shows,
except ids, tokens, the seed commitment, timestamps and hashes; `…` in the README stands for any text.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## A session with curl"
SHOWN_HOST = "localhost:8000"
VOLATILE = ("id", "token", "seed_commitment", "at", "prev_hash", "hash")  # differ from run to run
VOLATILE_KEYS = "|".join(VOLATILE)
VOLATILE_VALUE = re.compile(rf'"({VOLATILE_KEYS})":"[^"]*"')
CURL_FLAGS_WITHOUT_VALUE = {"-s"}


@dataclass
class Step:
    command: str
    shown: list[str] = field(default_factory=list)


def session_steps(text: str) -> list[Step]:
    """The commands of the README's session, each with the lines it shows."""
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    steps: list[Step] = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.DOTALL):
        lines = block.splitlines()
        while lines:
            line = lines.pop(0)
            if not line.startswith("$ "):
                assert steps, f"output before any command: {line!r}"
                steps[-1].shown.append(line)
                continue
            command = line[2:]
            while not _complete(command):
                command += "\n" + lines.pop(0)
            steps.append(Step(command))
    return steps


def _complete(command: str) -> bool:
    """Whether the shell would run `command` as it is (no open quote, no trailing backslash)."""
    if command.endswith("\\"):
        return False
    try:
        shlex.split(command, comments=True)
    except ValueError:
        return False
    return True


def expand(word: str, variables: dict[str, str]) -> str:
    """`$NAME` and `${NAME}` as the shell expands them (the session sets every variable it uses)."""
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: variables[m.group(1)], word)


@dataclass
class Request:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None


def parse_curl(words: list[str], base_url: str) -> Request:
    """The request a `curl` command line sends; any flag this parser does not know fails the test."""
    assert words[0] == "curl", words
    method, url, headers, body = None, None, {}, None
    rest = iter(words[1:])
    for word in rest:
        if word in CURL_FLAGS_WITHOUT_VALUE:
            continue
        if word == "-X":
            method = next(rest)
        elif word == "-H":
            name, value = next(rest).split(":", 1)
            headers[name.strip()] = value.strip()
        elif word == "-d":
            body = next(rest).encode()
        else:
            assert not word.startswith("-"), f"curl flag {word} is not understood by this test"
            assert url is None, f"two URLs: {url}, {word}"
            url = word
    assert url is not None, words
    if body is not None:
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")  # as curl does
    url = url.replace(SHOWN_HOST, urlsplit(base_url).netloc, 1)
    return Request(method or ("POST" if body is not None else "GET"), f"http://{url}", headers, body)


def send(request: Request) -> str:
    """The body curl -s prints: the answer's body, whatever its status."""
    sent = urllib.request.Request(request.url, data=request.body, method=request.method, headers=request.headers)
    try:
        with urllib.request.urlopen(sent, timeout=40) as response:
            return str(response.read().decode())
    except urllib.error.HTTPError as error:
        return str(error.read().decode())


def pattern(shown: list[str]) -> re.Pattern[str]:
    """What the shown lines allow: wrapped lines joined, volatile values and `…` free."""
    text = re.sub(r"\s*\n\s*", "", "\n".join(shown).strip())
    parts: list[str] = []
    for piece in re.split(rf'("(?:{VOLATILE_KEYS})":"[^"]*")', text):
        key = VOLATILE_VALUE.fullmatch(piece)
        if key:
            parts.append(re.escape(f'"{key.group(1)}":"') + r'[^"]*"')
        else:
            parts.append(".*?".join(re.escape(bit) for bit in piece.split("…")))
    return re.compile("".join(parts), re.DOTALL)


def run_session(steps: list[Step], base_url: str) -> list[tuple[Step, str]]:
    """Run each command; returns each step with what it printed."""
    variables: dict[str, str] = {}
    replace: dict[str, str] = {}  # the README's id and token -> this run's
    printed: list[tuple[Step, str]] = []
    for step in steps:
        command = step.command
        for shown, real in replace.items():
            command = command.replace(shown, real)
        words = shlex.split(command.replace("\\\n", ""), comments=True)  # a line continued with `\`
        assignment = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", words[0], re.DOTALL)
        if assignment and len(words) == 1:
            variables[assignment.group(1)] = expand(assignment.group(2), variables)
            printed.append((step, ""))
            continue
        output = send(parse_curl([expand(word, variables) for word in words], base_url)).strip()
        printed.append((step, output))
        if not replace and '"token"' in output:  # the creation: learn this run's id and token
            created = json.loads(output)
            shown = "".join(step.shown)
            shown_id = re.search(r'"id":"([^"]*)"', shown)
            shown_token = re.search(r'"token":"([^"]*)"', shown)
            assert shown_id and shown_token, "the README's creation shows no id or token"
            replace = {shown_id.group(1): created["id"], shown_token.group(1): created["seats"][0]["token"]}
    return printed


def test_the_readme_session_shows_what_a_live_service_answers(api_url: str, worker: subprocess.Popen[bytes]) -> None:
    """Seed `demo` (C-4) deals the same cards every time; G-4: the opening reveal, a flip refused before it."""
    steps = session_steps(README.read_text(encoding="utf-8"))
    commands = [step.command.split()[0] for step in steps]
    assert commands.count("curl") >= 5 and any("GAME=" in c for c in commands), commands
    for step, output in run_session(steps, api_url):
        if not step.shown:
            assert output == "", (step.command, output)
            continue
        expected = pattern(step.shown)
        assert expected.fullmatch(output), f"{step.command}\nshows: {chr(10).join(step.shown)}\ngot:   {output}"


def test_the_comparison_tells_a_stale_answer_from_a_right_one() -> None:
    """The matcher frees only ids, tokens, hashes, timestamps and `…`: other changed values fail it."""
    shown = ['{"seq":6,"type":"CardsRevealed","actor":0,', ' "data":{"cards":["8C","5H"]},"at":"…","hash":"…"}']
    right = '{"seq":6,"type":"CardsRevealed","actor":0,"data":{"cards":["8C","5H"]},"at":"2026","hash":"ab"}'
    assert pattern(shown).fullmatch(right)
    assert not pattern(shown).fullmatch(right.replace("8C", "9S"))
    assert not pattern(shown).fullmatch(right.replace('"seq":6', '"seq":7'))
    assert not pattern(['{"version":2,…}']).fullmatch('{"version":3,"id":"x"}')
