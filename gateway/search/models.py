"""The dense layer's model by reference: a hub id, a revision and the sha256 of every file read.

A sentence encoder is named the way its publisher names it (`sentence-transformers/all-MiniLM-L6-v2`
at a commit of the Hugging Face hub) and its files are found, in this order, in a directory the
operator gives (`path`) or in the Hugging Face cache, without any network access. Nothing is ever
downloaded while searching or starting a server: `gateway model pull` downloads once, explicitly.

Every file the loader reads is checked against its pinned sha256 before it is used. Hashing 90 MB
costs a fraction of a second, so a file that matched is remembered in a small record keyed by the
file's identity (device, inode, size, modification and change times): a later process that finds
the same file unchanged trusts the record; any change to the file changes its identity and it is
hashed again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from ..errors import UserError
from ..files import write_json_atomic

LOADED_FILES = ("config.json", "tokenizer.json", "model.safetensors")
"""What the encoder reads of a model: its shape, its tokenizer and its weights."""

DEFAULT_REPO = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_REVISION = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
DEFAULT_FILES: Mapping[str, str] = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
}
"""sha256 of each file of all-MiniLM-L6-v2 the encoder reads, as published at `DEFAULT_REVISION`."""

Pooling = Literal["mean", "cls"]
POOLINGS: tuple[Pooling, ...] = ("mean", "cls")

PULL_COMMAND = "gateway model pull"
_log = logging.getLogger(__name__)


class ModelUnavailable(UserError):
    """The model's files are not on this machine (`gateway model pull` fetches them)."""


class ModelMismatch(UserError):
    """A file of the model is not the one its reference pins: it is refused, never loaded."""


@dataclass(frozen=True)
class ModelReference:
    """A sentence encoder: where it is published, at which commit, and the sha256 of each file read.

    Attributes:
        repo_id: the hub id, e.g. `sentence-transformers/all-MiniLM-L6-v2`.
        revision: the commit (40 hex digits) the files were published at.
        files: sha256 of each file of `LOADED_FILES`.
        path: a directory holding the files (looked at before the Hugging Face cache).
        pooling: how a text's vector is made of its tokens' last states, as the model was trained:
            `mean` of them all (all-MiniLM-L6-v2, e5) or the first one's, `cls` (bge).
        query_prefix: put before a request's text before it is encoded (e5's `query: `, bge's
            instruction for short queries).
        document_prefix: put before a tool's text before it is encoded (e5's `passage: `).
    """

    repo_id: str = DEFAULT_REPO
    revision: str = DEFAULT_REVISION
    files: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_FILES))
    path: Path | None = None
    pooling: Pooling = "mean"
    query_prefix: str = ""
    document_prefix: str = ""

    @property
    def name(self) -> str:
        return f"{self.repo_id}@{self.revision[:12]}"

    def fingerprint(self) -> str:
        """A short hash of the files' hashes, the pooling and the prefixes (each changes every
        vector): what the cached vectors of this model are keyed by."""
        digest = hashlib.sha256()
        for name in sorted(self.files):
            digest.update(f"{name}={self.files[name]}\n".encode())
        if (self.pooling, self.query_prefix, self.document_prefix) != ("mean", "", ""):
            # The default's fingerprint is the files' alone, as before: vectors cached stay valid.
            digest.update(json.dumps([self.pooling, self.query_prefix, self.document_prefix]).encode())
        return digest.hexdigest()[:16]


DEFAULT_MODEL = ModelReference()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def record_path() -> Path:
    """The record of files already verified (the user's cache directory)."""
    import platformdirs

    return platformdirs.user_cache_path("metatool-gateway") / "models" / "verified.json"


def _identity(path: Path) -> list[int]:
    st = os.stat(path)
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


class _Record:
    """Files whose sha256 was computed, by real path, with the identity they had then."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            data = json.loads(path.read_text())
            self.entries: dict[str, Any] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self.entries = {}
        self.changed = False

    def sha256(self, path: Path) -> str:
        """The file's sha256: from the record when the file is unchanged since, else computed."""
        real = str(path.resolve())
        identity = _identity(Path(real))
        entry = self.entries.get(real)
        if (
            isinstance(entry, dict)
            and entry.get("identity") == identity
            and isinstance(entry.get("sha256"), str)
        ):
            return str(entry["sha256"])
        digest = sha256_of(Path(real))
        self.entries[real] = {"identity": identity, "sha256": digest}
        self.changed = True
        return digest

    def save(self) -> None:
        if not self.changed:
            return
        self.entries = {real: entry for real, entry in self.entries.items() if os.path.exists(real)}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.path, self.entries)
        except OSError as exc:  # verified again at the next start: slower, never less safe
            _log.warning("could not record verified model files in %s: %s", self.path, exc)


def unlike_pins(files: Mapping[Path, str], record: Path | None = None) -> list[str]:
    """Each of `files` (a path and its pinned sha256) whose content is not the pinned one, in words
    (empty: all match). A file unchanged since it was last checked is not hashed again."""
    seen = _Record(record or record_path())
    try:
        return [
            f"{path} (sha256 {digest}, expected {pinned})"
            for path, pinned in files.items()
            if (digest := seen.sha256(path)) != pinned
        ]
    finally:
        seen.save()


def hub_cache() -> Path:
    """The Hugging Face cache directory, found as huggingface_hub finds it (HF_HUB_CACHE, HF_HOME,
    XDG_CACHE_HOME), without importing it: a search's first load stays cheap."""

    def expand(value: str) -> str:
        return os.path.expandvars(os.path.expanduser(value))

    home = expand(
        os.environ.get("HF_HOME")
        or os.path.join(os.environ.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    )
    legacy = os.environ.get("HUGGINGFACE_HUB_CACHE") or os.path.join(home, "hub")
    return Path(expand(os.environ.get("HF_HUB_CACHE") or legacy))


def _cached(reference: ModelReference, name: str) -> Path | None:
    """The file in the Hugging Face cache at the pinned revision (a commit: no ref to resolve)."""
    folder = "models--" + reference.repo_id.replace("/", "--")
    path = hub_cache() / folder / "snapshots" / reference.revision / name
    return path if path.is_file() else None


def locate(reference: ModelReference) -> dict[str, Path]:
    """Each file of the model: in `reference.path`, else in the Hugging Face cache.

    Raises:
        ModelUnavailable: a file is in neither place (one line, naming the command to run).
    """
    found: dict[str, Path] = {}
    for name in LOADED_FILES:
        local = reference.path / name if reference.path is not None else None
        path = local if local is not None and local.is_file() else _cached(reference, name)
        if path is None:
            where = (
                f"is in neither {reference.path} nor the Hugging Face cache"
                if reference.path is not None
                else "is not in the Hugging Face cache"
            )
            raise ModelUnavailable(
                f"the dense layer's model {reference.name} is not on this machine ({name} {where}): "
                f"run `{PULL_COMMAND}`"
            )
        found[name] = path
    return found


def verified(reference: ModelReference, record: Path | None = None) -> dict[str, Path]:
    """The model's files, each checked against its pinned sha256 (a file unchanged since it was
    last checked is not hashed again).

    Raises:
        ModelUnavailable: a file is missing.
        ModelMismatch: a file is not the published one: refused, with the command to fetch it again.
    """
    files = locate(reference)
    seen = _Record(record or record_path())
    try:
        for name, path in files.items():
            digest = seen.sha256(path)
            if digest != reference.files.get(name):
                raise ModelMismatch(
                    f"{path} is not {name} of {reference.name} (sha256 {digest}, expected "
                    f"{reference.files.get(name)}); refusing to load it: remove it and run `{PULL_COMMAND}`"
                )
    finally:
        seen.save()
    return files


DEFAULT_ENDPOINT = "https://huggingface.co"
_PROXIES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def unreachable(endpoint: str, timeout: float = 5.0) -> str | None:
    """Why the hub at `endpoint` cannot be reached in one try (its name unknown, nothing listening,
    no route), or None: a machine with no network says so at once instead of after half a minute of
    retries. Through a proxy (the usual variables), the proxy is left to say."""
    url = urlsplit(endpoint)
    if url.hostname is None or any(os.environ.get(v) for v in _PROXIES):
        return None
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname, port), timeout=timeout).close()
    except socket.gaierror as exc:
        return f"the name {url.hostname} is unknown here: {exc.strerror or exc}"
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


def pull(reference: ModelReference, record: Path | None = None) -> dict[str, tuple[Path, str]]:
    """Download the model's files into the Hugging Face cache (or check those in `reference.path`),
    verify each, and remember them as verified. Honours HF_ENDPOINT, HF_HUB_OFFLINE, HF_HOME and
    the usual proxy variables.

    Returns:
        Each file's path and sha256.

    Raises:
        ModelUnavailable: a file could not be fetched.
        ModelMismatch: a file fetched is not the published one.
    """
    if reference.path is None:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

        endpoint = os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT
        if os.environ.get("HF_HUB_OFFLINE") != "1" and (why := unreachable(endpoint)) is not None:
            raise ModelUnavailable(
                f"could not download {reference.name}: {endpoint} is not reachable ({why}); connect this "
                "machine, or set HF_ENDPOINT to a mirror, or copy the files and set [search.dense] path"
            )
        # A fault during a download is retried by huggingface_hub; its lines about each try would
        # bury the one line said here.
        logging.getLogger("huggingface_hub").setLevel(logging.ERROR)
        for name in LOADED_FILES:
            try:
                hf_hub_download(
                    reference.repo_id,
                    name,
                    revision=reference.revision,
                    endpoint=os.environ.get("HF_ENDPOINT") or None,
                )
            except (HfHubHTTPError, OfflineModeIsEnabled, OSError, ValueError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ModelUnavailable(f"could not download {name} of {reference.name}: {first}") from None
    return check(reference, record)


def check(reference: ModelReference, record: Path | None = None) -> dict[str, tuple[Path, str]]:
    """Each file of the model on this machine, verified: its path and sha256 (see `verified`)."""
    files = verified(reference, record)
    return {name: (path, reference.files[name]) for name, path in files.items()}
