"""A real OpenID provider for the tests: npm's `oidc-provider`, pinned with its lock file, under node.

    python -m tests.oidc_provider        # install what is missing (CI runs this before pytest)

`tests/oidc/` holds the package file, its lock (every package's integrity hash) and the provider
script; `npm ci` installs them into a git-ignored cache (`.cache/oidc-provider/`, or
`GATEWAY_OIDC_DIR`). Tests that need the provider skip, saying this command, when node or the
installed package is missing.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "oidc"
FILES = ("package.json", "package-lock.json", "provider.mjs")


def cache_dir() -> Path:
    return Path(os.environ.get("GATEWAY_OIDC_DIR") or ROOT / ".cache" / "oidc-provider")


def installed(directory: Path | None = None) -> bool:
    """Whether `directory` holds the locked packages (the lock it was installed from is today's)."""
    directory = directory or cache_dir()
    lock = directory / "package-lock.json"
    return (
        (directory / "node_modules" / "oidc-provider" / "package.json").exists()
        and lock.exists()
        and filecmp.cmp(lock, SOURCE / "package-lock.json", shallow=False)
    )


def install(directory: Path | None = None) -> Path:
    """The provider's directory, its packages installed with `npm ci` when missing; the script copied."""
    directory = directory or cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    if not installed(directory):
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(SOURCE / name, directory / name)
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--silent"],
            cwd=directory,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    shutil.copyfile(SOURCE / "provider.mjs", directory / "provider.mjs")
    return directory


def missing() -> str | None:
    """Why the provider cannot run here (None: it can)."""
    if shutil.which("node") is None:
        return "node is not installed (the OpenID provider runs under node 20 or later)"
    if not installed():
        return f"oidc-provider is not installed in {cache_dir()}: run `python -m tests.oidc_provider`"
    return None


if __name__ == "__main__":
    print(install())
    sys.exit(0)
