"""The discovery documents google-api-python-client ships: where they are, which versions exist, which to use.

Nothing here imports googleapiclient: the package is located with `importlib.util.find_spec` and its
version read from its metadata, so listing the catalog costs no import of the client.

A document is `<name>.<version>.json`. Versions form families: `v1`, `v2beta1` and `alpha` are one
family, while admin's `directory_v1` and `reports_v1` (and merchantapi's `products_v1`, ...) each start
their own, so each of them is its own API surface. Within a family the newest stable version wins, and
the newest pre-release where there is no stable one. A few files are aliases of another document (admin's
`directoryv1` holds `directory_v1`); they are recognised when read and skipped.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gateway.errors import UserError

PACKAGE = "google-api-python-client"
Versions = Literal["newest", "all"]

_VERSION = re.compile(
    r"^(?:(?P<family>[a-z]+)_)?v(?P<major>\d+)(?:\.(?P<minor>\d+))?(?:p(?P<point>\d+))?"
    r"(?P<stage>[a-z]*)(?P<n>\d*)(?P<rest>.*)$"
)
_PRE_RELEASE = {"alpha": 1, "a": 1, "beta": 2, "b": 2, "preview": 0}
_LOADED_DOCUMENTS = 4  # parsed documents kept in memory (compute's alone is tens of megabytes parsed)


def documents_dir() -> Path:
    """The directory of the installed package's discovery documents.

    Raises:
        UserError: google-api-python-client is not installed.
    """
    spec = importlib.util.find_spec("googleapiclient")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise UserError(
            "the google-apis catalog needs google-api-python-client: pip install 'metatool-gateway[google]'"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "discovery_cache" / "documents"


def package_version() -> str:
    """The installed google-api-python-client version: its documents change only with it."""
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise UserError(
            "the google-apis catalog needs google-api-python-client: pip install 'metatool-gateway[google]'"
        ) from None


@dataclass(frozen=True, order=True)
class DocumentRef:
    """One shipped discovery document, named by its API and version."""

    name: str
    version: str

    @property
    def file_name(self) -> str:
        return f"{self.name}.{self.version}.json"


def available(directory: Path) -> list[DocumentRef]:
    """Every document in `directory`, sorted by name and version."""
    found = []
    for path in directory.glob("*.json"):
        name, _, version = path.name[: -len(".json")].partition(".")
        if version:  # index.json is the (stale) directory listing, not an API
            found.append(DocumentRef(name, version))
    return sorted(found)


def version_order(version: str) -> tuple[str, bool, tuple[int, ...]]:
    """(family, stable, order): versions of one family compare by (stable, order), newest last."""
    match = _VERSION.match(version)
    if match is None:
        if version in _PRE_RELEASE:  # compute's alpha, beta and preview sit beside its v1
            return "", False, (0, 0, 0, _PRE_RELEASE[version], 0)
        return version, True, (0,)  # an unrecognised version is a family of its own
    stage = match["stage"]
    stable = stage not in _PRE_RELEASE and not match["rest"]
    order = (
        int(match["major"]),
        int(match["minor"] or 0),
        int(match["point"] or 0),
        _PRE_RELEASE.get(stage, 3),
        int(match["n"] or 0),
    )
    return match["family"] or "", stable, order


def choose(refs: list[DocumentRef], versions: Versions) -> list[tuple[DocumentRef, bool]]:
    """The documents to serve, sorted, each with whether it is the default (newest stable) of its family.

    `newest` keeps only the defaults; `all` keeps every version.
    """
    families: dict[tuple[str, str], list[DocumentRef]] = {}
    for ref in refs:
        families.setdefault((ref.name, version_order(ref.version)[0]), []).append(ref)
    newest = {max(group, key=lambda r: version_order(r.version)[1:]) for group in families.values()}
    return [(ref, ref in newest) for ref in sorted(refs) if versions == "all" or ref in newest]


class DocumentCache:
    """Parsed documents, the few most recently used kept in memory; safe across threads."""

    def __init__(self, directory: Path, size: int = _LOADED_DOCUMENTS) -> None:
        self.directory = directory
        self._size = size
        self._loaded: OrderedDict[DocumentRef, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, ref: DocumentRef) -> dict[str, Any]:
        with self._lock:
            doc = self._loaded.get(ref)
            if doc is not None:
                self._loaded.move_to_end(ref)
                return doc
        doc = read_document(self.directory, ref)
        with self._lock:
            self._loaded[ref] = doc
            while len(self._loaded) > self._size:
                self._loaded.popitem(last=False)
        return doc


def read_document(directory: Path, ref: DocumentRef) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((directory / ref.file_name).read_bytes())
    return doc


def is_alias(ref: DocumentRef, doc: dict[str, Any]) -> bool:
    """Whether the file is a second copy of another document (it names a different version)."""
    return (doc.get("name"), doc.get("version")) != (ref.name, ref.version)
