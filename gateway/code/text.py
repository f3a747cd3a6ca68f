"""Every text the model reads about a program: run_code's description, its errors, its result.

Designed once here, as `gateway/rendering.py` designs the meta-tools' texts, and pinned by
snapshot tests. Each error says what the program had done when it stopped: calls already made
ran, and the model must not make them again.

A program finds tools as Python signatures (`signature`): a model that writes Python reads one
line per tool, and writes its calls from it without a separate turn for the JSON schema.
"""

from __future__ import annotations

import keyword
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..context import ErrorInfo
from ..definition import ToolDefinition
from ..rendering import safe_text, to_jsonable

NAME = "run_code"

DESCRIPTION = (
    "Run a short Python program that calls tools; only its result comes back (the value of its last "
    "line). In it: discover(query, limit=10)['tools'] finds tools, as Python signatures; schema(name) "
    "describes one in full; call(name, args) or call(name, **args) runs one and returns its output. A "
    "failed call raises ToolError; a call the user declines raises Declined. A destructive call pauses "
    "the program with a pending_id: once the user approves, call run_code with confirmation set to it, "
    "and it resumes where it stopped. No files, network or imports beyond json, re, math and datetime."
)
ALONE_DESCRIPTION = (
    "Run a short Python program over a catalog of tools, which are not listed here; only its result "
    "comes back (the value of its last line), so return just what you need. In it: discover(query, "
    "limit=10)['tools'] finds tools, as Python signatures; schema(name) describes one in full; "
    "call(name, args) or call(name, **args) runs one. Never guess a tool's name: a first program "
    "finds the tools, the next calls them. A failed call raises ToolError; a declined one raises "
    "Declined. A destructive call pauses the program with a pending_id: once the user approves, call "
    "run_code with confirmation set to it, and it resumes where it stopped. No files, network or "
    "imports beyond json, re, math and datetime."
)
"""run_code's description when it is offered alone (`[code] only`): it is the model's only way in."""
CODE_DESCRIPTION = "The program; the value of its last line is the result."
CONFIRMATION_DESCRIPTION = "The pending_id, once the user approved: resumes the program, or runs the plan."

# -- found tools, as a program calls them ---------------------------------------------------------

_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
_MAX_LITERALS = 12  # a longer enum reads as its type; schema(name) lists every value
_MAX_DEFAULT = 40
MAX_OPTIONAL = 12
"""Optional parameters a found tool's signature shows (generated API tools may have dozens)."""


def signature(d: ToolDefinition) -> str:
    """One tool as a program calls it: `name(required, ..., optional=default, ...)  # summary`.

    Rendered from the JSON schema the arguments are validated against: the required parameters
    first, then the optional ones with their defaults (`= ...`: one the tool works out), typed
    unless the default says the type (`calendar_id='primary'`); enums are `Literal`s. Past
    `MAX_OPTIONAL` optional parameters, `**more` stands for the rest, which `schema(name)` lists. A
    tool that pauses for approval says `Destructive.` after its summary.
    """
    required, optional = _parameters(d)
    parts = [*required, *optional[:MAX_OPTIONAL]]
    summary = _sentence(" ".join(safe_text(d.summary, 300).split()))
    if len(optional) > MAX_OPTIONAL:
        parts.append("**more")
        more = len(optional) - MAX_OPTIONAL
        summary += f" {more} more optional parameter{'s' if more > 1 else ''}: schema(name)."
    if d.is_destructive:
        summary += " Destructive."
    return f"{d.name}({', '.join(parts)})  # {summary}"


def _parameters(d: ToolDefinition) -> tuple[list[str], list[str]]:
    """The required parameters and the optional ones, each as the signature shows it."""
    schema = d.json_schema
    properties: Mapping[str, Any] = schema.get("properties", {})
    names = [n for n in schema.get("required", ()) if n in properties]
    defs = schema.get("$defs", {})
    filled = _filled(d)
    required = [f"{_name(n)}: {_type(properties[n], defs)}" for n in names]
    optional = []
    for n, prop in properties.items():
        if n in names:
            continue
        kind = _type(prop, defs)
        if "default" in prop and type(prop["default"]).__name__ == kind:  # 'primary' says str
            optional.append(f"{_name(n)}={_default(prop['default'])}")
            continue
        default = _default(prop["default"]) if "default" in prop else filled.get(n, "...")
        optional.append(f"{_name(n)}: {kind} = {default}")
    return required, optional


def stub(d: ToolDefinition) -> str:
    """schema()'s answer inside a program: the tool as a Python stub with a Google-style docstring.

    Its signature, its description, whether it pauses for approval, each parameter's description
    (with a number's bounds and the values of an enum too long for its `Literal`), and its first
    example call written as the program would write it.
    """
    required, optional = _parameters(d)
    lines = [
        f"def {d.name}({', '.join([*required, *optional])}):",
        '    """' + _indented(d.description.strip() or d.summary),
    ]
    if d.is_destructive:
        lines += ["", "    Destructive: the user approves each call; the program pauses until then."]
    documented = [
        f"        {_name(n)}: {_indented(about, 12)}"
        for n, prop in d.json_schema.get("properties", {}).items()
        if (about := _about(prop))
    ]
    if documented:
        lines += ["", "    Args:", *documented]
    if d.example_calls:
        arguments = [
            f"{k}={v!r}" if _name(k) == k else f"**{{{k!r}: {v!r}}}"
            for k, v in to_jsonable(d.example_calls[0]).items()
        ]
        lines += ["", f"    Example: call({', '.join([repr(d.name), *arguments])})"]
    return "\n".join(lines) + '\n    """'


def _about(prop: Mapping[str, Any]) -> str:
    """A parameter's description with what its annotation cannot say: a number's bounds, long enums."""
    text = " ".join(str(prop.get("description", "")).split())
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None and high is not None:
        text += f" ({low} to {high})"
    elif low is not None or high is not None:
        text += f" (at least {low})" if low is not None else f" (at most {high})"
    values = prop.get("enum")
    if isinstance(values, list) and len(values) > _MAX_LITERALS:
        text += f" One of: {', '.join(map(repr, values))}."
    return text.strip()


def _indented(text: str, by: int = 4) -> str:
    """Text inside the docstring: its own lines indented, and unable to end it early."""
    lines = [safe_text(line, 2000).replace('"""', "'''").rstrip() for line in text[:8000].splitlines()]
    return "\n".join([lines[0], *(" " * by + line if line else "" for line in lines[1:])]) if lines else ""


def _name(name: str) -> str:
    return name if name.isidentifier() and not keyword.iskeyword(name) else repr(safe_text(name, 80))


def _filled(d: ToolDefinition) -> dict[str, str]:
    """Defaults the JSON schema leaves out, by schema name: None, and an empty list or dict made fresh."""
    out = {}
    for name, info in d.model.model_fields.items():
        if info.is_required():
            continue
        factory = info.default_factory
        if factory is None and info.default is None:
            out[info.alias or name] = "None"
        elif factory in (list, dict):
            out[info.alias or name] = repr(factory())
    return out


def _default(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_DEFAULT else "..."


def _type(prop: Mapping[str, Any], defs: Mapping[str, Any], depth: int = 0) -> str:
    """A JSON schema as a Python type annotation (what a program passes)."""
    ref = prop.get("$ref")
    if isinstance(ref, str) and depth < 8:
        target = defs.get(ref.rsplit("/", 1)[-1], {})
        return _type(target, defs, depth + 1)
    values = prop["enum"] if "enum" in prop else [prop["const"]] if "const" in prop else None
    if isinstance(values, list) and 0 < len(values) <= _MAX_LITERALS:
        return f"Literal[{', '.join(_default(v) for v in values)}]"
    options = prop.get("anyOf") or prop.get("oneOf")
    if isinstance(options, list) and options and depth < 8:
        return " | ".join(dict.fromkeys(_type(o, defs, depth + 1) for o in options))
    kind = prop.get("type")
    if isinstance(kind, list):
        return " | ".join(dict.fromkeys(_type({**prop, "type": k}, defs, depth + 1) for k in kind))
    if kind == "array":
        items = prop.get("items")
        return f"list[{_type(items, defs, depth + 1)}]" if isinstance(items, dict) and items else "list"
    if kind == "object" or "properties" in prop:
        return "dict"
    return _TYPES.get(kind, "Any") if isinstance(kind, str) else "Any"


OVERVIEW_NEXT = (
    "Call discover(query) with a few words of what you want to do, or discover(categories=[...]) or "
    "discover(actions=[...]), to list matching tools."
)
"""The next step of discover()'s overview (no query) inside a program."""
NOTHING_MATCHED_NEXT = (
    "Try other words (a verb and an object, e.g. 'delete event'), drop the filters, or browse a "
    "category with discover(categories=[...])."
)
"""The next step of a discover() page that found nothing, inside a program."""
_APPROVAL_CODES = (
    "confirmation_invalid",
    "confirmation_mismatch",
    "confirmation_expired",
    "confirmation_used",
)


def found(page: Mapping[str, Any], definitions: Mapping[str, ToolDefinition]) -> dict[str, Any]:
    """discover()'s answer inside a program: the page's tools as signatures.

    `definitions`: the page's tools by name (as the caller may see them). The page's next step
    speaks of the meta-tools: an overview's or a "nothing matched" page's says the same in the
    program's own words, and a page with tools has none (its signatures are how to call them).
    """
    if "tools" not in page:  # the overview: no query, no filters
        return {**page, "next_step": OVERVIEW_NEXT}
    if not page["tools"]:
        return {**page, "next_step": NOTHING_MATCHED_NEXT}
    out: dict[str, Any] = {
        "tools": [signature(definitions[t["name"]]) for t in page["tools"] if t["name"] in definitions]
    }
    out.update((k, v) for k, v in page.items() if k not in ("tools", "next_step"))
    return out


def done(calls: Sequence[str]) -> str:
    """What a program had done: the calls that ran, by name, in order of first use."""
    if not calls:
        return "No call had run."
    counts = Counter(calls)
    names = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in counts.items())
    return f"Done before it stopped: {len(calls)} call{'s' if len(calls) > 1 else ''} ({names})."


def _sentence(text: str) -> str:
    text = text.strip().rstrip(":")
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _where(line: int | None, source: str | None) -> str:
    if line is None:
        return ""
    return f"Line {line}" + (f" `{safe_text(source.strip(), 120)}`" if source else "") + ": "


def syntax_error(line: int | None, source: str | None, message: str) -> ErrorInfo:
    return ErrorInfo(
        "program_syntax_error",
        f"{_where(line, source)}SyntaxError: {safe_text(message, 300)}",
        "Fix the program and run it again.",
    )


def program_error(
    line: int | None,
    source: str | None,
    *,
    error_type: str,
    message: str,
    calls: Sequence[str],
    failed: str | None,
) -> ErrorInfo:
    """A runtime error the program did not handle; `failed`: the tool call that raised it, if one did."""
    if failed and error_type in ("RuntimeError", "PermissionError"):  # raised by that call
        error_type = "ToolError" if error_type == "RuntimeError" else "Declined"
    return ErrorInfo(
        "program_error",
        f"{_where(line, source)}{_sentence(f'{error_type}: {safe_text(message, 500)}')} {done(calls)}",
        "Fix the program and run it again; do not repeat calls that already ran.",
    )


def limit_reached(what: str, calls: Sequence[str]) -> ErrorInfo:
    return ErrorInfo(
        "program_limit",
        f"The program stopped: {what}. {done(calls)}",
        "Do less in one program (fewer calls, smaller results), or split the work; do not repeat calls "
        "that already ran.",
    )


def crashed(calls: Sequence[str]) -> ErrorInfo:
    return ErrorInfo(
        "program_crashed",
        f"The sandbox stopped the program unexpectedly. {done(calls)}",
        "Run a simpler program; do not repeat calls that already ran.",
    )


def busy(seconds: float) -> ErrorInfo:
    return ErrorInfo(
        "program_busy",
        f"Every sandbox was busy for {seconds:g} seconds; the program did not start.",
        "Try again in a moment.",
    )


def tool_error(tool: str, error: ErrorInfo) -> str:
    """The message of the ToolError a failed call raises inside the program."""
    problems = "; ".join(f"{p.loc}: {p.msg}" for p in error.problems)
    text = f"{tool}: {error.code}: {error.message}" + (f" ({problems})" if problems else "")
    if error.suggestions:
        text += f" Did you mean: {', '.join(error.suggestions)}?"
    return f"{text} Next: {_next_step(tool, error)}"


def _next_step(tool: str, error: ErrorInfo) -> str:
    """An error's next step in the program's words: discover, schema and call, not the meta-tools
    (which, with `[code] only`, the model does not have). Other next steps name no tool."""
    if error.code == "unknown_tool":
        if error.suggestions:
            return "Use one of those names if it fits; otherwise find the tool with discover(query)."
        return "Find the right tool with discover(query); never guess a tool name."
    if error.code == "invalid_arguments":  # a catalog tool's: a program cannot call the meta-tools
        name = repr(safe_text(tool, 80))
        return f"Fix the listed problems and call({name}, ...) again; schema({name}) lists every parameter."
    if error.code == "tool_changed":  # a fronted tool changed on its server since it was found
        return "Find the current tools with discover(query); do not call this one again unchanged."
    if error.code in _APPROVAL_CODES:  # an approval that cannot be used (a resumed program's call)
        return "Make the call again to ask the user for a new approval."
    return error.next_step


def declined(tool: str) -> str:
    return f"{tool}: the user declined this call."


def not_paused(elsewhere: bool) -> ErrorInfo:
    """No paused program here; `elsewhere`: its confirmation exists, so another process paused it."""
    if elsewhere:  # a restart, or a replica that did not run it: one process cannot tell which
        return ErrorInfo(
            "program_ended",
            "That program is not paused in this gateway process: a paused program lives only in the "
            "process that ran it, so a restart ended it, or this call reached another replica. Its "
            "calls before the pause ran; the paused one did not.",
            "Tell the user; run the rest of the work again as a new program if they still want it.",
        )
    return ErrorInfo(
        "program_not_paused",
        "No paused program has that confirmation id (it finished, expired, or the id is wrong).",
        "Run the program again without confirmation to get a new pending id.",
    )


def principal_changed() -> ErrorInfo:
    """The program's own principal resuming it with other roles, agent or toolsets than it ran with."""
    return ErrorInfo(
        "program_principal_changed",
        "That program was paused by this principal with other roles or toolsets than this call has "
        "(another token, or another endpoint): a program resumes only as it was run. It stays paused "
        "until its approval expires.",
        "Resume it with the token and endpoint it was run with; or, if the change was meant, tell the "
        "user and run the rest of the work again as a new program.",
    )


def expired(calls: Sequence[str]) -> ErrorInfo:
    return ErrorInfo(
        "program_expired",
        f"The program waited for an approval that expired, and has ended. {done(calls)}",
        "Ask the user whether to run the rest again; run it as a new program if so.",
    )


def still_pending(message: str) -> ErrorInfo:
    return ErrorInfo(
        "confirmation_pending",
        f"{message} The program is still paused.",
        "Show the user the preview and wait for their approval before calling run_code again with this id.",
    )


def needs_code() -> ErrorInfo:
    return ErrorInfo(
        "invalid_arguments",
        "run_code needs code (a program), or confirmation (the pending_id of a paused program).",
        "Call run_code with code set to a Python program.",
    )


def other_program() -> ErrorInfo:
    return ErrorInfo(
        "confirmation_mismatch",
        "That confirmation belongs to a paused program with different code.",
        "Call run_code with only confirmation set to resume that program.",
    )


# -- plans: a program's writes approved as one set ---------------------------------------------

PLAN_DESCRIPTION = "Hold destructive calls (each returns {'planned': n}) for the user to approve as one set."


def planned(n: int) -> dict[str, int]:
    """What a program drawing a plan gets from its n-th write: a placeholder, nothing ran."""
    return {"planned": n}


def plan_declined(writes: int) -> ErrorInfo:
    return ErrorInfo(
        "declined",
        f"The user declined the plan: none of its {writes} write{'s' if writes != 1 else ''} ran.",
        "Do not retry; ask the user what to do instead.",
    )


def not_made_sentence(not_made: Sequence[Any]) -> str:
    """What became of approved writes a plan's program did not make when it ran for real."""
    n = len(not_made)
    return (
        f"{n} approved write{'s' if n != 1 else ''} of the plan {'were' if n != 1 else 'was'} not made "
        f"this time, and will not run: {'; '.join(p.preview for p in not_made)}"
    )


def plan_report(plan_id: str, not_made: Sequence[Any]) -> dict[str, Any]:
    """The `plan` part of a program's answer when it ran an approved plan."""
    report: dict[str, Any] = {"pending_id": plan_id}
    if not_made:
        report["not_made"] = [p.preview for p in not_made]
    return report
