"""Every text the model reads about a program: run_code's description, its errors, its result.

Designed once here, as `gateway/rendering.py` designs the meta-tools' texts, and pinned by
snapshot tests. Each error says what the program had done when it stopped: calls already made
ran, and the model must not make them again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..context import ErrorInfo
from ..rendering import safe_text

NAME = "run_code"

DESCRIPTION = (
    "Run a short Python program that calls tools; only its result comes back (the value of its last "
    "line). In it: call(name, args) runs a tool and returns its output; discover(query) finds tools; "
    "schema(name) gives a tool's parameters. A failed call raises ToolError; a call the user declines "
    "raises Declined. A destructive call pauses the program and returns a pending_id: ask the user, and "
    "once they approve, call run_code again with confirmation set to it; the program resumes where it "
    "stopped. No files, network or imports beyond json, re, math and datetime."
)
CODE_DESCRIPTION = "The program; the value of its last line is the result."
CONFIRMATION_DESCRIPTION = "The pending_id, once the user approved: resumes the paused program."


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
    return f"{text} Next: {error.next_step}"


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
