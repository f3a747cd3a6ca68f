"""The house as docs/architecture.md draws it: rooms, import rules, the public API, module sizes."""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from importlinter.application.use_cases import lint_imports
from importlinter.configuration import configure

import gateway

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()
MAX_LINES = 800
# A module past MAX_LINES (STYLE.md: past 800 lines, ask whether it holds two concerns) says why at
# its top, in a sentence that starts like this. Modules are split by concern, never by length.
LONG_MODULE_REASON = "Longer than 800 lines because"

_IMPORT = re.compile(r"^\s*from ((?:gateway|services)(?:\.\w+)*) import (?:\(([^)]*)\)|([\w, ]+)$)", re.M)
_DOTTED = re.compile(r"`((?:gateway|services)(?:\.\w+)+)`")


def _modules() -> list[Path]:
    return sorted(p for top in ("gateway", "services") for p in (ROOT / top).rglob("*.py"))


def _resolve(dotted: str) -> object:
    """The module or attribute a dotted path names (the longest importable prefix, then attributes)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def test_import_rules_hold(capsys: pytest.CaptureFixture[str]) -> None:
    configure()
    kept = lint_imports(config_filename=str(ROOT / "pyproject.toml"), cache_dir=None, no_logo=True)
    report = capsys.readouterr().out
    assert kept, report
    contracts = re.findall(r"^(.+?) KEPT$", report, re.M)
    assert len(contracts) >= 10, report  # every contract of pyproject.toml ran


def test_every_public_name_imports() -> None:
    for name in gateway.__all__:
        assert getattr(gateway, name) is not None, name


def test_every_import_and_dotted_path_in_the_docs_resolves() -> None:
    checked = []
    for page in DOCS:
        text = page.read_text()
        for module, grouped, names in _IMPORT.findall(text):
            for name in filter(None, (n.strip() for n in (grouped or names).replace("\n", ",").split(","))):
                _resolve(f"{module}.{name}")
                checked.append(f"{module}.{name}")
        for dotted in _DOTTED.findall(text):
            _resolve(dotted)
            checked.append(dotted)
    assert "gateway.filetools.FileTools" in checked  # the parser saw the pages' imports
    assert len(checked) >= 10


def test_modules_past_the_size_mark_say_why_at_their_top() -> None:
    long = []
    for path in _modules():
        text = path.read_text()
        if text.count("\n") > MAX_LINES:
            docstring = ast.get_docstring(ast.parse(text)) or ""
            if LONG_MODULE_REASON not in docstring:
                long.append(str(path.relative_to(ROOT)))
    assert not long, f"split these modules by concern, or say at their top why not: {long}"


def test_each_room_says_what_it_owns_and_what_it_may_import() -> None:
    rooms = sorted(p.parent for p in (ROOT / "gateway").glob("*/__init__.py"))
    assert {p.name for p in rooms} >= {"adapters", "agent", "cli", "filetools", "fronting", "search"}
    for room in rooms:
        docstring = ast.get_docstring(ast.parse((room / "__init__.py").read_text())) or ""
        assert "import" in docstring, f"{room.name}/__init__.py: say what the room may import"
        assert f"`gateway/{room.name}/`" in ARCHITECTURE, (
            f"docs/architecture.md does not describe {room.name}"
        )


def _undocumented(path: Path) -> list[str]:
    """Public classes, functions and methods of a module with no docstring of their own.

    Exempt: a params model (its docstring would be text the model reads in the schema, its fields
    are documented instead) and a method that implements one a Protocol of the module documents.
    """
    tree = ast.parse(path.read_text())
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    promised = {
        m.name
        for c in classes
        if any(isinstance(b, ast.Name) and b.id == "Protocol" for b in c.bases)
        for m in c.body
        if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) and ast.get_docstring(m)
    }
    missing = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or node.name[0] == "_":
            continue
        params_model = isinstance(node, ast.ClassDef) and any(
            isinstance(b, ast.Name) and b.id == "BaseModel" for b in node.bases
        )
        if not ast.get_docstring(node) and not params_model:
            missing.append(node.name)
        methods = [
            m for m in getattr(node, "body", ()) if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        missing += [
            f"{node.name}.{m.name}"
            for m in methods
            if isinstance(node, ast.ClassDef)
            and m.name[0] != "_"
            and not ast.get_docstring(m)
            and m.name not in promised
        ]
    return missing


def test_every_public_name_of_the_core_says_what_it_is() -> None:
    core = sorted(p for p in (ROOT / "gateway").glob("*.py") if p.stem != "__init__")
    missing = [f"{p.name}: {name}" for p in core for name in _undocumented(p)]
    assert not missing, f"give these a docstring: {missing}"


def test_the_architecture_page_names_every_core_module() -> None:
    core = sorted(p.stem for p in (ROOT / "gateway").glob("*.py") if p.stem != "__init__")
    missing = [name for name in core if f"`{name}.py`" not in ARCHITECTURE]
    assert not missing, f"docs/architecture.md does not place: {missing}"


CORE_ROOMS = {"gateway.gate", "gateway.settings"}
"""Rooms that belong to the core: the core's import rules treat them as its own modules."""
MAY_IMPORT = {
    "The core imports no room but search, usage, telemetry, code and the vault": {
        "gateway.search",
        "gateway.usage",
        "gateway.telemetry",
        "gateway.code",
        "gateway.vault",
    },
    "Telemetry builds on the core only": set(),
    "Code mode builds on the core only": {"gateway.search", "gateway.telemetry"},
    "The search engine knows tool definitions": set(),
    "Learning from use builds on the core and the search engine": {
        "gateway.search",
        "gateway.telemetry",
        "gateway.code",
    },
    "Fronting, file tools and OpenAPI build on the core only": {
        "gateway.telemetry",
        "gateway.code",
        "gateway.console",
        "gateway.vault",
    },
    "The agent loop is vendor-neutral": {
        "gateway.search",
        "gateway.usage",
        "gateway.telemetry",
        "gateway.code",
        "gateway.console",
        "gateway.vault",
    },
    "Adapters never reach up": {
        "gateway.agent",
        "gateway.code",
        "gateway.filetools",
        "gateway.fronting",
        "gateway.openapi",
        "gateway.search",
        "gateway.telemetry",
        "gateway.usage",
        "gateway.vault",
    },
    "The console reads the gateway": {
        "gateway.code",
        "gateway.filetools",
        "gateway.fronting",
        "gateway.search",
        "gateway.telemetry",
        "gateway.usage",
        "gateway.vault",
    },
    "Services use the gateway's core only": {"gateway.code", "gateway.console", "gateway.vault"},
}
"""For each import rule that lists rooms: the rooms it lets its modules import. Every other room must
be in its forbidden list, so a new room is placed by every rule or this test fails."""


def _contracts() -> list[dict[str, Any]]:
    return list(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"])


def _units() -> tuple[set[str], set[str]]:
    """The gateway's root modules (and core rooms), and its other rooms, as dotted names."""
    gateway_dir = ROOT / "gateway"
    modules = {f"gateway.{p.stem}" for p in gateway_dir.glob("*.py") if p.stem != "__init__"}
    rooms = {f"gateway.{p.parent.name}" for p in gateway_dir.glob("*/__init__.py")}
    return modules | (rooms & CORE_ROOMS), rooms - CORE_ROOMS


def test_the_core_rule_lists_every_core_module_and_places_every_room() -> None:
    core, rooms = _units()
    (rule,) = [c for c in _contracts() if c["name"].startswith("The core imports no room")]
    assert set(rule["source_modules"]) == core, (
        "list every root module of gateway/ (and core room) as a source"
    )
    placed = (
        set(rule["forbidden_modules"])
        | MAY_IMPORT["The core imports no room but search, usage, telemetry, code and the vault"]
    )
    assert placed == rooms, f"say whether the core may import {sorted(rooms - placed)}"


def test_every_rule_over_rooms_places_every_room() -> None:
    _, rooms = _units()
    rules = {c["name"]: c for c in _contracts() if c["type"] == "forbidden"}
    checked = 0
    for prefix, allowed in MAY_IMPORT.items():
        (name,) = [n for n in rules if n.startswith(prefix)]
        sources = set(rules[name]["source_modules"])
        forbidden = set(rules[name]["forbidden_modules"])
        assert not forbidden & allowed, f"{name}: both allowed and forbidden: {sorted(forbidden & allowed)}"
        unplaced = rooms - sources - forbidden - allowed
        assert not unplaced, (
            f"{name}: forbid or allow {sorted(unplaced)} (tests/test_architecture.py MAY_IMPORT)"
        )
        checked += 1
    assert checked == len(MAY_IMPORT) >= 9


def test_third_party_rules_protect_rather_than_list() -> None:
    """A rule that says "only X imports Y" is a `protected` contract: a new module is covered by it."""
    for contract in _contracts():
        if contract["type"] == "forbidden":
            assert all(m.startswith(("gateway", "services")) for m in contract["forbidden_modules"]), (
                contract["name"]
            )
    protected = {m for c in _contracts() if c["type"] == "protected" for m in c["protected_modules"]}
    assert {"anthropic", "openai", "mcp", "opentelemetry", "pydantic_monty", "googleapiclient"} <= protected
