"""Every Python block and shell command in README.md and docs/*.md runs here, or its page says why not.

A marker on the line just before a fence says what happens to the block:

    <!-- fragment: WHY -->            not run; WHY names what it needs (an account, the network, an API
                                      key, a server that keeps running, an install, data not shipped)
    <!-- run by tests/PATH.py -->     run by that test, which names the page
    <!-- file: NAME -->               a file of the page's example: written to `tools/NAME` in the
                                      example's directory, and run through the page's commands

Every other ```python, ```bash, ```sh or ```console block is run here, each in a fresh temporary
directory (the working directory), with GATEWAY_DATA_DIR and GATEWAY_CONFIG inside it and no other
GATEWAY_* variable:

- python: `exec`'d as a script;
- bash and sh: each line is one `gateway ...` command (`#` starts a comment, `\\` continues a line),
  run through `gateway.cli.main` against a fresh local workspace, and must exit 0;
- console: a line starting with `$ ` is such a command, and the lines after it are what it prints.

Blocks without a language are text (trees, figures): one holding a command fails the test.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gateway import ToolContext, run_sync
from gateway.cli import main
from gateway.runtime import open_gateway, principal_from
from gateway.settings.loading import load_settings

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE = {"python", "bash", "sh", "console"}
TEXT = {"", "text", "json", "toml", "yaml", "markdown"}  # data and output: read, never run
_FENCE = re.compile(r"^( *)(`{3,}|~{3,})\s*([^`\s]*)([^`]*)$")
_MARKER = re.compile(r"^<!-- (fragment|run by|file)(?::)? *(.*?) *-->$")
_COMMAND = re.compile(r"^\s*(\$ |gateway |python3? |pip |\.venv/)")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository
    line: int  # of the opening fence
    lang: str
    code: str
    marker: str = ""  # fragment, run by, file, or "" (run here)
    note: str = ""  # the marker's text: why, which test, which file

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(path: Path) -> Iterator[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        indent, ticks, lang = fence.group(1), fence.group(2), fence.group(3)
        end = i + 1
        while end < len(lines) and lines[end].strip() != ticks:
            end += 1
        marker = _MARKER.match(lines[i - 1].strip()) if i else None
        yield Block(
            page=str(path.relative_to(ROOT)),
            line=i + 1,
            lang=lang,
            code="\n".join(line.removeprefix(indent) for line in lines[i + 1 : end]) + "\n",
            marker=marker.group(1) if marker else "",
            note=marker.group(2) if marker else "",
        )
        i = end + 1


ALL = [b for page in PAGES for b in blocks(page)]
CODE_BLOCKS = [b for b in ALL if b.lang in CODE]
TO_RUN = [b for b in CODE_BLOCKS if not b.marker]
RAN: set[str] = set()


# -- the environment a block runs in ------------------------------------------------------------


@dataclass
class Place:
    """A temporary working directory with its own data directory and configuration file."""

    root: Path
    monkeypatch: pytest.MonkeyPatch
    config: list[str] = field(default_factory=list)
    namespace: dict[str, Any] = field(default_factory=lambda: {"__name__": "__main__"})
    after: list[Callable[[], None]] = field(default_factory=list)

    def write_config(self) -> None:
        (self.root / "config.toml").write_text("\n".join(self.config) + "\n", encoding="utf-8")


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Place:
    for name in list(os.environ):
        if name.startswith("GATEWAY_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GATEWAY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GATEWAY_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the search index cache, among others
    return Place(tmp_path, monkeypatch)


def _example_files(block: Block, place: Place) -> None:
    """docs/file-tools.md: its example's files in ./tools, and `sam` holding the `support` role."""
    tools = place.root / "tools"
    tools.mkdir()
    for part in ALL:
        if part.page == block.page and part.marker == "file":
            target = tools / part.note
            text = part.code.replace("#!/usr/bin/env python3", f"#!{sys.executable}", 1)  # this interpreter
            target.write_text(text, encoding="utf-8")
            target.chmod(0o755)
    place.config += ["[principals.sam]", 'roles = ["support"]']
    place.after.append(lambda: _close_file_tools(place.namespace))


def _close_file_tools(namespace: dict[str, Any]) -> None:
    for value in namespace.values():
        if type(value).__name__ == "FileTools":
            value.close()


def _a_pending_call(block: Block, place: Place) -> None:
    """docs/mcp.md, approving from Python: a serving gateway's shared store holds one pending delete."""
    place.monkeypatch.setenv("GATEWAY_CONFIRMATION_STORE", "sqlite")
    place.monkeypatch.setenv("GATEWAY_CONFIRMATION_SECRET", "s" * 32)
    place.namespace["input"] = lambda prompt="": "y"  # the user at the terminal says yes
    place.write_config()
    settings = load_settings()
    with open_gateway(settings) as gw:
        ctx = ToolContext(principal=principal_from(settings))
        made = run_sync(gw.invoke("calendar_create_event", {"title": "Standup", "start": "tomorrow 9am"}))
        call = {"tool_name": "calendar_delete_event", "parameters": {"event_id": made.output["id"]}}
        held = run_sync(gw.call("invoke_tool", call, ctx))
        assert held.status == "confirmation_required" and held.pending is not None

    def redeemed_without_asking_again() -> None:
        assert held.pending is not None
        with open_gateway(load_settings()) as gw:
            done = run_sync(gw.call("invoke_tool", {**call, "confirmation": held.pending.pending_id}, ctx))
            assert done.ok and done.output == {"deleted": True, "event_id": made.output["id"]}, done

    place.after.append(redeemed_without_asking_again)


# What a block needs before it runs, by page (and, where a page has several, by what the block holds).
SETUP: list[tuple[str, str, Callable[[Block, Place], None]]] = [
    ("docs/file-tools.md", "", _example_files),
    ("docs/mcp.md", "gw.gate.pending()", _a_pending_call),
]


# -- running ------------------------------------------------------------------------------------


def commands(block: Block) -> list[tuple[list[str], str | None]]:
    """(argv, expected output or None) for each command of a shell or console block."""
    text = block.code.replace("\\\n", " ")
    out: list[tuple[list[str], str | None]] = []
    if block.lang == "console":
        for chunk in re.split(r"^\$ ", text, flags=re.M)[1:]:
            command, _, printed = chunk.partition("\n")
            out.append((shlex.split(command, comments=True), printed.rstrip("\n")))
    else:
        out = [(shlex.split(line, comments=True), None) for line in text.splitlines()]
    return [(argv, printed) for argv, printed in out if argv]


def run_block(block: Block, place: Place, capsys: pytest.CaptureFixture[str]) -> None:
    for page, holds, setup in SETUP:
        if block.page == page and holds in block.code:
            setup(block, place)
    place.write_config()
    if block.lang == "python":
        exec(compile(block.code, block.id, "exec"), place.namespace)
    else:
        for argv, printed in commands(block):
            assert argv[0] == "gateway", (
                f"{block.id}: {shlex.join(argv)!r} is not a gateway command; "
                "run it another way or mark the block <!-- fragment: WHY -->"
            )
            capsys.readouterr()
            code = main(argv[1:])
            out, err = capsys.readouterr()
            assert code == 0, f"{block.id}: {shlex.join(argv)} exited {code}\n{err}"
            if printed is not None:
                assert out.rstrip("\n") == printed, f"{block.id}: {shlex.join(argv)} printed otherwise"
    for check in place.after:
        check()


@pytest.mark.parametrize("block", TO_RUN, ids=[b.id for b in TO_RUN])
def test_the_block_runs_as_written(block: Block, place: Place, capsys: pytest.CaptureFixture[str]) -> None:
    run_block(block, place, capsys)
    RAN.add(block.id)


# -- the markers are honest ---------------------------------------------------------------------


def test_every_block_has_a_language_this_test_knows() -> None:
    # A block in another language (```shell, ```py) would escape both running and marking.
    assert {b.lang for b in ALL} <= CODE | TEXT
    for page, holds, _ in SETUP:
        assert any(b.page == page and holds in b.code for b in TO_RUN), f"no block of {page} needs this setup"


def test_every_fragment_says_why() -> None:
    fragments = [b for b in CODE_BLOCKS if b.marker == "fragment"]
    print("fragments:", *(f"{b.id}: {b.note}" for b in fragments), sep="\n  ")
    assert [b.id for b in fragments if len(b.note) < 10] == []


def test_a_block_run_elsewhere_names_a_test_that_reads_its_page() -> None:
    elsewhere = [b for b in ALL if b.marker == "run by"]
    assert elsewhere
    for b in elsewhere:
        test = ROOT / b.note
        assert test.is_file() and test.name.startswith("test_"), b.id
        assert Path(b.page).name in test.read_text(encoding="utf-8"), f"{b.note} does not read {b.page}"


def test_files_of_an_example_belong_to_a_page_whose_commands_run() -> None:
    for b in ALL:
        if b.marker == "file":
            assert any(r.page == b.page and r.lang == "console" for r in TO_RUN), b.id


def test_no_command_hides_in_a_block_without_a_language() -> None:
    text_blocks = [b for b in ALL if not b.lang]
    hidden = [f"{b.id}: {line}" for b in text_blocks for line in b.code.splitlines() if _COMMAND.match(line)]
    assert hidden == [], "give these blocks a language (bash, console) so they run or are marked"


def test_a_failing_command_fails_its_block(place: Place, capsys: pytest.CaptureFixture[str]) -> None:
    wrong = Block("docs/x.md", 1, "bash", "gateway schema no_such_tool\n")
    with pytest.raises(AssertionError, match="exited 1"):
        run_block(wrong, place, capsys)
    printed = Block("docs/x.md", 1, "console", "$ gateway catalog\nnot what it prints\n")
    with pytest.raises(AssertionError, match="printed otherwise"):
        run_block(printed, place, capsys)
    other = Block("docs/x.md", 1, "sh", "pip install nothing\n")
    with pytest.raises(AssertionError, match="not a gateway command"):
        run_block(other, place, capsys)


def test_every_unmarked_block_is_run_in_this_session(request: pytest.FixtureRequest) -> None:
    # What the session runs, not what this process ran: under pytest-xdist each worker collects every
    # test and runs only its share, so the blocks' own runs may be in another process.
    collected = {
        item.callspec.id
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.originalname == "test_the_block_runs_as_written"
    }
    if not collected:
        pytest.skip("the blocks were not run in this session (deselected)")
    unmarked = {b.id for b in CODE_BLOCKS if not b.marker}
    assert len(unmarked) >= 8
    assert collected == unmarked
    assert RAN.issubset(unmarked)  # those that ran here ran as listed
