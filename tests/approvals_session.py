"""The "real session" of docs/confirmation-and-policy.md's standing approvals: a real gateway, a
person's rule, a model's calls inside and outside it, a revocation, and a model asking for a rule.

As docs/code-mode.md's (`code_mode_session`): a real Gateway (`open_gateway`, `[confirmation]
rule_requests` on) over the workspace catalog, on a fresh local workspace with its demo data, in
Europe/Berlin with the clock at Monday 2026-11-23 09:00; each model turn is one `Gateway.call`,
each answer the text `render` gives the model. Ids are random; `normalise` numbers them.

    python -m tests.approvals_session          # print the session
    python -m tests.approvals_session --write  # rewrite it in docs/confirmation-and-policy.md
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from gateway import ToolContext, render, run_sync
from gateway.gate.confirmation import DecidedBy
from gateway.gate.rules import parse_constraints
from gateway.runtime import open_gateway, principal_from
from gateway.settings.loading import Settings

from .concepts_session import NOW

PAGE = Path(__file__).resolve().parents[1] / "docs" / "confirmation-and-policy.md"
_BLOCK = re.compile(r"(### Standing approvals\n.*?```text\n)(.*?)(```\n)", re.S)

SEND = "gmail_send_message"
RULE = [("domain", "to=example.com"), ("domain", "cc=example.com"), ("equals", "bcc=[]")]
ASK = {
    "tool": "tasks_delete_task",
    "minutes": 15,
    "prefix": {"task_id": "t"},
    "reason": "to remove the finished tasks you listed without asking for each",
}


def _mail(to: str) -> dict[str, Any]:
    return {"to": [to], "subject": "Standup moved", "body": "The standup is at 10:00 tomorrow."}


def session() -> str:
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp),
            timezone="Europe/Berlin",
            catalogs=["workspace"],
            confirmation={"rule_requests": True},
            search={"dense": {"mode": "off"}},
        )
        with open_gateway(settings, clock=lambda: NOW) as gw:
            ctx = ToolContext(principal=principal_from(settings), session_id="rules")

            def turn(tool: str, parameters: dict[str, Any], **more: Any) -> Any:
                arguments = {"tool_name": tool, "parameters": parameters, **more}
                lines.append(f"model -> invoke_tool {json.dumps(arguments)}")
                result = run_sync(gw.call("invoke_tool", arguments, ctx))
                lines.append(f"gateway -> {render(result)}")
                lines.append("")
                return result

            lines.append(
                "$ gateway rules add gmail_send_message --for 30m --domain to=example.com "
                "--domain cc=example.com --equals bcc=[]"
            )
            rule = gw.add_rule(
                SEND,
                principal=ctx.principal.id,
                expires_at=gw.gate.now() + 1800,
                constraints=parse_constraints(RULE),  # type: ignore[arg-type]
                decided_by=DecidedBy("terminal", "you"),
            )
            lines.append(f"made {rule.rule_id}  {rule.describe()}, for 30 minutes")
            lines.append("")
            turn(SEND, _mail("priya@example.com"))
            turn(SEND, _mail("friend@elsewhere.org"))
            lines.append(f"$ gateway rules revoke {rule.rule_id}")
            gw.revoke_rule(rule.rule_id, decided_by=DecidedBy("terminal", "you"))
            lines.append(f"revoked {rule.rule_id}: {rule.describe()}")
            lines.append("")
            turn(SEND, _mail("sam@example.com"))
            held = turn("gateway_request_standing_approval", ASK)
            pending_id = held.pending.pending_id
            gw.approve(pending_id, decided_by=DecidedBy("terminal", "you"))
            lines.append(f"$ gateway approve {pending_id}   # the person read the rule and agreed")
            lines.append("")
            turn("gateway_request_standing_approval", ASK, confirmation=pending_id)
    return "\n".join(lines[:-1]) + "\n"


def on_page(page: str = "") -> str:
    match = _BLOCK.search(page or PAGE.read_text(encoding="utf-8"))
    if match is None:
        raise LookupError(
            "docs/confirmation-and-policy.md has no ```text block under '### Standing approvals'"
        )
    return match.group(2)


def write() -> None:
    page = PAGE.read_text(encoding="utf-8")
    PAGE.write_text(
        _BLOCK.sub(lambda m: m.group(1) + session() + m.group(3), page, count=1), encoding="utf-8"
    )


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        write()
    else:
        sys.stdout.write(session())
