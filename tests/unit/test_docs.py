"""The docs hold together: every rule id of the binding rules has its place in docs/rules/ and a test
that cites it, and every relative link of README.md and docs/ leads to a file (and anchor) that exists.

The binding rules are the project folder's rules/*.md (beside this repository, as CI has it). A rule
id is one those files define: a list item `- **G-1 …` or a heading `## C-1 …`, not an id that a rule
merely mentions. RULE_IDS is a copy of them for a checkout without the project folder; when the folder
is there, the copy must equal it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from domain.bots import LEVELS

ROOT = Path(__file__).resolve().parents[2]
SHARED_RULES = ROOT.parent / "shared" / "rules"
DOCS = ROOT / "docs"
THIS_FILE = Path(__file__).resolve()

RULE_IDS = {
    "C": 9,  # rules/README.md: the common rules
    "G": 15,  # golf.md
    "R": 23,  # romme.md
    "S": 11,  # switch.md
    "V": 16,  # go5.md
}
"""How many rules each prefix has: the ids are <prefix>-1 … <prefix>-<count>."""
NOT_PLAYED: set[str] = set()
"""Rules the binding rules define that the service does not play yet (none: C-8's matches are played)."""

DEFINED = re.compile(r"^(?:- \*\*|## )([A-Z]-\d+)\b", re.MULTILINE)
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def rule_ids() -> list[str]:
    ids = [f"{prefix}-{n}" for prefix, count in RULE_IDS.items() for n in range(1, count + 1)]
    return [rule for rule in ids if rule not in NOT_PLAYED]


def defined_ids(text: str) -> list[str]:
    """The rule ids a rules file defines, in order."""
    return DEFINED.findall(text)


def test_the_copy_of_the_rule_ids_is_what_the_binding_rules_define() -> None:
    """C-1 … C-9, G-1 …, R-1 …, S-1 …, V-1 …: the ids of the project folder's rules, when it is there."""
    if not SHARED_RULES.is_dir():  # a checkout without the project folder: the copy stands in
        assert len(rule_ids()) == 74  # C-1 ... C-9 with C-8's matches, and the four games' rules
        return
    found = [rule for path in sorted(SHARED_RULES.glob("*.md")) for rule in defined_ids(path.read_text("utf-8"))]
    assert len(found) == len(set(found)), "a rule id is defined twice"
    assert sorted(found) == sorted([*rule_ids(), *NOT_PLAYED])


def test_only_definitions_count_as_rule_ids() -> None:
    text = "## C-4 The seeded shuffle\n- **G-9 Three equal.** see (X-1) and G-12\n  - **G-3** nested\n"
    assert defined_ids(text) == ["C-4", "G-9"]


def docs_anchors(path: Path) -> set[str]:
    """The anchors a Markdown file offers: explicit `<a id>` and GitHub's slugs of its headings."""
    text = path.read_text(encoding="utf-8")
    anchors = set(ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", strip_code(text), re.MULTILINE):
        slug = slugify(heading)
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def slugify(heading: str) -> str:
    """GitHub's heading anchor: markup and punctuation dropped, lower case, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.replace("`", "").lower())
    return text.replace(" ", "-")


def strip_code(text: str) -> str:
    """The text without fenced code blocks (a `#` there is no heading, a `[x](y)` no link)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


def test_every_rule_id_has_an_anchor_in_the_rules_docs() -> None:
    anchors = {anchor for path in (DOCS / "rules").glob("*.md") for anchor in docs_anchors(path)}
    missing = [rule for rule in rule_ids() if rule not in anchors]
    assert not missing, f"no anchor in docs/rules/ for {missing}"


def test_each_rule_is_in_its_games_page_in_order() -> None:
    """A rule's anchor is on its game's page (C-… on common.md), once, and the page keeps the ids' order."""
    pages = {"C": "common", "G": "golf", "R": "romme", "S": "switch", "V": "go5"}
    for prefix, page in pages.items():
        found = [a for a in ANCHOR.findall((DOCS / "rules" / f"{page}.md").read_text("utf-8")) if a[0] == prefix]
        assert found == [rule for rule in rule_ids() if rule[0] == prefix], page


def test_every_rule_id_is_cited_by_a_test() -> None:
    """Each rule is named, as a word, by some test under tests/ (other than this file's list)."""
    sources = [path for path in (ROOT / "tests").rglob("*.py") if path.resolve() != THIS_FILE]
    text = "\n".join(path.read_text(encoding="utf-8") for path in sources)
    uncited = [rule for rule in rule_ids() if not re.search(rf"(?<![\w-]){re.escape(rule)}(?![\w-])", text)]
    assert not uncited, f"rule ids no test cites: {uncited}"


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]


def relative_links(path: Path) -> list[str]:
    text = strip_code(path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # inline code is no link either
    targets = [a or b for a, b in LINK.findall(text)]
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]  # http:, mailto: … are not ours


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_anchor_that_exist(path: Path) -> None:
    broken = []
    for link in relative_links(path):
        target, _, anchor = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        inside = file == ROOT or ROOT in file.parents
        if not inside or not file.exists():
            broken.append(f"{link}: no such file in the repository")
        elif anchor and (file.suffix != ".md" or anchor not in docs_anchors(file)):
            broken.append(f"{link}: no such anchor")
    assert not broken, f"{path.relative_to(ROOT)}: {broken}"


def test_the_link_check_finds_a_broken_link_and_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A title\n\n[ok](#a-title) [gone](missing.md) [bad](#nothing)\n```\n[code](x.md)\n```\n")
    assert relative_links(page) == ["#a-title", "missing.md", "#nothing"]
    assert docs_anchors(page) == {"a-title"}


CODE_PATH = re.compile(r"\b((?:tests|domain|service|workers|bench|scripts)/[\w/.-]*\.(?:py|sh|mjs|conf))\b")


def test_the_files_and_tests_the_docs_name_exist() -> None:
    """Every code file (`domain/verify.py`) and test (`test_…`) that README.md and docs/ name is there."""
    tests = list((ROOT / "tests").rglob("*.py"))
    defined = set(re.findall(r"^\s*def (test_\w+)", "\n".join(p.read_text("utf-8") for p in tests), re.MULTILINE))
    defined |= {path.stem for path in tests}
    missing = []
    for path in markdown_files():
        text = path.read_text(encoding="utf-8")
        missing += [f"{path.name}: {name}" for name in CODE_PATH.findall(text) if not (ROOT / name).is_file()]
        missing += [f"{path.name}: {name}" for name in re.findall(r"\b(test_\w+)\b", text) if name not in defined]
    assert not missing


def make_verify(record: Path) -> subprocess.CompletedProcess[str]:
    """`make verify RECORD=…` with this interpreter's environment, installing nothing."""
    venv = Path(sys.executable).parent.parent
    command = ["make", "-s", "-o", "install", "verify", f"RECORD={record}", f"VENV={venv}"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_make_verify_exits_as_the_fairness_doc_says(tmp_path: Path) -> None:
    """docs/fairness-and-audit.md: `make verify` is 0 on PASS and make's 2 on any failure, after printing
    `verify: exit code N` with the verifier's own code (1 for a FAIL, 2 for a file that is no record)."""
    doc = (DOCS / "fairness-and-audit.md").read_text(encoding="utf-8")
    assert "0 for `PASS`, and 2 for every other outcome" in doc and "`verify: exit code N`" in doc
    good = ROOT / "tests" / "records" / "cardtable-record-2" / "golf-seeded.json"
    passed = make_verify(good)
    assert passed.returncode == 0 and passed.stdout.splitlines()[-1] == "PASS", passed
    record = json.loads(good.read_text(encoding="utf-8"))
    record["events"][3]["actor"] = 99  # a changed event: its hash no longer holds
    bad = tmp_path / "changed.json"
    bad.write_text(json.dumps(record), encoding="utf-8")
    failed = make_verify(bad)
    assert failed.returncode == 2 and "FAIL at event" in failed.stdout, failed
    assert "verify: exit code 1 " in failed.stderr, failed.stderr
    empty = tmp_path / "empty.json"
    empty.write_text("{}", encoding="utf-8")
    unreadable = make_verify(empty)
    assert unreadable.returncode == 2 and "verify: exit code 2 " in unreadable.stderr, unreadable.stderr


def test_the_web_page_doc_and_the_readme_name_every_bot_level() -> None:
    """The seat form offers the catalog's bot levels (domain.bots.LEVELS); the docs name each of them."""
    web = (DOCS / "web.md").read_text(encoding="utf-8").split("## Using it", 1)[1].split("\n## ", 1)[0]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert set(LEVELS) == {"random", "greedy", "expert"}
    for text in (web, readme):
        assert all(f"`{level}`" in text for level in LEVELS)
