"""Plain typed functions as tools: the params model from the signature, the words from the docstring.

`def greet(name: str, excited: bool = False) -> str` with a Google, NumPy or reST docstring becomes
a params model with the fields `name` and `excited`, a summary, a description, and a handler of the
usual `(params, ctx)` shape that calls the function with keyword arguments. A parameter annotated
`ToolContext` is injected, never shown to the model.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Union

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from .context import ToolContext

_UNDESCRIBED = (
    "describe it under Args in the docstring of {fn}(), or with Annotated[..., Field(description=...)]"
)


@dataclass(frozen=True)
class Signature:
    """What a plain function says about itself; `problems` are registration errors, without a label."""

    model: type[BaseModel] | None
    handler: Callable[..., Any]
    summary: str
    description: str
    undescribed: str
    """What to do about a parameter without a description (the registration error's hint)."""
    problems: list[str] = field(default_factory=list)


def is_context(hint: Any) -> bool:
    """True for `ToolContext` and `ToolContext | None`: the parameter the gateway injects."""
    if hint is ToolContext:
        return True
    if typing.get_origin(hint) in (Union, types.UnionType):
        return [a for a in typing.get_args(hint) if a is not type(None)] == [ToolContext]
    return False


def params_model_of(parameters: Sequence[inspect.Parameter], hints: dict[str, Any]) -> type[BaseModel] | None:
    """The params model of a function in the params-model form, or None for a plain function.

    The params-model form is `(params: Model)` or `(params: Model, ctx)`: the first parameter is
    annotated with a Pydantic model (not `Annotated`), and at most a context follows it.
    """
    if not parameters:
        return None
    first = hints.get(parameters[0].name)
    if not (isinstance(first, type) and issubclass(first, BaseModel)):
        return None
    rest = parameters[1:]
    if not rest or (len(rest) == 1 and (rest[0].name not in hints or is_context(hints[rest[0].name]))):
        return first
    return None


def read_signature(
    fn: Callable[..., Any], parameters: Sequence[inspect.Parameter], hints: dict[str, Any], config: ConfigDict
) -> Signature:
    """The params model, handler, summary and description of a plain function, and what is wrong."""
    label = getattr(fn, "__name__", "function")
    problems: list[str] = []
    try:
        doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    except docstring_parser.ParseError as exc:
        problems.append(f"the docstring of {label}() cannot be read ({exc})")
        doc = docstring_parser.Docstring()
    described = {p.arg_name: " ".join((p.description or "").split()) for p in doc.params}
    fields: dict[str, Any] = {}
    slots: list[tuple[str, bool, bool]] = []  # (name, injected context, positional only)
    for p in parameters:
        hint = hints.get(p.name, p.empty)
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            stars = "*" if p.kind == p.VAR_POSITIONAL else "**"
            problems.append(
                f"{label}() takes {stars}{p.name}: name each parameter, so the model can be told of it"
            )
            continue
        slots.append((p.name, is_context(hint), p.kind == p.POSITIONAL_ONLY))
        if is_context(hint):
            continue
        if hint is p.empty:
            problems.append(
                f"parameter {p.name!r} of {label}() has no type annotation (the schema needs one)"
            )
            hint = Any
        if p.name.startswith("_") or hasattr(BaseModel, p.name):
            problems.append(f"parameter {p.name!r} of {label}() is a name pydantic reserves; rename it")
            continue
        default = ... if p.default is p.empty else p.default
        if described.get(p.name) and not _has_description(hint, default):
            hint = Annotated[hint, Field(description=described[p.name])]
        fields[p.name] = (hint, default)
    names = {name for name, _, _ in slots}
    for name in described:
        if name not in names:
            problems.append(
                f"the docstring of {label}() describes {name!r}, which is not one of its parameters"
            )
    model = None
    try:
        model = create_model(f"{label}_params", __config__=config, __module__=fn.__module__, **fields)
    except Exception as exc:  # an unsupported type is a registration problem, not a crash
        problems.append(f"no params model can be made for {label}() ({type(exc).__name__}: {exc})")
    return Signature(
        model=model,
        handler=_keyword_handler(fn, tuple(slots)),
        summary=doc.short_description or "",
        description=_description(doc),
        undescribed=_UNDESCRIBED.format(fn=label),
        problems=problems,
    )


def _has_description(hint: Any, default: Any) -> bool:
    """True when the parameter brings its own description (Annotated[..., Field(...)] or `= Field(...)`)."""
    infos = [default, *(getattr(hint, "__metadata__", ()) if typing.get_origin(hint) is Annotated else ())]
    return any(isinstance(info, FieldInfo) and info.description for info in infos)


def _description(doc: docstring_parser.Docstring) -> str:
    """The docstring without its parameter section (the schema carries that), keeping what it returns."""
    head = doc.short_description or ""
    if doc.long_description:
        head += ("\n\n" if doc.blank_after_short_description else "\n") + doc.long_description
    if doc.returns is not None and doc.returns.description:
        head += f"\n\nReturns: {doc.returns.description}"
    return head


def _keyword_handler(fn: Callable[..., Any], slots: tuple[tuple[str, bool, bool], ...]) -> Callable[..., Any]:
    """A handler of the usual `(params, ctx)` shape that calls `fn` with one argument a parameter."""

    def arguments(params: BaseModel, ctx: ToolContext) -> tuple[list[Any], dict[str, Any]]:
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for name, context, positional in slots:
            value = ctx if context else getattr(params, name)
            if positional:
                args.append(value)
            else:
                kwargs[name] = value
        return args, kwargs

    handler: Callable[..., Any]
    if inspect.iscoroutinefunction(fn):

        async def call_async(params: BaseModel, ctx: ToolContext) -> Any:
            args, kwargs = arguments(params, ctx)
            return await fn(*args, **kwargs)

        handler = call_async
    else:

        def call(params: BaseModel, ctx: ToolContext) -> Any:
            args, kwargs = arguments(params, ctx)
            return fn(*args, **kwargs)

        handler = call
    # Named like the function (logs, listings), but no __wrapped__: the engine reads this signature.
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        if hasattr(fn, attribute):
            setattr(handler, attribute, getattr(fn, attribute))
    return handler
