"""The `google-apis` catalog provider: one tool per method of every Google API the client package ships.

Registered as `google-apis` in the `metatool_gateway.catalogs` entry points; configured by the
`[google_apis]` section (`options.extra["google_apis"]`) and authenticated by the `[google]` one.
Starting it reads the cached index only: params models are made when a schema or a call first needs
them, and credentials are loaded on the first call.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from gateway.catalog import Catalog, bulk_allocation
from gateway.definition import ToolDefinition
from gateway.errors import UserError
from gateway.toolset import ProviderOptions, Toolset

from .documents import DocumentCache, Versions, documents_dir
from .index import Index, load_index
from .invoke import Session, google_connection
from .methods import Method, find
from .params import ParamsFactory
from .scopes import ScopeMode, selection_scopes

GENERATED_RANK_WEIGHT = 0.75
"""Discovery scores of generated methods count at 3/4 against hand-written tools (before ranking)."""


class CatalogOptions(BaseModel):
    """The `[google_apis]` section, as the provider receives it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    versions: Versions = "newest"
    apis: tuple[str, ...] = ()
    exclude_apis: tuple[str, ...] = ()
    read_only: bool = False
    scopes: ScopeMode = "auto"
    cache_dir: Path | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None) -> CatalogOptions:
        """Raises: UserError: an unknown key or a bad value."""
        try:
            return cls.model_validate({k: v for k, v in (raw or {}).items() if v is not None})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                for e in exc.errors(include_url=False, include_input=False)
            )
            raise UserError(f"[google_apis] configuration: {problems}") from None


def provide(options: ProviderOptions) -> Toolset:
    """The catalog for `catalogs = ["google-apis"]` (or `--catalog google-apis`).

    Raises:
        UserError: bad `[google_apis]` settings, an unknown API name, or no google-api-python-client.
    """
    settings = CatalogOptions.parse(options.extra.get("google_apis"))
    google = options.extra.get("google")
    session = Session(lambda: google_connection(google, options.data_dir))
    return catalog_toolset(settings, session)


def served_methods(settings: CatalogOptions, index: Index) -> list[Method]:
    """The methods the settings serve: the selected APIs', only their read-only ones with `read_only`.

    Raises:
        UserError: an unknown API name.
    """
    methods = index.select(settings.apis, settings.exclude_apis)
    return [m for m in methods if m.read_only] if settings.read_only else methods


def sign_in_scopes(
    settings: CatalogOptions, index: Index | None = None, *, allow_permanent_delete: bool = False
) -> list[str]:
    """The scopes to ask for at sign-in for the served APIs, by `settings.scopes` (see `scopes.py`).

    Raises:
        UserError: an unknown API name.
    """
    index = index or load_index(settings.cache_dir, settings.versions)
    return selection_scopes(
        served_methods(settings, index),
        settings.scopes,
        selected=bool(settings.apis),
        read_only=settings.read_only,
        allow_permanent_delete=allow_permanent_delete,
    )


def catalog_toolset(settings: CatalogOptions, session: Session, *, index: Index | None = None) -> Toolset:
    """The tools of the selected APIs, calling through `session`."""
    with bulk_allocation():
        index = index or load_index(settings.cache_dir, settings.versions)
        methods = served_methods(settings, index)
        documents = DocumentCache(documents_dir())
        factory = ParamsFactory()
        catalog = Catalog([definition(m, session, documents, factory) for m in methods])
    return Toolset(catalog=catalog, resources=MappingProxyType({Session: session}))


def definition(
    method: Method, session: Session, documents: DocumentCache, factory: ParamsFactory
) -> ToolDefinition:
    """The tool of one method; its params model is made on first use."""

    def params() -> type[BaseModel]:
        return params_model(method, documents, factory)

    def handler(validated: BaseModel) -> Any:
        return session.call(method, validated)

    metadata = {
        "method_id": method.method_id,
        "api": f"{method.api.name} {method.api.version}",
        "http": f"{method.http_method} {method.url}",
    }
    if method.media:
        metadata["media"] = f"{method.media} not supported"
    return ToolDefinition(
        name=method.name,
        category=method.api.category,
        action=method.action,
        verb=method.verb,
        summary=method.summary,
        description=method.description,
        params=params,
        handler=handler,
        read_only=method.read_only,
        destructive=method.destructive,
        concurrency_safe=method.read_only,
        # What the document says around the method counts as little as its parameter names (BM25F
        # weight 0.4 against 1 to 3 for its own words) and joins its embedding; `context.py`.
        search_text=f"{method.search_text} {method.context}" if method.context else method.search_text,
        # Generated from API references: when a hand-written tool matches about as well, it is the
        # better answer (defaults, natural-language dates, compact results).
        rank_weight=GENERATED_RANK_WEIGHT,
        metadata=MappingProxyType(metadata),
        required_params=method.required,
    )


def params_model(method: Method, documents: DocumentCache, factory: ParamsFactory) -> type[BaseModel]:
    """Read the method's document (kept for the next few methods) and make its params model."""
    doc = documents.get(method.api.ref)
    return factory.model(method.name, f"{method.api.name}.{method.api.version}", doc, find(doc, method.path))
