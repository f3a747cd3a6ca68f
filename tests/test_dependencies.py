"""What the package declares and what CI installs (docs/dependencies.md): the lock covers the dev
group with hashes, the floors sit past known advisories wherever a package is named, CI checks the
imports against the declarations, and no extra installs a model."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from tests import prepare

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
GROUPS = PYPROJECT["dependency-groups"]
LOCK = (ROOT / "requirements-dev.lock").read_text()


def _requirements(extra: str | None = None) -> list[Requirement]:
    """The core's requirements, an extra's, or a dependency group's (`dev`, `bench`)."""
    if extra is None:
        return [Requirement(line) for line in PROJECT["dependencies"]]
    names = GROUPS[extra] if extra in GROUPS else PROJECT["optional-dependencies"][extra]
    return [Requirement(line) for line in names]


def _everywhere() -> list[tuple[str, Requirement]]:
    """Every requirement, with where it is named: the core, each extra, each group."""
    places = [("core", None), *((e, e) for e in PROJECT["optional-dependencies"]), *((g, g) for g in GROUPS)]
    return [(where, r) for where, name in places for r in _requirements(name)]


def _pins() -> dict[str, tuple[str, list[str]]]:
    """Each locked package: its version and the sha256 hashes of its files."""
    pins: dict[str, tuple[str, list[str]]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", LOCK):
        match = re.match(r"([A-Za-z0-9_.\-]+)==(\S+)", block)
        if match:
            pins[canonicalize_name(match[1])] = (match[2], re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return pins


def test_the_lock_pins_every_package_of_the_dev_group_and_the_build_with_hashes() -> None:
    pins = _pins()
    wanted = [*_requirements(), *_requirements("dev"), *map(Requirement, ["pip", "hatchling", "editables"])]
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not in requirements-dev.lock: run .ci/lock"
        version, hashes = pins[name]
        assert requirement.specifier.contains(version, prereleases=True), (name, version)
        assert hashes, f"{name} has no hash in the lock"
    assert all(hashes for _, hashes in pins.values())


def test_ci_runs_the_readmes_test_command_which_installs_from_the_lock_and_requires_hashes() -> None:
    run = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "scripts/test --prepare" in run and run[-1] == "scripts/test"  # what a newcomer runs, last
    assert "scripts/test" in (ROOT / "README.md").read_text()
    script = (ROOT / "scripts" / "test").read_text()
    assert ".venv/bin/pip install --quiet --require-hashes -r requirements-dev.lock" in script
    assert ".venv/bin/pip install --quiet --no-deps --no-build-isolation -e ." in script
    assert ".venv/bin/python -m tests.prepare" in script
    enabling = {step.enable for step in prepare.STEPS}  # each step says the command that does it alone
    assert {
        "python -m tests.model_files",
        "python -m tests.oidc_provider",
        "python -m tests.openapi_specs",
    } <= enabling


def test_floors_sit_past_known_advisories_wherever_a_package_is_named() -> None:
    floors = {
        "jinja2": "3.1.6",
        "starlette": "0.49.1",
        "cryptography": "44.0.1",
        "python-multipart": "0.0.18",
    }
    named = set()
    for where, requirement in _everywhere():
        floor = floors.get(canonicalize_name(requirement.name))
        if floor:
            named.add((where, canonicalize_name(requirement.name)))
            assert not requirement.specifier.contains(_just_below(floor)), (where, str(requirement))
    # Declared where they are used, not left to arrive through another package's floor.
    assert {("mcp", "starlette"), ("console", "python-multipart"), ("oauth", "cryptography")} <= named


def test_ci_checks_that_every_import_is_declared() -> None:
    run = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ".venv/bin/deptry ." in run
    assert "deptry" in {canonicalize_name(r.name) for r in _requirements("dev")}
    assert "httpcore2" in {canonicalize_name(r.name) for r in _requirements("openapi")}


def _just_below(version: str) -> str:
    """The release just before `version` (3.1.6: 3.1.5), which the floor must exclude."""
    *head, last = version.split(".")
    return ".".join([*head, str(int(last) - 1)])


def test_no_extra_installs_a_model_and_the_anonymous_wheel_is_gone() -> None:
    every = [str(r) for _, r in _everywhere()]
    assert not [r for r in every if "embedding-model" in r or "my-internal" in r]
    assert "my-internal" not in LOCK
    assert SpecifierSet(">=0.26").contains(_pins()["huggingface-hub"][0])
