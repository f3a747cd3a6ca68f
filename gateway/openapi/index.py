"""The operation list of a description, built once and cached on disk by the description's content hash.

Parsing a 13 MB description takes a good fraction of a second; what the catalog needs before any call
(names, summaries, actions, search words, the servers and security schemes) is a few hundred
kilobytes of JSON, read in milliseconds. The cache file is named after the entry and keyed by the
SHA-256 of the description's bytes and the index format, so an edited description, a renamed entry
or a new gateway version never reads a stale list. It is JSON (a cache directory others can write
to cannot make the gateway run code); a damaged file is rebuilt, an unwritable directory costs a
rebuild next time, never an error. Filters are applied to the index, so changing them needs no
rebuild.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
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
    data = read_bytes(path)
    digest = content_hash(data)
    cached = cache_dir / f"{entry}-{digest[:16]}-{INDEX_FORMAT}.json" if cache_dir else None
    if cached is not None:
        try:
            index = decode(json.loads(cached.read_bytes()), entry, digest)
            with contextlib.suppress(OSError):
                os.utime(cached)  # recently used: kept by the pruning
            return index
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            _log.warning("rebuilding the openapi index of %s: %s is unusable (%s)", entry, cached, exc)
    index, _ = build(entry, data, path, digest)
    if cached is not None:
        _save(cached, encode(index), entry)
    return index


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
