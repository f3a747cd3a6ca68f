"""Tool definitions: one vendor-neutral description of a tool, and the decorator that makes one.

A params model's JSON schema and the validation of a call's arguments live in `arguments`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticSerializationError

from .actions import ACTIONS, normalize_action
from .arguments import params_schema, required_fields, validate_arguments
from .context import ToolContext
from .names import NAME_PATTERN, name_problem
from .signatures import params_model_of, read_signature

F = TypeVar("F", bound=Callable[..., Any])

PARAMS_CONFIG = ConfigDict(
    extra="forbid", strict=True, str_strip_whitespace=False, use_attribute_docstrings=True
)
"""Model config every params model should use: unknown fields are errors, docstrings document fields,
and arguments are taken strictly (see `arguments.validate_arguments`; `Field(strict=False)` opts one field out)."""

MAX_SUMMARY_LENGTH = 160
MAX_EXAMPLE_REQUESTS = 10
MAX_REQUEST_LENGTH = 200

Example = str | Mapping[str, Any]
"""An example request (a string: what a user might say) or an example call (a mapping of parameters)."""

Handler = Callable[..., Any | Awaitable[Any]]
ParamsSource = type[BaseModel] | Callable[[], type[BaseModel]]
"""A params model, or a function that builds it on first use (for catalogs of thousands of tools)."""
PermissionCheck = Callable[[BaseModel, ToolContext], str | None]
"""Sees the validated parameters and the context; returns a refusal reason, or None to allow."""
Describer = Callable[[Any, ToolContext], Sequence[str] | Awaitable[Sequence[str]]]
"""Says what a call is about, for the person who approves it (an event's title for its id): lines.

Takes the validated params model (typed as the tool's own) and the call's context."""

_SPEC_ATTR = "__gateway_tool__"


@dataclass(frozen=True)
class ToolSpec:
    """What `@tool` attaches to a function: the definition's fields given by hand (None: from the
    function, its name and its docstring)."""

    category: str
    action: str | None
    name: str | None
    params: type[BaseModel] | None
    summary: str | None
    description: str | None
    read_only: bool
    destructive: bool | None
    concurrency_safe: bool
    tags: tuple[str, ...]
    examples: tuple[Example, ...]
    timeout: float | None
    permission: PermissionCheck | None
    prompt: str | None
    describe: Describer | None


# The params model of a tool that takes no arguments (no docstring: it would show in the schema).
class NoParams(BaseModel):
    model_config = PARAMS_CONFIG


@dataclass(frozen=True, eq=False)
class ToolDefinition:
    """Everything the gateway knows about one tool.

    Flags fail closed: a tool that does not say it is read-only is treated as
    destructive (it needs confirmation) and as unsafe to run concurrently.

    `examples` mixes example requests (strings: what a user might say, searched and shown by
    `get_tool_schema`) and example calls (parameter mappings; the first is shown); `example_requests`
    and `example_calls` split them.

    `rank_weight` (0 to 1) scales a tool's discovery score before results are ranked, so
    that generated tools can yield to hand-written ones that match about as well.

    `required_params` names the required parameters of a lazy params model, as its provider reads
    them from its own description: what search needs of the schema without building it
    (`required_names`). A catalog of thousands builds no model until a tool is asked for.
    """

    name: str
    """Unique in a catalog; what the model passes to `get_tool_schema` and `invoke_tool`."""
    category: str
    """The service or area (`calendar`, `gmail`); `discover_tools` filters by it."""
    action: str
    """The normalised verb (`create`, `delete`, one of `actions.ACTIONS`); `discover_tools` filters by it."""
    summary: str
    """One line the model reads in a discover page (at most `MAX_SUMMARY_LENGTH` characters)."""
    description: str
    """The full text `get_tool_schema` shows."""
    params: ParamsSource
    """The params model, or a function that builds it on first use (`is_lazy`)."""
    handler: Handler
    """Runs the call with the validated params (and the context, when it takes two arguments)."""
    read_only: bool = False
    """Changes nothing: never confirmed, safe to retry."""
    destructive: bool | None = None
    """Needs a person's confirmation; None: whatever `read_only` is not (`is_destructive`)."""
    concurrency_safe: bool = False
    """May run beside other calls of the same request."""
    verb: str = ""
    """The verb as the author wrote it (`reschedule`), before it was normalised into `action`."""
    tags: tuple[str, ...] = ()
    """Free words search also matches."""
    examples: tuple[Example, ...] = ()
    """Example requests and example calls (`example_requests`, `example_calls`)."""
    timeout: float | None = None
    """Seconds a call may run before it fails with `timeout` (None: the gateway's default)."""
    permission: PermissionCheck | None = None
    """Sees the validated params and the context; a reason it returns refuses the call."""
    prompt: str | None = None
    """Guidance for the model, shown with the schema."""
    describe: Describer | None = None
    """Lines that tell the person approving a destructive call what it is about."""
    search_text: str = ""
    """Words search indexes beside the name and summary (a lazy model's parameter words)."""
    rank_weight: float = 1.0
    """0 to 1: scales the discovery score, so generated tools can yield to hand-written ones."""
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Where a provider's tool comes from (`server`, `openapi`, `method_id`, ...), read-only."""
    required_params: tuple[str, ...] | None = None
    """The required parameters of a lazy model, as its provider read them (`required_names`)."""

    # Written out rather than generated: a frozen dataclass's own __init__ sets each field through
    # object.__setattr__, and a catalog of the Google APIs makes 14,000 of these at every start.
    # Same fields, order and defaults (a test compares them with the dataclass fields).
    def __init__(  # noqa: PLR0917 (the signature the dataclass would make)
        self,
        name: str,
        category: str,
        action: str,
        summary: str,
        description: str,
        params: ParamsSource,
        handler: Handler,
        read_only: bool = False,
        destructive: bool | None = None,
        concurrency_safe: bool = False,
        verb: str = "",
        tags: tuple[str, ...] = (),
        examples: tuple[Example, ...] = (),
        timeout: float | None = None,
        permission: PermissionCheck | None = None,
        prompt: str | None = None,
        describe: Describer | None = None,
        search_text: str = "",
        rank_weight: float = 1.0,
        metadata: Mapping[str, Any] | None = None,
        required_params: tuple[str, ...] | None = None,
    ) -> None:
        # The first field through object.__setattr__ gives the instance the class's shared key table
        # (PEP 412), which the update then fills: 264 bytes a definition instead of 464.
        object.__setattr__(self, "name", name)
        self.__dict__.update(
            category=category,
            action=action,
            summary=summary,
            description=description,
            params=params,
            handler=handler,
            read_only=read_only,
            destructive=destructive,
            concurrency_safe=concurrency_safe,
            verb=verb,
            tags=tags,
            examples=examples,
            timeout=timeout,
            permission=permission,
            prompt=prompt,
            describe=describe,
            search_text=search_text,
            rank_weight=rank_weight,
            metadata=MappingProxyType({}) if metadata is None else metadata,
            required_params=required_params,
        )

    @property
    def is_lazy(self) -> bool:
        """True when the params model is built on first use rather than given."""
        return not isinstance(self.params, type)

    def parameter_text(self) -> str:
        """Parameter names and descriptions for search; `search_text` stands in for a lazy model."""
        if self.is_lazy:
            return self.search_text
        words = [self.search_text] if self.search_text else []
        for field_name, info in self.model.model_fields.items():
            words += [field_name, info.description or ""]
        return " ".join(words)

    def required_names(self) -> tuple[str, ...]:
        """The names the tool's JSON schema lists as required, without building a lazy model or any
        schema: `required_params` when the provider gave them, else read from a given model's fields;
        a lazy tool whose provider gave none has none known (empty)."""
        if self.required_params is not None:
            return self.required_params
        return () if self.is_lazy else required_fields(self.model)

    @cached_property
    def model(self) -> type[BaseModel]:
        """The params model, built now if it is lazy."""
        if isinstance(self.params, type):
            return self.params
        return self.params()

    @property
    def is_destructive(self) -> bool:
        """Whether a call needs a person's confirmation: `destructive`, or else not `read_only`."""
        if self.destructive is None:
            return not self.read_only
        return self.destructive

    @property
    def flags(self) -> tuple[str, ...]:
        """Flag names in a fixed order, for compact listings."""
        out = []
        if self.read_only:
            out.append("read_only")
        if self.is_destructive:
            out.append("destructive")
        if self.concurrency_safe:
            out.append("concurrency_safe")
        return tuple(out)

    @cached_property
    def json_schema(self) -> dict[str, Any]:
        """The params model's JSON schema as `get_tool_schema` shows it (builds a lazy model)."""
        return params_schema(self.model)

    @cached_property
    def is_async(self) -> bool:
        """Whether the handler is a coroutine function (else it runs in a worker thread)."""
        return inspect.iscoroutinefunction(self.handler)

    @cached_property
    def takes_context(self) -> bool:
        """Whether the handler takes the call's `ToolContext` as its second positional argument."""
        positional = [
            p
            for p in inspect.signature(self.handler).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        return len(positional) >= 2

    @property
    def example_requests(self) -> tuple[str, ...]:
        """What a user might say to need this tool, in the author's order."""
        return tuple(e for e in self.examples if isinstance(e, str))

    @property
    def example_calls(self) -> tuple[Mapping[str, Any], ...]:
        """Example parameters, in the author's order."""
        return tuple(e for e in self.examples if not isinstance(e, str))


def tool(
    *,
    category: str,
    action: str | None = None,
    name: str | None = None,
    params: type[BaseModel] | None = None,
    summary: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    destructive: bool | None = None,
    concurrency_safe: bool = False,
    tags: Sequence[str] = (),
    examples: Sequence[Example] = (),
    timeout: float | None = None,
    permission: PermissionCheck | None = None,
    prompt: str | None = None,
    describe: Describer | None = None,
) -> Callable[[F], F]:
    """Mark a function as a tool. The function is returned unchanged; register it with a Catalog.

    The function takes either plain typed parameters, described in its docstring (Google, NumPy or
    reST style) and called by keyword, or a params model instance (`params`, or else its first
    parameter's annotation, is the params model); either way a parameter annotated `ToolContext`
    gets the call's context. The docstring's first line is the summary and the rest the description
    (the whole docstring for a params model), unless given here. `examples` holds example requests
    (strings: what a user might say) and example calls (parameter mappings). `describe(params, ctx)`
    returns lines that tell the person approving a destructive call what it is about (an event's
    title and time for its id); it runs before they are asked, and a failure only leaves it out.
    """

    spec = ToolSpec(
        category=category,
        action=action,
        name=name,
        params=params,
        summary=summary,
        description=description,
        read_only=read_only,
        destructive=destructive,
        concurrency_safe=concurrency_safe,
        tags=tuple(tags),
        # One example given bare still counts as one, not as its characters or keys.
        examples=(examples,) if isinstance(examples, str | Mapping) else tuple(examples),
        timeout=timeout,
        permission=permission,
        prompt=prompt,
        describe=describe,
    )

    def mark(fn: F) -> F:
        setattr(fn, _SPEC_ATTR, spec)
        return fn

    return mark


def definition_from_function(fn: Callable[..., Any]) -> tuple[ToolDefinition | None, list[str]]:
    """Build the definition of a decorated function, or say every reason it cannot be built."""
    label = getattr(fn, "__qualname__", repr(fn))
    spec = getattr(fn, _SPEC_ATTR, None)
    if not isinstance(spec, ToolSpec):
        return None, [f"{label}: not decorated with @tool"]
    name = spec.name or fn.__name__
    problems: list[str] = []
    doc = inspect.getdoc(fn) or ""
    summary = doc.strip().splitlines()[0] if doc.strip() else ""
    description, handler, examples = doc, fn, spec.examples
    params: Any = spec.params
    undescribed = "the model reads it"
    if params is None:
        try:
            parameters = list(inspect.signature(fn).parameters.values())
            hints = get_type_hints(fn, include_extras=True)
        except (NameError, TypeError, ValueError) as exc:
            problems.append(
                f"{label}: cannot read its annotations ({exc}); define the types they name at module level"
            )
            parameters, hints = [], {}
        params = params_model_of(parameters, hints)
        if params is None and not problems:
            plain = read_signature(fn, parameters, hints, PARAMS_CONFIG)
            problems.extend(f"{name}: {p}" for p in plain.problems)
            summary, description, handler = plain.summary, plain.description, plain.handler
            params, undescribed = plain.model, plain.undescribed
        if params is None:  # unusable: checked as taking nothing, so the other problems still show
            params = NoParams
            examples = tuple(e for e in examples if isinstance(e, str))
    verb = spec.action or _verb_from_name(name)
    definition = ToolDefinition(
        name=name,
        category=spec.category,
        action=normalize_action(verb) or verb,
        verb=verb,
        summary=spec.summary or summary,
        description=spec.description or description,
        params=params,
        handler=handler,
        read_only=spec.read_only,
        destructive=spec.destructive,
        concurrency_safe=spec.concurrency_safe,
        tags=spec.tags,
        examples=examples,
        timeout=spec.timeout,
        permission=spec.permission,
        prompt=spec.prompt,
        describe=spec.describe,
    )
    problems.extend(definition_problems(definition, undescribed=undescribed))
    return (None if problems else definition), problems


def _verb_from_name(name: str) -> str:
    for part in name.split("_"):
        if normalize_action(part):
            return part
    return name


CallCheck = Callable[[Mapping[str, Any]], object]
"""Checks one call's arguments, raising Pydantic's `ValidationError` when they do not fit."""


def definition_problems(
    d: ToolDefinition, *, undescribed: str = "the model reads it", check_call: CallCheck | None = None
) -> list[str]:
    """Every reason a definition is unusable; empty when it is fine.

    `undescribed` is the hint given for a parameter without a description. A lazy tool's example
    calls are checked with `check_call` when its provider gives one (a check that builds no model,
    such as `schema_params.arguments_check`); a given model checks them itself.
    """
    label = d.name if isinstance(d.name, str) and d.name else "<unnamed tool>"
    problems: list[str] = []

    def bad(msg: str) -> None:
        problems.append(f"{label}: {msg}")

    if (p := name_problem(d.name)) is not None:
        bad(p)
    if not isinstance(d.category, str) or not NAME_PATTERN.match(d.category):
        bad(f"category {d.category!r} must match [a-z0-9_]+")
    if d.action not in ACTIONS:
        bad(f"action {d.action!r} is not in the vocabulary ({', '.join(ACTIONS)}); map the verb onto one")
    if not d.summary or not d.summary.strip():
        bad("missing summary (the docstring's first line or summary=...)")
    elif "\n" in d.summary.strip() or len(d.summary) > MAX_SUMMARY_LENGTH:
        bad(f"summary must be one line of at most {MAX_SUMMARY_LENGTH} characters")
    if not d.description or not d.description.strip():
        bad("missing description (a docstring or description=...)")
    if d.read_only and d.destructive:
        bad("cannot be both read_only and destructive")
    if not callable(d.handler):
        bad("handler is not callable")
    if not 0 < d.rank_weight <= 1:
        bad("rank_weight must be in (0, 1]")
    if d.timeout is not None and d.timeout <= 0:
        bad("timeout must be positive")
    if d.is_lazy and callable(d.params):
        # Built on first use by a generator that has its own tests; checking it here would build it.
        return problems + [f"{label}: {p}" for p in _example_problems(d.examples, check_call)]
    if not (isinstance(d.params, type) and issubclass(d.params, BaseModel)):
        bad(f"params must be a pydantic BaseModel subclass, got {d.params!r}")
        return problems + [f"{label}: {p}" for p in _example_problems(d.examples, None)]
    if d.params.model_config.get("extra") != "forbid":
        bad(f"params model {d.params.__name__} must set extra='forbid' (use PARAMS_CONFIG)")
    for field_name, info in d.params.model_fields.items():
        if not (info.description and info.description.strip()):
            bad(f"parameter {field_name!r} has no description ({undescribed})")
    try:
        params_schema(d.params)
    except Exception as exc:  # any failure here is a schema problem to report, not to crash on
        bad(f"params model {d.params.__name__} has no JSON schema ({type(exc).__name__}: {exc})")
    model = d.params
    return problems + [
        f"{label}: {p}" for p in _example_problems(d.examples, lambda call: validate_arguments(model, call))
    ]


def _example_problems(examples: Sequence[object], check_call: CallCheck | None) -> list[str]:
    """What is wrong with a tool's examples; its calls are checked with `check_call` when given."""
    problems = []
    requests = [e for e in examples if isinstance(e, str)]
    if len(requests) > MAX_EXAMPLE_REQUESTS:
        problems.append(
            f"{len(requests)} example requests; at most {MAX_EXAMPLE_REQUESTS} (keep the most varied)"
        )
    for i, example in enumerate(examples):
        if isinstance(example, str):
            if not 0 < len(example.strip()) <= MAX_REQUEST_LENGTH:
                problems.append(
                    f"example {i} must be a request of 1 to {MAX_REQUEST_LENGTH} characters (what a user might say)"
                )
        elif not isinstance(example, Mapping):
            problems.append(f"example {i} must be a request (a string) or a call (a mapping of parameters)")
        elif check_call is not None:
            try:  # as the model would send it: JSON, strictly
                check_call(example)
            except ValidationError as exc:
                first = exc.errors(include_url=False)[0]
                where = ".".join(map(str, first["loc"])) or "(parameters)"
                problems.append(
                    f"example {i} does not validate: {where}: {first['msg']} ({exc.error_count()} error(s))"
                )
            except PydanticSerializationError:
                problems.append(f"example {i} is not JSON data")
    return problems
