"""`gateway chat`: a terminal conversation with an agent that uses the gateway.

Tool activity is shown as it happens (on stderr), the answer streams to stdout, and every
destructive call is put to the human at the terminal before it runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from ..agent.events import (
    ConfirmationAnswered,
    Event,
    RoundCapReached,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    truncate,
)
from ..agent.loop import DEFAULT_MAX_ROUNDS, Agent
from ..agent.provider import Provider
from ..context import PendingConfirmation, ToolContext
from ..engine import Gateway
from ..rendering import shown
from .approvals import terminal_operator, wrapped

DEFAULT_MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-5.5"}
_SHOWN = 160


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `gateway chat`."""
    parser.add_argument("--provider", choices=sorted(DEFAULT_MODELS), default="anthropic")
    defaults = ", ".join(f"{k} {v}" for k, v in DEFAULT_MODELS.items())
    parser.add_argument("--model", help=f"model name (default: {defaults})")
    parser.add_argument(
        "--base-url", help="API base URL (default: the SDK's, or ANTHROPIC_BASE_URL / OPENAI_BASE_URL)"
    )
    parser.add_argument(
        "--api", choices=["responses", "chat-completions"], default="responses", help="OpenAI API"
    )
    parser.add_argument(
        "--deferred",
        action="store_true",
        help="native deferred loading (the provider's tool search) instead of the meta-tools",
    )
    parser.add_argument(
        "--code", action="store_true", default=None, help="offer run_code (docs/code-mode.md)"
    )
    parser.add_argument(
        "--code-only", action="store_true", default=None, help="offer run_code alone (implies --code)"
    )
    parser.add_argument("--max-rounds", type=int, default=DEFAULT_MAX_ROUNDS, help="tool rounds per message")
    parser.add_argument("--system", help="system prompt")


def _is_sdk_error(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] in ("anthropic", "openai")


def _provider(args: argparse.Namespace, client: Any) -> Provider:
    model = args.model or DEFAULT_MODELS[args.provider]
    if args.provider == "anthropic":
        from ..adapters.anthropic import AnthropicMessages

        return AnthropicMessages(client, model=model)
    from ..adapters.openai_agent import OpenAIChat, OpenAIResponses

    if args.api == "chat-completions":
        return OpenAIChat(client, model=model)
    return OpenAIResponses(client, model=model)


def _client(args: argparse.Namespace) -> Any:
    if args.provider == "anthropic":
        from ..adapters.anthropic import client_from_env

        return client_from_env(base_url=args.base_url)
    from ..adapters.openai_agent import client_from_env as openai_client

    return openai_client(base_url=args.base_url)


class _Terminal:
    def __init__(self, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> None:
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr

    def note(self, text: str) -> None:
        """A line for the person, on stderr; tool names, arguments and errors may come from the model."""
        print(shown(text, lines=True), file=self.stderr, flush=True)

    def show(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.stdout.write(shown(event.text, lines=True))
            self.stdout.flush()
        elif isinstance(event, ToolCallStarted):
            args = event.call.arguments
            text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)
            # Escaped: a call's arguments are the model's text, never raw to a terminal.
            self.note(shown(f"  -> {event.call.name} {truncate(text or '{}', _SHOWN)}"))
        elif isinstance(event, ToolCallFinished):
            result = event.outcome.result
            status: str = result.status
            if result.error is not None:
                status = f"{result.error.code}: {result.error.message}"
            self.note(shown(f"  <- {event.outcome.call.name}: {truncate(status, _SHOWN)}"))
        elif isinstance(event, ConfirmationAnswered):
            self.note("  approved" if event.approved else "  declined")
        elif isinstance(event, RoundCapReached):
            self.note(f"  (used {event.rounds} tool rounds; asking for an answer)")

    def approve(self, pending: PendingConfirmation) -> bool:
        self.note(wrapped(pending.preview, "  Confirmation needed: ", "      "))
        if not self.stdin.isatty():
            self.note("  Not approved: no terminal to ask on.")
            return False
        self.stderr.write("  Run it? [y/N] ")
        self.stderr.flush()
        return self.stdin.readline().strip().lower() in {"y", "yes"}


class _Asking:
    """The terminal's prompt as an approver that says who answers it: the terminal's user."""

    def __init__(self, ask: Callable[[PendingConfirmation], bool]) -> None:
        self.ask = ask
        self.decided_by = terminal_operator()

    def __call__(self, pending: PendingConfirmation) -> bool:
        return self.ask(pending)


def run_chat(
    gateway: Gateway,
    context: ToolContext,
    args: argparse.Namespace,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Chat until end of input or /exit. Returns an exit code."""
    term = _Terminal(stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr)
    try:
        client = _client(args)
    except Exception as exc:
        if not _is_sdk_error(exc):
            raise
        term.note(f"gateway: cannot start the {args.provider} client: {exc}")
        return 2
    gateway.index(
        context.principal
    )  # before the loop: Ctrl-C stops a long build at once (`commands.discover`)
    with client:
        agent = Agent(
            gateway,
            _provider(args, client),
            system=args.system,
            approver=_Asking(term.approve),
            on_event=term.show,
            max_rounds=args.max_rounds,
            deferred=args.deferred,
            context=context,
        )
        tools = len(gateway.visible(context.principal))
        term.note(
            f"Chatting with {args.provider} ({tools} tools behind the gateway). End with Ctrl-D or /exit."
        )
        while True:
            term.stdout.write("> ")
            term.stdout.flush()
            line = term.stdin.readline()
            if not line or line.strip() in ("/exit", "/quit"):
                term.stdout.write("\n")
                return 0
            if not line.strip():
                continue
            try:
                agent.run_sync(line.strip())
            except Exception as exc:
                if not _is_sdk_error(exc):
                    raise
                term.note(f"gateway: the model call failed: {exc}")
            term.stdout.write("\n")
