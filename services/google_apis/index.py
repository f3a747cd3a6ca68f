"""The catalog's index: every method's entry, built once from the shipped documents and cached on disk.

Reading ~350 discovery documents (over 100 MB of JSON) takes seconds; the index of what the catalog
needs before any call (names, categories, actions, flags, summaries, descriptions, search words) is a
few megabytes. It is written once per google-api-python-client version and versions mode, as JSON (a
cache directory others can write to cannot make the gateway run code); a damaged or foreign file is
rebuilt. APIs are picked from the index (`select`), so the allow and deny lists need no rebuild.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.errors import UserError
from gateway.files import keep_newest, write_json_atomic
from gateway.names import closest_names

from .documents import Versions, available, choose, documents_dir, is_alias, package_version, read_document
from .methods import Api, Method, api_of, assign_names, methods_of

INDEX_FORMAT = 6
"""Changes whenever what is indexed, or how, changes: older files are then ignored."""
MAX_CACHED_INDEXES = 4
"""Index files kept in the cache directory (other package versions, modes); the least recently used go."""
_log = logging.getLogger("services.google_apis")


def default_cache_dir() -> Path:
    import platformdirs

    return platformdirs.user_cache_path("metatool-gateway") / "google-apis"


@dataclass(frozen=True)
class Index:
    """Every method of the served documents, sorted by name."""

    package_version: str
    versions: Versions
    apis: tuple[Api, ...]
    methods: tuple[Method, ...]

    def select(self, apis: Sequence[str] = (), exclude: Sequence[str] = ()) -> list[Method]:
        """The methods of the APIs in `apis` (all when empty) but not in `exclude`.

        An API is named by its discovery name (`drive`, `youtubeAnalytics`) or its category
        (`youtube_analytics`).

        Raises:
            UserError: a name that is no API of this index, with the closest names.
        """
        known = {a.name for a in self.apis} | {a.category for a in self.apis}
        unknown = [name for name in (*apis, *exclude) if name not in known]
        if unknown:
            hints = [f"{n!r} (did you mean {', '.join(closest_names(n, known)) or 'none'}?)" for n in unknown]
            raise UserError(f"[google_apis]: unknown APIs: {'; '.join(hints)}")
        wanted = set(apis)
        unwanted = set(exclude)

        def keep(api: Api) -> bool:
            names = {api.name, api.category}
            return (not wanted or bool(names & wanted)) and not names & unwanted

        return [m for m in self.methods if keep(m.api)]


def build_index(directory: Path, versions: Versions, *, context: bool = True) -> Index:
    """Read the documents and make every entry (seconds: this is what the cache saves).

    Without `context`, no method gets the text around it (see `methods_of`).
    """
    apis: list[Api] = []
    found: list[Method] = []
    for ref, default in choose(available(directory), versions):
        doc = read_document(directory, ref)
        if is_alias(ref, doc):
            continue
        api = api_of(ref, doc, default)
        apis.append(api)
        found.extend(methods_of(api, doc, context=context))
    methods = sorted(assign_names(found), key=lambda m: m.name)
    return Index(package_version(), versions, tuple(apis), tuple(methods))


def load_index(cache_dir: Path | None, versions: Versions, *, directory: Path | None = None) -> Index:
    """The index from the cache when it was built for the installed package, else built and cached.

    A cache that cannot be read or written costs a build, never an error.
    """
    cache_dir = cache_dir if cache_dir is not None else default_cache_dir()
    version = package_version()
    path = cache_dir / f"google-apis-{INDEX_FORMAT}-{version}-{versions}.json"
    try:
        index = decode(json.loads(path.read_bytes()), version, versions)
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: kept by the pruning
        return index
    except FileNotFoundError:
        pass
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        _log.warning("rebuilding the google-apis index: %s is unusable (%s)", path, exc)
    _log.info("Reading the Google API descriptions (cached for next time)...")
    index = build_index(directory or documents_dir(), versions)
    _save(path, encode(index))
    return index


def encode(index: Index) -> dict[str, Any]:
    """The index as compact JSON data: APIs and scope lists by position, methods as rows."""
    api_position = {api: i for i, api in enumerate(index.apis)}
    scope_sets: dict[tuple[str, ...], int] = {}
    contexts: dict[str, int] = {}  # the methods of one resource mostly share theirs
    rows = []
    for m in index.methods:
        scopes = scope_sets.setdefault(m.scopes, len(scope_sets))
        context = contexts.setdefault(m.context, len(contexts))
        flags = int(m.read_only) | int(m.destructive) << 1
        rows.append(
            [
                m.name,
                api_position[m.api],
                m.method_id,
                ".".join(m.path),
                m.verb,
                m.action,
                m.http_method,
                m.url,
                m.summary,
                "" if m.description == m.summary else m.description,  # most are one sentence
                m.search_text,
                context,
                flags,
                m.media,
                scopes,
                m.required,
            ]
        )
    return {
        "format": INDEX_FORMAT,
        "package_version": index.package_version,
        "versions": index.versions,
        "apis": [[a.name, a.version, a.title, a.category, a.default] for a in index.apis],
        "scopes": [list(s) for s in scope_sets],
        "contexts": list(contexts),
        "methods": rows,
    }


def decode(data: dict[str, Any], version: str, versions: Versions) -> Index:
    """An index from `encode`'s data, checked to be for this package version and mode.

    Raises:
        ValueError: the data is for another format, version or mode.
    """
    header = (data["format"], data["package_version"], data["versions"])
    if header != (INDEX_FORMAT, version, versions):
        raise ValueError(f"built for {header}")
    apis = tuple(Api(str(n), str(v), str(t), str(c), bool(d)) for n, v, t, c, d in data["apis"])
    scopes = [tuple(map(str, s)) for s in data["scopes"]]
    contexts = [str(c) for c in data["contexts"]]
    make = Method._make  # positional: fourteen thousand of these are made at every start
    methods = tuple(
        make(
            (
                name,
                apis[api],
                method_id,
                tuple(path.split(".")),
                verb,
                action,
                http_method,
                url,
                summary,
                description or summary,
                search_text,
                contexts[context],
                bool(flags & 1),
                bool(flags & 2),
                media,
                scopes[scope],
                tuple(map(str, required)),
            )
        )
        for (
            name,
            api,
            method_id,
            path,
            verb,
            action,
            http_method,
            url,
            summary,
            description,
            search_text,
            context,
            flags,
            media,
            scope,
            required,
        ) in data["methods"]
    )
    return Index(version, versions, apis, methods)


def _save(path: Path, data: dict[str, Any]) -> None:
    try:
        write_json_atomic(path, data, compact=True)
        keep_newest(path.parent, "google-apis-*.json", MAX_CACHED_INDEXES)
    except OSError as exc:  # a read-only or full disk costs a rebuild next time, nothing more
        _log.warning("could not write the google-apis index cache %s: %s", path, exc)


def categories(methods: Iterable[Method]) -> list[str]:
    return sorted({m.api.category for m in methods})
