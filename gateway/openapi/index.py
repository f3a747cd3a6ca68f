"""The operation list of a description, built once and cached on disk by the description's content hash.

Parsing a 13 MB description takes a good fraction of a second; what the catalog needs before any call
(names, summaries, actions, search words, the servers and security schemes) is a few hundred
kilobytes of JSON, read in milliseconds. The cache file is named after the entry and keyed by the
SHA-256 of the description's bytes and the index format, so an edited description, a renamed entry
or a new gateway version never reads a stale list. It is JSON (a cache directory others can write
to cannot make the gateway run code); a damaged file is rebuilt, an unwritable directory costs a
rebuild next time, never an error. Filters are applied to the index, so changing them needs no
rebuild.

Hashing is itself the largest cost of a warm start when there are many descriptions (a hundred and
more, hundreds of megabytes), so the digest of each is remembered beside its index with the file's
size, modification time and inode, as `git` remembers its work tree's: a description whose file is
unchanged since it was hashed, and was already old then, is not read again. One changed in any of
them, or modified within `RACY_SECONDS` of its hashing (a change the clock may not show), is read
and hashed; and a description read later to make a model is checked against the digest anyway.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import keep_newest, write_json_atomic
from .document import content_hash, parse, read_bytes, version_of
from .operations import Operation, operations_of
from .params import layout
from .schemas import Converter

INDEX_FORMAT = 3
"""Changes whenever what is indexed, or how, changes: older files are then ignored (2: text kept the
space before a word that starts with punctuation, ".git"; 3: each operation's required parameters)."""
MAX_CACHED_PER_ENTRY = 3
RACY_SECONDS = 2.0
"""A file modified this close to its hashing is hashed again next time: a change in the same tick
of the file system's clock would leave its modification time as it was."""
_log = logging.getLogger("gateway.openapi")


@dataclass(frozen=True)
class Index:
    """One description's operations and what calls need of its top level."""

    entry: str
    digest: str
    version: str
    title: str
    servers: tuple[dict[str, Any], ...]
    security_schemes: dict[str, Any]
    operations: tuple[Operation, ...]
    problems: int


def build(entry: str, data: bytes, path: Path, digest: str) -> tuple[Index, dict[str, Any]]:
    """The index and the parsed document (seconds for the largest descriptions: what the cache saves).

    Raises:
        SpecError: the description cannot be served.
    """
    doc = parse(data, path)
    version = version_of(doc, path)
    ops, problems = operations_of(entry, doc)
    ops = [op._replace(required=_required(doc, version, op)) for op in ops]
    servers = doc.get("servers")
    components = doc.get("components")
    schemes = components.get("securitySchemes") if isinstance(components, dict) else None
    info = doc.get("info")
    index = Index(
        entry=entry,
        digest=digest,
        version=version,
        title=str(info.get("title", entry)) if isinstance(info, dict) else entry,
        servers=tuple(s for s in servers if isinstance(s, dict)) if isinstance(servers, list) else (),
        security_schemes=_plain(schemes) if isinstance(schemes, dict) else {},
        operations=tuple(ops),
        problems=len(problems),
    )
    return index, doc


def _required(doc: dict[str, Any], version: str, op: Operation) -> tuple[str, ...]:
    """The required properties of the operation's params model, laid out once here, when the
    description is read (a fraction of a second for GitHub's), so that search never builds a model."""
    try:
        schema = layout(Converter(doc, version), op.path, op.method).schema
    except Exception:  # a hint only: the model reports what is wrong when it is made, on use
        return ()
    return tuple(r for r in schema.get("required", ()) if isinstance(r, str))


def _plain(schemes: dict[str, Any]) -> dict[str, Any]:
    """Security schemes without their descriptions (long, and never needed to call)."""
    out: dict[str, Any] = {}
    for key, scheme in schemes.items():
        if isinstance(scheme, dict) and "$ref" not in scheme:
            out[str(key)] = {k: v for k, v in scheme.items() if k != "description"}
    return out


def load(entry: str, path: Path, cache_dir: Path | None) -> Index:
    """The index of the description at `path`, from the cache when it has this content, else built.

    Raises:
        SpecError: the description cannot be read or served.
    """
    if cache_dir is None:
        data = read_bytes(path)
        return build(entry, data, path, content_hash(data))[0]
    remembered = _remembered(entry, path, cache_dir)
    if remembered is not None and (index := _cached(entry, remembered, cache_dir)) is not None:
        return index
    data = read_bytes(path)
    digest = content_hash(data)
    if digest != remembered:
        _remember(entry, path, cache_dir, digest)
        if (index := _cached(entry, digest, cache_dir)) is not None:
            return index
    index, _ = build(entry, data, path, digest)
    _save(_cache_file(entry, digest, cache_dir), encode(index), entry)
    return index


def _cache_file(entry: str, digest: str, cache_dir: Path) -> Path:
    return cache_dir / f"{entry}-{digest[:16]}-{INDEX_FORMAT}.json"


def _cached(entry: str, digest: str, cache_dir: Path) -> Index | None:
    """The cached index of this content, or None (absent, or unusable: then it is rebuilt)."""
    cached = _cache_file(entry, digest, cache_dir)
    try:
        index = decode(json.loads(cached.read_bytes()), entry, digest)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        _log.warning("rebuilding the openapi index of %s: %s is unusable (%s)", entry, cached, exc)
        return None
    with contextlib.suppress(OSError):
        os.utime(cached)  # recently used: kept by the pruning
    return index


def _signature(path: Path) -> list[Any] | None:
    """What says a file is unchanged: its absolute path, size, modification time, inode and device."""
    try:
        st = path.stat()
    except OSError:
        return None
    return [str(path.absolute()), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev]


def _remembered(entry: str, path: Path, cache_dir: Path) -> str | None:
    """The digest `path` had when it was last hashed, if the file has not changed since (module doc)."""
    signature = _signature(path)
    try:
        memo = json.loads((cache_dir / f"{entry}.digest.json").read_bytes())
        digest, hashed_ns, seen = memo["digest"], memo["hashed_ns"], memo["file"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if signature is None or seen != signature or not isinstance(digest, str) or len(digest) != 64:
        return None
    if not isinstance(hashed_ns, int) or signature[2] > hashed_ns - RACY_SECONDS * 1e9:
        return None  # modified too close to its hashing to trust the clock
    return digest


def _remember(entry: str, path: Path, cache_dir: Path, digest: str) -> None:
    """Keep the digest just computed for the next start (read back by `_remembered`)."""
    signature = _signature(path)
    if signature is None:
        return
    memo = {"digest": digest, "hashed_ns": time.time_ns(), "file": signature}
    try:
        write_json_atomic(cache_dir / f"{entry}.digest.json", memo, compact=True)
    except OSError as exc:  # costs a hash next time, nothing more
        _log.warning("could not write the openapi digest memo of %s: %s", entry, exc)


def encode(index: Index) -> dict[str, Any]:
    return {
        "format": INDEX_FORMAT,
        "entry": index.entry,
        "digest": index.digest,
        "version": index.version,
        "title": index.title,
        "servers": list(index.servers),
        "security_schemes": index.security_schemes,
        "problems": index.problems,
        "operations": [list(op) for op in index.operations],
    }


def decode(data: dict[str, Any], entry: str, digest: str) -> Index:
    """Raises: ValueError: the data is for another format, entry or content."""
    header = (data["format"], data["entry"], data["digest"])
    if header != (INDEX_FORMAT, entry, digest):
        raise ValueError(f"built for {header[:2]}")
    make = Operation._make
    ops = tuple(
        make((*row[:4], tuple(row[4]), *row[5:-1], tuple(row[-1])))
        for row in data["operations"]
        if len(row) == len(Operation._fields)
    )
    if len(ops) != len(data["operations"]):
        raise ValueError("rows of another shape")
    return Index(
        entry=entry,
        digest=digest,
        version=str(data["version"]),
        title=str(data["title"]),
        servers=tuple(data["servers"]),
        security_schemes=dict(data["security_schemes"]),
        operations=ops,
        problems=int(data["problems"]),
    )


def _save(path: Path, data: dict[str, Any], entry: str) -> None:
    try:
        write_json_atomic(path, data, compact=True)
        keep_newest(path.parent, f"{entry}-*.json", MAX_CACHED_PER_ENTRY)
    except OSError as exc:  # a read-only or full disk costs a rebuild next time, nothing more
        _log.warning("could not write the openapi index cache %s: %s", path, exc)
