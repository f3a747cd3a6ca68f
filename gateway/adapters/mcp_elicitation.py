"""Asking the client's user about a destructive call through MCP elicitation, and again for each
pause of a program (run_code), in the way the negotiated protocol allows:

- 2026-07-28 and later: the call answers `InputRequiredResult` with the question; the client
  asks the user and calls again with the answer and the (sealed) `requestState`, which carries
  only the pending confirmation's id. Any replica that shares the confirmation store and the
  secret can take that second round (a program's pause excepted: it lives in the process that
  ran it, docs/code-mode.md).
- earlier versions: an `elicitation/create` request on the call's own channel, when the
  transport has one (stdio and HTTP sessions do; stateless HTTP does not).

Elicitation is offered only when `[confirmation] approvers` lists "elicitation" (not by default:
the client that made the call would answer its own question). A client that cannot or may not be
asked gets the confirmation gate's own answer (a pending id in "host" and "model" modes, a refusal
in "deny" mode), and the call waits for the console or `gateway approve ID`. The model never
answers an elicitation.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..context import PendingConfirmation, ToolContext, ToolResult
from ..engine import Gateway
from ..gate.confirmation import ApprovalRefused, DecidedBy
from ..gate.plans import is_plan
from . import mcp

log = logging.getLogger("gateway.mcp")

CONFIRM_KEY = "confirm"
"""Key of the approval question in an `InputRequiredResult`."""

_CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Run this action now.",
            "default": True,
        }
    },
    "required": ["approve"],
}

_PAUSING = ("invoke_tool", "run_code")
"""The meta-tools whose call may wait for a person's approval, and be asked again with its answer."""


class Elicitation:
    """The elicitation rounds of one server's calls to the meta-tools that may pause."""

    def __init__(self, gw: Gateway) -> None:
        self.gw = gw

    async def resumed(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
        arguments: dict[str, Any],
        context: ToolContext,
    ) -> types.CallToolResult | types.InputRequiredResult | None:
        """The second round of a call that asked its user; None when this call is not one."""
        if params.name in _PAUSING and params.request_state is not None:
            pending_id, call_id = _resumed(params.request_state)
            answer = (params.input_responses or {}).get(CONFIRM_KEY)
            record = self.gw.gate.store.get(pending_id) if pending_id else None
            # The state is sealed and bound to these arguments and caller; checked again all the same.
            if record is not None and record.pending.principal == context.principal.id:
                context = ToolContext(
                    principal=context.principal, session_id=context.session_id, call_id=call_id
                )
                if not self.gw.gate.allows("elicitation"):  # no longer asked: redeem what others decided
                    arguments = {**arguments, "confirmation": record.pending.pending_id}
                    return _result(await self.gw.call(params.name, arguments, context))
                if not isinstance(answer, types.ElicitResult):  # retried without an answer: ask again
                    return _input_required(record.pending, call_id)
                decided = await self._decide(
                    params.name, record.pending.pending_id, answer, arguments, context
                )
                return await self.settle(ctx, params.name, decided, arguments, context)
        return None

    async def settle(
        self,
        ctx: ServerRequestContext[Any],
        name: str,
        result: ToolResult,
        arguments: dict[str, Any],
        context: ToolContext,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Ask the client's user about a pending call; a program (run_code) may pause again after it."""
        while (pending := result.pending) is not None and result.status == "confirmation_required":
            if not self._may_elicit(ctx):
                break
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                return _input_required(pending, context.call_id)
            try:
                # No answer before the confirmation expires is as good as none.
                with anyio.fail_after(self.gw.gate.ttl_seconds):
                    answer = await ctx.session.elicit_form(
                        _question(pending), _CONFIRM_SCHEMA, related_request_id=ctx.request_id
                    )
            except Exception:
                # The client could not ask after all: the call stays pending, as without elicitation.
                log.warning("elicitation failed for %s; leaving it pending", pending.tool, exc_info=True)
                break
            result = await self._decide(name, pending.pending_id, answer, arguments, context)
        return _result(result)

    def _may_elicit(self, ctx: ServerRequestContext[Any]) -> bool:
        # Allowed by the operator, and the client can show a form.
        return self.gw.gate.allows("elicitation") and _can_elicit(ctx)

    async def _decide(
        self,
        name: str,
        pending_id: str,
        answer: types.ElicitResult,
        arguments: dict[str, Any],
        context: ToolContext,
    ) -> ToolResult:
        """Record the human's answer, then redeem the confirmation: the gate runs or refuses the call."""
        content = answer.content or {}
        # The client's user answered; the audit log says so, and as whom the client is signed in.
        decided_by = DecidedBy("elicitation", context.principal.id)
        if answer.action == "accept" and content.get("approve") is True:
            try:
                self.gw.approve(pending_id, decided_by=decided_by)
            except ApprovalRefused as refused:  # its program ended with its process, say: redeeming says why
                log.info("an approval through elicitation was refused: %s", refused)
        else:
            self.gw.deny(pending_id, decided_by=decided_by)
        return await self.gw.call(name, {**arguments, "confirmation": pending_id}, context)


def _resumed(request_state: str) -> tuple[str, str]:
    """(pending id, call id) from a second round's state; empty strings when it holds none."""
    # The boundary has verified and unsealed the state, so it is the text a replica minted.
    try:
        state = json.loads(request_state)
    except ValueError:
        return "", ""
    if not isinstance(state, dict):
        return "", ""
    pending_id, call_id = state.get("pending_id"), state.get("call_id")
    return (pending_id, call_id) if isinstance(pending_id, str) and isinstance(call_id, str) else ("", "")


def _can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    # A bare `elicitation: {}` (from before modes existed) means form support; URL-only does not.
    if elicitation is None or (elicitation.form is None and elicitation.url is not None):
        return False
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.session.can_send_request


def _question(pending: PendingConfirmation) -> str:
    # In full: the preview is escaped already, and a call whose preview is too long was refused.
    if is_plan(pending):  # a program's writes, one per line: approved or declined together here
        return f"Approve all of these writes? {pending.preview}"
    return f"Approve this action? {pending.preview}"


def _input_required(pending: PendingConfirmation, call_id: str) -> types.InputRequiredResult:
    """Ask the user through the client; the state brings back which confirmation, for which call."""
    request = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message=_question(pending), requested_schema=_CONFIRM_SCHEMA)
    )
    state = json.dumps({"pending_id": pending.pending_id, "call_id": call_id})
    return types.InputRequiredResult(input_requests={CONFIRM_KEY: request}, request_state=state)


def _result(result: ToolResult) -> types.CallToolResult:
    return types.CallToolResult.model_validate(mcp.call_result(result))
