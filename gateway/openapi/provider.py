"""The `openapi` catalog provider: one tool per operation of each `[[openapi]]` entry.

Registered as `openapi` in the `metatool_gateway.catalogs` entry points; the runtime loads it when
entries are configured (`options.extra["openapi"]`; `openapi_select` names the entries that
`--catalog openapi:NAME` picked). Starting reads each description's cached operation list only; the
description itself is parsed when a schema or a call first needs it, and credentials are read on
the first call.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ValidationError

from ..catalog import Catalog, bulk_allocation
from ..context import ToolContext
from ..definition import ToolDefinition
from ..errors import ToolFailed, UserError
from ..names import closest_names
from ..rendering import cut
from ..settings.loading import OpenApiSettings
from ..toolset import ProviderOptions, Toolset
from . import index as index_module
from .auth import Credentials, Grants, install_log_filter
from .client import Client, Target
from .document import content_hash, parse, read_bytes, version_of
from .flight import Lane
from .index import Index
from .operations import SAFE_METHODS, Operation
from .origins import origin
from .params import Layout, layout
from .request import build
from .schemas import Converter
from .validation import params_model

GENERATED_RANK_WEIGHT = 0.75
"""Discovery scores of generated operations count at 3/4 against hand-written tools (before ranking)."""
_log = logging.getLogger("gateway.openapi")


def parse_entries(raw: Iterable[Any]) -> list[OpenApiSettings]:
    """Raises: UserError: an entry is invalid, or two entries share a name."""
    entries = []
    for item in raw:
        try:
            entries.append(
                item if isinstance(item, OpenApiSettings) else OpenApiSettings.model_validate(item)
            )
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                for e in exc.errors(include_url=False, include_input=False)
            )
            raise UserError(f"[[openapi]] configuration: {problems}") from None
    names = [e.name for e in entries]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UserError(f"[[openapi]]: more than one entry is named {', '.join(repeated)}")
    return entries


def provide(options: ProviderOptions) -> Toolset:
    """The catalog of every configured entry (or of those `--catalog openapi:NAME` selected).

    Raises:
        UserError: bad entries, an unknown selected name, or a description that cannot be served.
    """
    entries = parse_entries(options.extra.get("openapi") or ())
    selected: Sequence[str] = tuple(options.extra.get("openapi_select") or ())
    known = [e.name for e in entries]
    unknown = [n for n in selected if n not in known]
    if unknown:
        hints = [f"{n!r} (did you mean {', '.join(closest_names(n, known)) or 'none'}?)" for n in unknown]
        raise UserError(f"--catalog openapi:NAME: no [[openapi]] entry {'; '.join(hints)}")
    if selected:
        entries = [e for e in entries if e.name in selected]
    cache_dir = options.extra.get("openapi_cache_dir") or options.data_dir / "openapi"
    grants = options.extra.get("vault")  # each caller's own credentials, for per_principal entries
    apis = [OpenApi(entry, Path(cache_dir), grants=grants) for entry in entries]
    with bulk_allocation():
        catalog = Catalog([d for api in apis for d in api.definitions()])

    def close() -> None:
        for api in apis:
            api.close()

    resources: Mapping[type, object] = MappingProxyType({OpenApiCatalogs: OpenApiCatalogs(tuple(apis))})
    return Toolset(catalog=catalog, resources=resources, close=close)


class OpenApi:
    """One entry: its index, its description (parsed on first need), its params models and client."""

    def __init__(
        self,
        settings: OpenApiSettings,
        cache_dir: Path | None,
        *,
        environ: Mapping[str, str] | None = None,
        client: Client | None = None,
        grants: Grants | None = None,
    ) -> None:
        self.settings = settings
        self.index: Index = index_module.load(settings.name, settings.spec, cache_dir)
        self.base_url = settings.base_url or server_url(self.index.servers, settings.server_variables)
        self.credentials = Credentials(
            settings.name,
            settings.auth,
            self.index.security_schemes,
            environ=environ,
            base_url=self.base_url,
            grants=grants,
        )
        target = Target(
            settings.name,
            _title(self.index.title, settings.name),
            self.base_url,
            settings.timeout,
            settings.retries,
            settings.max_response_bytes,
            tuple(_servers(settings.name, settings.allowed_servers)),
        )
        self.client = client or Client(target, self.credentials)
        self.credentials.token_request = self.client.token_request
        self.lane = Lane(target.title, settings.max_in_flight)
        self._doc: dict[str, Any] | None = None
        self._layouts: dict[str, Layout] = {}
        self._lock = threading.Lock()
        install_log_filter()

    def operations(self) -> list[Operation]:
        """The served operations: filtered by the entry's lists and `read_only`.

        Raises:
            UserError: a list names something the description does not have.
        """
        s = self.settings
        ops = list(self.index.operations)
        _unmatched(s.name, ops, "include_tags", s.include_tags, _by_tag)
        _unmatched(s.name, ops, "exclude_tags", s.exclude_tags, _by_tag)
        _unmatched(s.name, ops, "include_paths", s.include_paths, _by_path)
        _unmatched(s.name, ops, "exclude_paths", s.exclude_paths, _by_path)
        _unmatched(s.name, ops, "include_operations", s.include_operations, _by_id)
        _unmatched(s.name, ops, "exclude_operations", s.exclude_operations, _by_id)
        _unmatched(s.name, ops, "safe", s.safe, marked)

        def kept(op: Operation) -> bool:
            for wanted, match in (
                (s.include_tags, _by_tag),
                (s.include_paths, _by_path),
                (s.include_operations, _by_id),
            ):
                if wanted and not any(match(op, w) for w in wanted):
                    return False
            for unwanted, match in (
                (s.exclude_tags, _by_tag),
                (s.exclude_paths, _by_path),
                (s.exclude_operations, _by_id),
            ):
                if any(match(op, w) for w in unwanted):
                    return False
            return not s.read_only or op.method in SAFE_METHODS

        return [op for op in ops if kept(op)]

    def definitions(self) -> list[ToolDefinition]:
        # A key the gateway fills in itself (an API key) is not one the model gives: not required.
        hidden = frozenset(name for _, name in self.credentials.hidden)
        return [self.definition(op, hidden) for op in self.operations()]

    def definition(self, op: Operation, hidden: frozenset[str] = frozenset()) -> ToolDefinition:
        read_only, destructive = flags(op, self.settings.safe)

        def params() -> type[BaseModel]:
            return self.model(op)

        async def handler(validated: BaseModel, ctx: ToolContext) -> Any:
            # Whose credentials a call carries is decided by who calls: the context, never an argument.
            return await self.lane.run(self.call, op, validated, ctx.principal.id)

        metadata = {
            "openapi": self.settings.name,  # the entry: rate limits select it as a source
            "operation_id": op.operation_id,
            "api": self.client.target.title,
            "http": f"{op.method} {op.path}",
            "details": op.details,
        }
        return ToolDefinition(
            name=op.name,
            category=op.category,
            action=op.action,
            verb=op.verb,
            summary=op.summary,
            description=op.summary,
            params=params,
            handler=handler,
            read_only=read_only,
            destructive=destructive,
            concurrency_safe=read_only,
            search_text=op.search_text,
            rank_weight=GENERATED_RANK_WEIGHT,
            # each attempt may take the request timeout; retries wait at most as long again
            timeout=self.settings.timeout * (self.settings.retries + 2) + 5.0,
            metadata=MappingProxyType({k: v for k, v in metadata.items() if v}),
            required_params=tuple(k for k in op.required if k.lower() not in hidden),
        )

    def document(self) -> dict[str, Any]:
        """The description, parsed on first need and kept."""
        with self._lock:
            if self._doc is None:
                path = self.settings.spec
                data = read_bytes(path)
                if content_hash(data) != self.index.digest:
                    _log.warning("openapi %s: %s changed since the gateway started", self.settings.name, path)
                doc = parse(data, path)
                version_of(doc, path)
                self._doc = doc
            return self._doc

    def layout(self, op: Operation) -> Layout:
        with self._lock:
            found = self._layouts.get(op.name)
        if found is not None:
            return found
        doc = self.document()
        paths = doc.get("paths", {})
        if op.path not in paths:
            raise ToolFailed(
                "unavailable",
                f"the API description of {self.settings.name} changed since the gateway started; the operator "
                "has to restart it",
            )
        converter = Converter(doc, self.index.version)
        made = layout(converter, op.path, op.method, self.credentials.hidden)
        with self._lock:
            self._layouts[op.name] = made
        return made

    def model(self, op: Operation) -> type[BaseModel]:
        return params_model(op.name, self.layout(op).schema)

    def call(self, op: Operation, validated: BaseModel, principal: str | None = None) -> Any:
        made = self.layout(op)
        if made.unsupported_body:
            raise ToolFailed(
                "invalid",
                f"{op.name} needs a request body of a kind the gateway cannot send ({made.unsupported_body})",
            )
        arguments = validated.model_dump(mode="json")
        return self.client.send(op, build(made, op.path, arguments), principal)

    def close(self) -> None:
        self.lane.close()
        self.client.close()
        self.credentials.close()


class OpenApiCatalogs:
    """The entries a gateway serves (a resource, for commands that report on them)."""

    def __init__(self, apis: tuple[OpenApi, ...]) -> None:
        self.apis = apis


def flags(op: Operation, safe: Sequence[str]) -> tuple[bool, bool]:
    """(read_only, destructive), failing closed: only marked writes are not destructive."""
    if op.method in SAFE_METHODS:
        return True, False
    if op.method == "DELETE":
        return False, True
    return False, not any(marked(op, mark) for mark in safe)


def marked(op: Operation, mark: str) -> bool:
    """A `safe` mark: 'tag:NAME', a path glob (it has a '/'), or an operation id or tool name glob."""
    if mark.startswith("tag:"):
        return _by_tag(op, mark[4:])
    if "/" in mark and mark.startswith("/"):
        return _by_path(op, mark)
    return _by_id(op, mark)


def _by_tag(op: Operation, tag: str) -> bool:
    return any(t.lower() == tag.lower() for t in op.tags)


def _by_path(op: Operation, glob: str) -> bool:
    return fnmatchcase(op.path, glob)


def _by_id(op: Operation, glob: str) -> bool:
    return fnmatchcase(op.operation_id, glob) or fnmatchcase(op.name, glob)


def _unmatched(entry: str, ops: list[Operation], key: str, values: Sequence[str], match: Any) -> None:
    missing = [v for v in values if not any(match(op, v) for op in ops)]
    if not missing:
        return
    if match is _by_tag:
        pool = {t for op in ops for t in op.tags}
    elif match is _by_path:
        pool = {op.path for op in ops}
    else:
        pool = {op.operation_id for op in ops if op.operation_id}
    hints = [f"{v!r} (closest: {', '.join(closest_names(v, pool)) or 'none'})" for v in missing]
    raise UserError(f"[[openapi]] {entry}: {key} matches nothing in the description: {'; '.join(hints)}")


def server_url(servers: Sequence[Mapping[str, Any]], overrides: Mapping[str, str]) -> str | None:
    """The first server's URL with its variables filled in (overrides, else defaults); None if none."""
    if not servers:
        return None
    server = servers[0]
    url = str(server.get("url", ""))
    variables = server.get("variables") if isinstance(server.get("variables"), dict) else {}
    assert isinstance(variables, dict)
    for name, spec in variables.items():
        value = overrides.get(name)
        if value is None and isinstance(spec, dict):
            value = str(spec.get("default", ""))
        url = url.replace("{" + str(name) + "}", value or "")
    if url.startswith("//"):
        url = "https:" + url
    return url or None


def _servers(entry: str, urls: Sequence[str]) -> Sequence[str]:
    """Raises: UserError: an allowed server is not an http(s) URL with a host."""
    bad = [url for url in urls if origin(url) is None]
    if bad:
        raise UserError(
            f"[[openapi]] {entry}: allowed_servers needs http(s) URLs, not {', '.join(map(repr, bad))}"
        )
    return urls


def _title(title: str, entry: str) -> str:
    from . import text

    return cut(text.clean(title), 80) or entry
