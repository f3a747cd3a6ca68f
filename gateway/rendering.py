"""The text the model sees: designed once, rendered here, pinned by snapshot tests.

Every result is a compact JSON object. Errors carry a stable `code`, a `message`, the
argument `problems` as `{loc, msg}` and one imperative `next_step`; never a URL, a
stack trace or the raw input that caused them.
"""

from __future__ import annotations

import json
import logging
import math
import re
import unicodedata
from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict, cast, final

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from .context import ErrorInfo, PendingConfirmation, Problem, ToolResult
from .definition import ToolDefinition
from .errors import ErrorCode, FailureCode, RateLimited, ToolFailed, ToolInputError, UnknownTool

MAX_OUTPUT_CHARS = 60_000
_MAX_LOC = 80
_MAX_MSG = 200
# What a terminal or a reader must never be handed raw: C0 controls (ESC among them), DEL, C1
# controls (0x9b is an 8-bit CSI), and characters that reorder or hide text (bidi overrides and
# isolates such as U+202E, zero-width characters, the soft hyphen, Unicode tags).
HIDDEN_CHARACTERS = "\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f{HIDDEN_CHARACTERS}]")
_CONTROL_BUT_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{HIDDEN_CHARACTERS}]")
# What `shown` escapes: controls, format characters (bidi, zero-width, tags), surrogates, separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

NEXT_STEPS: dict[FailureCode, str] = {
    # What the model should do after each failure (a test checks that every code has its own).
    "not_found": "Check the id: search or list to find the right item, then call again with it.",
    "conflict": "Read the current state and adapt the call; retrying it unchanged will fail again.",
    "invalid": "Change the request as the message says; retrying it unchanged will fail again.",
    "permission_denied": "Do not retry; tell the user this action is not permitted.",
    "unavailable": "The service is unavailable; tell the user and try again later.",
    "timeout": "The tool took too long; narrow the request or tell the user it timed out.",
    "declined": "Do not retry; ask the user what to do instead.",
    "rate_limited": "Wait a while before calling it again, or do something else meanwhile; "
    "tell the user if the task cannot wait.",
    "tool_changed": "Call discover_tools to find the current tools; do not call this one again unchanged.",
    "not_connected": "Tell the user to connect their own account to this service as the message says; "
    "do not retry until they have.",
    "internal": "The tool failed unexpectedly; do not retry unchanged, tell the user.",
}


def safe_text(value: object, limit: int) -> str:
    """Model-supplied text made safe to echo: control characters dropped, length capped."""
    text = _CONTROL.sub("", str(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _escape(match: re.Match[str]) -> str:
    return _escape_char(match.group())


def _escape_char(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(value: object, *, lines: bool = False) -> str:
    """Text from a model, a client or an outside description, made safe to show a person.

    Every control character (C0 with ESC, DEL, C1), every format character that reorders or hides
    text (bidi overrides like U+202E, zero-width and tag characters) and every line or paragraph
    separator becomes a visible escape such as `\\x1b`: a terminal never runs it and a reader sees
    it was there. The one helper for every place such text is printed or logged (the command line,
    approval previews, log lines); the console's pages escape HTML besides.

    Args:
        value: the text (anything else is shown as `str(value)`).
        lines: keep newlines and tabs (a multi-line preview or description); otherwise they are
            escaped too, so one value cannot forge the next line of a table.
    """
    text = str(value)
    if text.isprintable():  # no control, format or separator character but the space
        return text
    keep = "\n\t" if lines else ""
    return "".join(
        _escape_char(ch) if ch not in keep and unicodedata.category(ch) in _UNSAFE_CATEGORIES else ch
        for ch in text
    )


class ShownFormatter(logging.Formatter):
    """Log lines whose message is `shown` (it may quote a model, a client or an outside server)."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        """The record's message, escaped as `shown` escapes it (line breaks kept)."""
        record.message = shown(record.message, lines=True)
        return super().formatMessage(record)


def shown_json(text: str) -> str:
    """JSON text (already dumped) safe for a terminal: the characters `shown` escapes, as JSON escapes.

    `json.dumps` escapes C0 controls already; C1 controls and bidi characters it leaves raw
    unless every non-ASCII character is escaped, which would garble every accented name.
    """

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        if code < 0x10000:
            return f"\\u{code:04x}"
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"

    return _CONTROL_BUT_LINES.sub(escape, text)


# What to send instead, for a value of the wrong JSON type (arguments are validated strictly).
_SEND = {"bool_type": "true or false", "int_type": "a whole number", "float_type": "a number"}


def _json_kind(value: object) -> str:
    kinds = (
        (str, "a string"),
        (bool, "a boolean"),
        (float, "a decimal"),
        (int, "a number"),
        (list, "an array"),
    )
    return next((kind for t, kind in kinds if isinstance(value, t)), "null" if value is None else "an object")


def cut(text: str, limit: int) -> str:
    """`text` if it fits, else its head up to a word boundary and '...'."""
    if len(text) <= limit:
        return text
    head = text[: limit - 3]
    space = head.rfind(" ")
    if space > limit // 2:
        head = head[:space]
    return head.rstrip(" ,;:") + "..."


def problems_from_validation(exc: ValidationError, model_fields: Sequence[str]) -> tuple[Problem, ...]:
    """Pydantic errors as `{loc, msg}` pairs, without echoing the offending input (only its JSON type)."""
    problems = []
    for error in exc.errors(include_url=False):
        loc = ".".join(str(part) for part in error["loc"]) or "(parameters)"
        msg = error["msg"]
        if error["type"] == "extra_forbidden":
            allowed = ", ".join(model_fields) or "none"
            msg = f"Unknown parameter; allowed parameters: {allowed}"
        elif error["type"] == "missing":
            msg = "Required parameter is missing"
        elif error["type"] in _SEND:
            kind = _json_kind(error.get("input"))
            unquote = " without quotes" if kind == "a string" else ""
            msg = f"{msg}, not {kind}: send {_SEND[error['type']]}{unquote}"
        problems.append(Problem(safe_text(loc, _MAX_LOC), safe_text(msg, _MAX_MSG)))
    return tuple(problems)


def to_jsonable(value: Any) -> Any:
    """Handler output (models, dataclasses, datetimes) as plain JSON data."""
    return to_jsonable_python(value, fallback=str)


@final
class ProblemEntry(TypedDict):
    """One argument problem: where (`loc`, a dotted path) and what (`msg`)."""

    loc: str
    msg: str


@final
class ErrorBody(TypedDict):
    """What the model reads of an error, in this order (docs/errors.md)."""

    code: ErrorCode
    message: str
    problems: NotRequired[list[ProblemEntry]]
    did_you_mean: NotRequired[list[str]]
    retry_after_seconds: NotRequired[int]
    next_step: str


@final
class ErrorAnswer(TypedDict):
    """A failed call's whole answer: `{"error": {...}}`."""

    error: ErrorBody


def error_payload(error: ErrorInfo) -> ErrorAnswer:
    """An error as the JSON object the model reads (`code`, `message`, `problems`, `did_you_mean`, ..., `next_step`)."""
    # Built as a plain dict so the keys keep the order above (a TypedDict's constructor wants every
    # required key at once, `next_step` among them, which must come last).
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.problems:
        body["problems"] = [{"loc": p.loc, "msg": p.msg} for p in error.problems]
    if error.suggestions:
        body["did_you_mean"] = list(error.suggestions)
    if error.retry_after_seconds is not None:
        body["retry_after_seconds"] = error.retry_after_seconds
    body["next_step"] = error.next_step
    return {"error": cast(ErrorBody, body)}


INVOKE_PAUSED = (
    "Show the user the preview and ask them to approve it. After they approve, call invoke_tool "
    "again with the same tool_name and parameters and confirmation set to the pending_id."
)
PROGRAM_PAUSED = (
    "Show the user the preview and ask them to approve it. After they approve, call run_code again with "
    "confirmation set to the pending_id; the program resumes where it stopped."
)

PLAN_DRAWN = (
    "Show the user the plan and ask them to approve it: all of its writes, some, or none. Once they "
    "decided, call run_code again with confirmation set to the pending_id: the program runs for real, "
    "and only the writes they approved run."
)

PLAN_STOPPED = (
    "The program stopped with an error after these writes (the preview ends with it). If the error "
    "is the program's own, fix it and draw the plan again. If it needed a write's real result, ask the "
    "user to approve these writes, then call run_code with confirmation set to the pending_id: any "
    "write after them is asked about on its own."
)


def _next_step(pending: PendingConfirmation, tool: str) -> str:
    if pending.plan is not None and pending.plan == pending.pending_id:  # a program's plan
        return PLAN_STOPPED if "stopped" in pending.parameters else PLAN_DRAWN
    return PROGRAM_PAUSED if tool == "run_code" else INVOKE_PAUSED


def result_payload(result: ToolResult) -> Any:
    """The JSON value the model receives for a result."""
    if result.status == "error" and result.error is not None:
        return error_payload(result.error)
    if result.status == "confirmation_required" and result.pending is not None:
        return {
            "status": "confirmation_required",
            "pending_id": result.pending.pending_id,
            "preview": result.pending.preview,
            "next_step": _next_step(result.pending, result.tool),
        }
    return to_jsonable(result.output)


def render(result: ToolResult) -> str:
    """The result as the text of a tool-result message."""
    text = json.dumps(result_payload(result), ensure_ascii=False, separators=(",", ":"))
    if len(text) > MAX_OUTPUT_CHARS:
        return json.dumps(
            {
                "truncated": True,
                "original_chars": len(text),
                "head": text[:MAX_OUTPUT_CHARS],
                "next_step": "Ask for less: narrow the query, lower max_results or request one item.",
            },
            ensure_ascii=False,
        )
    return text


# -- errors the model can act on ----------------------------------------------------------------


def error_info(
    exc: ToolInputError | ToolFailed, d: ToolDefinition | None = None, *, meta: bool = False
) -> ErrorInfo:
    """A tool's or the gateway's exception as the error the model reads."""
    if isinstance(exc, UnknownTool):
        step = "Call discover_tools to find the right tool; never guess a tool name."
        if exc.suggestions:
            step = "Use a name from did_you_mean if it fits; otherwise call discover_tools."
        return ErrorInfo(
            "unknown_tool", f"There is no tool named '{exc.name}'.", step, suggestions=exc.suggestions
        )
    if isinstance(exc, ToolInputError):
        problems = (Problem(exc.field or "parameters", safe_text(exc.message, 400)),)
        if d is None:
            return ErrorInfo(
                "invalid_arguments",
                "The arguments could not be used.",
                "Fix the listed problems and call again.",
                problems,
            )
        return invalid_arguments(d, problems, meta=meta)
    if isinstance(exc, RateLimited) and exc.retry_after is not None:  # an upstream's own limit
        seconds, step = _wait(exc.retry_after)
        return ErrorInfo(exc.code, safe_text(exc.message, 400), step, retry_after_seconds=seconds)
    return ErrorInfo(exc.code, safe_text(exc.message, 400), NEXT_STEPS.get(exc.code, NEXT_STEPS["internal"]))


def invalid_arguments(d: ToolDefinition, problems: tuple[Problem, ...], *, meta: bool = False) -> ErrorInfo:
    """Arguments that failed validation: every problem, and how to call again."""
    if meta:
        step = f"Fix the listed problems and call {d.name} again."
    else:
        step = (
            f"Fix the listed problems and call invoke_tool again; call get_tool_schema "
            f"with tool_name '{d.name}' to see every parameter."
        )
    return ErrorInfo("invalid_arguments", f"The parameters for {d.name} are invalid.", step, problems)


def too_large(d: ToolDefinition, size: int, limit: int) -> ErrorInfo:
    """Arguments past the gateway's size limit."""
    problem = Problem("parameters", f"Too large: {size:,} bytes; the limit is {limit:,}")
    return invalid_arguments(d, (problem,))


def _wait(retry_after: float) -> tuple[int, str]:
    """Whole seconds to wait (at least 1, at most a day: an upstream's word is not trusted), and the
    next step that says so."""
    seconds = 1 if math.isnan(retry_after) else max(1, math.ceil(min(retry_after, 86_400.0)))
    step = (
        f"Wait {seconds} seconds before calling it again, or do something else meanwhile; "
        "tell the user if the task cannot wait."
    )
    return seconds, step


def rate_limited(limit: str, retry_after: float) -> ErrorInfo:
    """A call a rate limit or quota refused: which limit, and the whole seconds until one may pass."""
    seconds, step = _wait(retry_after)
    message = f"Not run: the limit '{safe_text(limit, 64)}' allows no more calls of this tool now."
    return ErrorInfo("rate_limited", message, step, retry_after_seconds=seconds)


def unknown_meta_tool(name: str, meta_names: Sequence[str]) -> ErrorInfo:
    """A direct call of something that is not a meta-tool (`meta_names`: those offered)."""
    if "invoke_tool" not in meta_names:  # run_code alone ([code] only): tools are called in programs
        return ErrorInfo(
            "unknown_tool",
            f"There is no tool named '{safe_text(name, 80)}'.",
            "Only run_code can be called directly; find and call tools inside a program, with "
            "discover(query) and call(name, args).",
            suggestions=tuple(meta_names),
        )
    return ErrorInfo(
        "unknown_tool",
        f"There is no tool named '{safe_text(name, 80)}'.",
        "Only discover_tools, get_tool_schema and invoke_tool can be called directly; "
        "run other tools through invoke_tool.",
        suggestions=tuple(meta_names),
    )
