"""What the command line tells a person instead of what the gateway tells a model.

The gateway's results end with a `next_step` written for a model ("call get_tool_schema ..."); a
person at a terminal runs commands, so the steps are rewritten to name them. Progress of slow work
(building a search index) is shown on stderr, from log records of named loggers, so the rooms that
do the work know nothing of the command line.
"""

from __future__ import annotations

import dataclasses
import logging
import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..context import ErrorInfo, Principal, ToolResult
from ..engine import Gateway
from ..rendering import ShownFormatter, shown

# The loggers whose INFO records are progress a person should see (a search index or the Google
# API index being built): named here, so the rooms that log them need no hook of the command line.
# The file tools' warnings (a definition skipped) are said the same way, with the `gateway:` prefix.
PROGRESS_LOGGERS = ("gateway.search", "services.google_apis", "gateway.filetools")
WARNING_ROOTS = ("gateway", "services")
"""Their warnings reach the person as `gateway: ...` lines (`progress_on_stderr`)."""

DISCOVER_STEP = "Run 'gateway schema NAME' to see a tool's parameters, then 'gateway invoke NAME PARAMETERS'."
OVERVIEW_STEP = "Run 'gateway discover WORDS' (or -c CATEGORY / -a ACTION) to list matching tools."
NOTHING_MATCHED_STEP = (
    "Try other words (a verb and an object, e.g. 'delete event'), drop the filters, "
    "or browse a category with 'gateway discover -c CATEGORY'."
)
NO_TERMINAL = "Not approved: there was no terminal to ask on."


def answered_yes(question: str, terminal: TextIO | None = None) -> bool:
    """Whether the person at the terminal answers `question` yes; Ctrl-C or end of input is no, at once.

    `terminal`: where the answer is read when stdin is not the terminal (the terminal itself, /dev/tty).

    Under `asyncio.run` Ctrl-C only cancels the running task, which waits for `input` to return:
    while the question is asked, Ctrl-C interrupts it instead.
    """
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler) if main else None
    try:
        if terminal is None:
            answer = input(question)
        else:
            print(question, end="", file=sys.stderr, flush=True)
            answer = terminal.readline()
            if not answer:
                raise EOFError
    except (KeyboardInterrupt, EOFError):
        print(file=sys.stderr)  # end the question's line
        return False
    finally:
        if main:
            signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
    return answer.strip().lower() in {"y", "yes"}


def note(text: str) -> None:
    """One line for the person at the terminal, on stderr (stdout stays the command's output)."""
    print(f"gateway: {shown(text, lines=True)}", file=sys.stderr, flush=True)


@contextmanager
def progress_on_stderr() -> Iterator[None]:
    """Show the progress records of `PROGRESS_LOGGERS` (and their warnings) on stderr while the block runs."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(ShownFormatter("gateway: %(message)s"))
    # Every other warning of the gateway and its services (a fronted server that would not start, an
    # OpenAPI description's problem) is said the same way, not bare by Python's last-resort handler.
    warnings = logging.StreamHandler(sys.stderr)
    warnings.setFormatter(ShownFormatter("gateway: %(message)s"))
    warnings.setLevel(logging.WARNING)
    warnings.addFilter(lambda _: not logging.getLogger().handlers)  # `serve` sets the root's own format
    roots = [logging.getLogger(name) for name in WARNING_ROOTS]
    for root in roots:
        root.addHandler(warnings)
    saved = []
    for name in PROGRESS_LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.level, logger.propagate))
        logger.addHandler(handler)
        logger.propagate = False  # once is enough, whatever else the root logger shows
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        for logger, level, propagate in saved:
            logger.removeHandler(handler)
            logger.setLevel(level)
            logger.propagate = propagate
        for root in roots:
            root.removeHandler(warnings)


def for_a_person(
    result: ToolResult, gw: Gateway, principal: Principal, *, tool_name: str | None = None
) -> ToolResult:
    """`result` with next steps that name commands, and why a call was not found or not approved.

    Args:
        result: what the gateway answered.
        gw: the gateway that answered (to tell a missing tool from one the principal may not use).
        principal: who the command ran as.
        tool_name: the tool `gateway invoke` or `gateway schema` named; None for `gateway discover`.
    """
    if result.status == "ok" and isinstance(result.output, dict) and "next_step" in result.output:
        output: dict[str, Any] = dict(result.output)
        if "tools" not in output:
            output["next_step"] = OVERVIEW_STEP
        elif output["tools"]:
            output["next_step"] = DISCOVER_STEP
        else:
            output["next_step"] = NOTHING_MATCHED_STEP
        return dataclasses.replace(result, output=output)
    error = result.error
    if error is None:
        return result
    return dataclasses.replace(result, error=_error_for_a_person(error, gw, principal, tool_name))


def _error_for_a_person(
    error: ErrorInfo, gw: Gateway, principal: Principal, tool_name: str | None
) -> ErrorInfo:
    name = shlex.quote(tool_name) if tool_name else "NAME"
    if error.code == "unknown_tool" and tool_name is not None:
        found = gw.catalog.get(tool_name)
        unconfined = dataclasses.replace(principal, toolsets=frozenset())
        if found is not None and principal.toolsets and gw.policy.allows(found, unconfined):
            toolsets = ", ".join(sorted(principal.toolsets))
            return dataclasses.replace(
                error,
                message=f"A tool named {tool_name!r} exists, but not in toolset {toolsets}.",
                next_step="Run without --toolset, or add the tool to the toolset in the configuration.",
                suggestions=(),
            )
        if found is not None:  # hidden by the policy from this principal
            return dataclasses.replace(
                error,
                message=f"A tool named {tool_name!r} exists, but principal {principal.id!r} may not use it.",
                next_step=(
                    "Run as a principal whose roles allow it (--principal NAME), or change the policy "
                    "in the configuration."
                ),
                suggestions=(),
            )
        step = "Run 'gateway discover WORDS' to find the right tool; never guess a tool name."
        if error.suggestions:
            step = "Use a name from did_you_mean if it fits; otherwise run 'gateway discover WORDS'."
        return dataclasses.replace(error, next_step=step)
    if error.code == "invalid_arguments":
        if tool_name is None:
            return dataclasses.replace(error, next_step="Fix the listed problems and run the command again.")
        return dataclasses.replace(
            error,
            next_step=(
                f"Fix the listed problems and run 'gateway invoke {name} PARAMETERS' again; "
                f"'gateway schema {name}' shows every parameter."
            ),
        )
    return error


def not_approved_without_a_terminal(result: ToolResult) -> ToolResult:
    """A declined call that was never put to anyone says so in its result, not only on stderr."""
    error = result.error
    if error is None or error.code != "declined":
        return result
    return dataclasses.replace(
        result,
        error=dataclasses.replace(
            error,
            message=NO_TERMINAL,
            next_step="Run the command again at a terminal to answer, or pass --yes to approve it.",
        ),
    )
