"""Running a program: every call it makes goes through the gateway, and an approval pauses it.

The program runs in the sandbox (`sandbox.py`); each time it calls `call`, `discover` or `schema`
it stops, and this module answers through the gateway's own entry points with the caller's
context: `Gateway.invoke` for a tool (policy, validation, permission, limits, the confirmation
gate, audit, telemetry, learning), `Gateway.discover` and `Gateway.schema` for the others. Nothing
here decides whether a call may run.

A destructive call that needs a person's approval pauses the program: its state is dumped from the
worker to bytes (no worker is held while it waits), and the model receives the call's pending
confirmation. Once the call is approved through the usual channels, `run_code` with that id redeems
the approval exactly as the gate bound it, then restores the program in a fresh worker and hands it
the result. Paused programs live in this process only: they expire with their confirmation, and a
restart ends them (the gateway says so when the model tries to resume one; on a shared store, the
next process declines the calls of a process that ended without a clean stop: `paused.py`).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from ..audit import Auditor, Outcome
from ..context import ErrorInfo, PendingConfirmation, Principal, ToolContext, ToolResult
from ..definition import ToolDefinition
from ..errors import ToolFailed, ToolInputError
from ..gate.confirmation import ConfirmationGate, DecidedBy, decider_of
from ..gate.plans import Plans
from ..meta_tools import Backend as MetaBackend
from ..meta_tools import DiscoverParams
from ..rendering import error_info, to_jsonable
from ..settings.sections import CodeSettings
from . import text
from .imports import ALLOWED, refused_import
from .paused import Paused, PausedPrograms, Program
from .sandbox import Asked, Failed, Finished, Limits, Run, Sandbox, Step

log = logging.getLogger("gateway")

FUNCTIONS = ("call", "discover", "schema")


class Backend(MetaBackend, Protocol):
    """What programs run on: the `Gateway` (named here so this room needs no engine)."""

    gate: ConfirmationGate
    auditor: Auditor

    def lookup(self, name: str, principal: Principal) -> ToolDefinition | None: ...

    def approve(self, pending_id: str, *, decided_by: DecidedBy) -> PendingConfirmation | None: ...

    def deny(self, pending_id: str, *, decided_by: DecidedBy) -> bool: ...


@dataclass(frozen=True)
class _Value:
    value: Any


@dataclass(frozen=True)
class _Raise:
    error: BaseException


@dataclass(frozen=True)
class _Pause:
    tool: str
    pending: PendingConfirmation


class _Stop(Exception):
    def __init__(self, info: ErrorInfo) -> None:
        self.info = info


class Programs:
    """Runs, pauses and resumes the programs of `run_code` for one gateway."""

    def __init__(self, backend: Backend, settings: CodeSettings) -> None:
        self.backend = backend
        self.settings = settings
        self.sandbox = Sandbox(
            Limits(
                cpu_seconds=settings.cpu_seconds,
                memory_bytes=settings.memory_mb * 1024 * 1024,
                max_suspensions=settings.max_calls * 2 + 100,
            ),
            functions=FUNCTIONS,
            checkout_timeout=settings.wall_seconds,
        )
        self._paused = PausedPrograms(settings, backend)
        if ended := self._paused.end_orphans():  # held by a process that ended without a clean stop
            log.warning("%d paused program(s) of an ended gateway process: their calls are declined", ended)

    # -- the tool's entry point ------------------------------------------------------------

    async def run(
        self, code: str | None, confirmation: str | None, ctx: ToolContext, *, plan: bool = False
    ) -> ToolResult:
        """Run `code` (drawing its plan when `plan`), resume the program paused on `confirmation`,
        or run the program of the approved plan `confirmation`."""
        start = time.perf_counter()
        if confirmation is not None and self._plans().record(confirmation) is not None:
            result = await self._run_plan(confirmation, code, ctx)
        elif confirmation is not None:
            result = await self._resume(confirmation, code, ctx)
        elif code is None or not code.strip():
            result = _error(ctx, text.needs_code())
        else:
            program = Program(code, ctx, plan=Plans.draw() if plan else None)
            result = await self._start(program)
        self._audit(ctx, code, confirmation, result, start)
        return result

    def close(self) -> None:
        """End every paused program (its pending call is declined) and stop the sandbox's workers."""
        if ended := self._paused.end_all():
            log.warning("%d paused program(s) ended: the gateway is stopping", ended)
        self.sandbox.close()

    # -- start, resume ---------------------------------------------------------------------

    async def _start(self, program: Program) -> ToolResult:
        began = time.monotonic()
        if (refused := refused_import(program.code)) is not None:
            line, source, module = refused
            message = f"{module} cannot be imported here: only {', '.join(ALLOWED)}"
            info = text.program_error(
                line, source, error_type="ImportError", message=message, calls=(), failed=None
            )
            return _error(program.ctx, info)
        try:
            run, step = await self.sandbox.start(program.code)
        except TimeoutError:  # every worker busy for as long as the program may run
            return _error(program.ctx, text.busy(self.settings.wall_seconds))
        return await self._drive(program, run, step, began)

    async def _run_plan(self, plan_id: str, code: str | None, ctx: ToolContext) -> ToolResult:
        """Run the program of an approved plan for real, its approved writes let through (once)."""
        redeemed = self._plans().redeem(plan_id, code, ctx.principal, self._lookup(ctx))
        if not isinstance(redeemed, tuple):
            return _error(ctx, redeemed)
        drawn, carried = redeemed
        return await self._start(Program(drawn, ctx, plan=carried))

    async def _resume(self, pending_id: str, code: str | None, ctx: ToolContext) -> ToolResult:
        paused = self._paused.take(pending_id, ctx.principal)
        if paused == "changed":  # its own principal, but not as it was: see docs/code-mode.md
            return _error(ctx, text.principal_changed())
        if not isinstance(paused, Paused):  # another principal's program is not there for this caller
            elsewhere = paused is None and self.backend.gate.store.get(pending_id) is not None
            return _error(ctx, text.not_paused(elsewhere))
        program = paused.program
        if code is not None and code.strip() and code != program.code:
            self._paused.keep(paused)
            return _error(ctx, text.other_program())
        if self.backend.gate.now() > paused.pending.expires_at:
            paused.end("confirmation_expired", self.backend)
            return _error(ctx, text.expired(program.calls))
        result = await self.backend.invoke(
            paused.tool,
            dict(paused.pending.parameters),  # exactly as the gate bound it, and the person approved it
            confirmation=pending_id,
            context=program.inner(paused.n),
        )
        error = result.error
        if error is not None and error.code == "confirmation_pending":
            self._paused.keep(paused)
            return _error(ctx, text.still_pending(error.message))
        if error is not None and error.code == "confirmation_expired":
            return _error(ctx, text.expired(program.calls))
        answer = self._answer_of(program, paused.tool, result)
        began = time.monotonic()
        run, step = await self.sandbox.restore(paused.dumped, program.code)
        return await self._drive(program, run, step, began, answer)

    # -- the loop ----------------------------------------------------------------------------

    async def _drive(
        self, program: Program, run: Run, step: Step, began: float, resumed: _Value | _Raise | None = None
    ) -> ToolResult:
        """Answer the program's calls until it ends, fails, reaches a limit or pauses; then, for a
        program that drew a plan, hold the plan, and for one that ran a plan, settle it.

        `resumed`: the answer to the call a restored program waits on (its approved call's result).
        """
        result = await self._steps(program, run, step, began, resumed)
        if program.plan is None or result.status == "confirmation_required":  # no plan, or paused
            return result
        if program.plan.drawing:
            return await self._drawn(program, result) if program.planned else result
        return self._settled(program, result)

    async def _steps(
        self, program: Program, run: Run, step: Step, began: float, resumed: _Value | _Raise | None
    ) -> ToolResult:
        ctx = program.ctx
        try:
            if resumed is not None and isinstance(step, Asked):
                step = await self._give(program, run, resumed)
            while isinstance(step, Asked):
                remaining = self.settings.wall_seconds - program.elapsed - (time.monotonic() - began)
                if program.attempts >= self.settings.max_calls:
                    raise _Stop(
                        text.limit_reached(
                            f"it reached its limit of {self.settings.max_calls} calls", program.calls
                        )
                    )
                if remaining <= 0:
                    raise _Stop(self._wall(program))
                try:
                    answer = await asyncio.wait_for(self._answer(program, step), remaining)
                except TimeoutError:
                    raise _Stop(self._wall(program)) from None
                if isinstance(answer, _Pause):
                    program.printed.append(run.printed.output)  # the restored program prints afresh
                    dumped = self._dump(run, program, answer)
                    self._paused.keep(Paused(program, dumped, answer.tool, answer.pending, program.attempts))
                    return ToolResult(text.NAME, ctx.call_id, "confirmation_required", pending=answer.pending)
                step = await self._give(program, run, answer)
            program.printed.append(run.printed.output)
            if isinstance(step, Failed):
                raise _Stop(self._failure(program, step))
            return self._finished(program, step)
        except _Stop as stop:
            return _error(ctx, stop.info)
        finally:
            program.elapsed += time.monotonic() - began
            await run.close()

    async def _give(self, program: Program, run: Run, answer: _Value | _Raise) -> Step:
        if isinstance(answer, _Raise):
            return await run.answer(error=answer.error)
        program.failed = None
        return await run.answer(answer.value)

    async def _answer(self, program: Program, asked: Asked) -> _Value | _Raise | _Pause:
        """The answer to one call of the program, from the gateway."""
        program.attempts += 1
        n = program.attempts
        if asked.function == "discover":
            return self._discover(program, asked)
        if asked.function == "schema":
            return self._schema(program, asked)
        name = asked.args[0] if asked.args else asked.kwargs.pop("name", None)
        arguments: Any = asked.args[1] if len(asked.args) > 1 else asked.kwargs.pop("args", None)
        if asked.kwargs:  # call("tool", title="...") as well as call("tool", {"title": "..."})
            arguments = {**(arguments if isinstance(arguments, dict) else {}), **asked.kwargs}
        if not isinstance(name, str):
            return _Raise(TypeError("call(name, args): name is a tool's name, as a string"))
        result = await self.backend.invoke(name, arguments, context=program.inner(n))
        if result.status == "confirmation_required" and result.pending is not None:
            if program.plan is not None and result.pending.plan == program.plan.plan_id:
                program.planned.append(result.pending)  # drawing: held with the plan's other writes
                return _Value(text.planned(len(program.planned)))
            return _Pause(name, result.pending)  # it runs once approved
        return self._answer_of(program, name, result)

    def _answer_of(self, program: Program, tool: str, result: ToolResult) -> _Value | _Raise:
        error = result.error
        if error is None:
            program.calls.append(tool)
            return _Value(result.output)
        program.failed = tool
        if error.code == "declined":
            return _Raise(PermissionError(text.declined(tool)))
        return _Raise(RuntimeError(text.tool_error(tool, error)))

    def _discover(self, program: Program, asked: Asked) -> _Value | _Raise:
        raw = dict(asked.kwargs)
        if asked.args:
            raw.setdefault("query", asked.args[0])
        params = _validated(DiscoverParams, raw, "discover")
        if isinstance(params, _Raise):
            return params
        ctx = program.ctx
        try:
            page = self.backend.discover(
                ctx.principal,
                query=params.query,
                categories=params.categories,
                actions=params.actions,
                limit=params.limit,
                cursor=params.cursor,
                session=ctx.session_id,
            )
        except ToolInputError as exc:  # an unknown category or action, a stale cursor: the program's to fix
            return _Raise(ValueError(f"discover(): {exc.field or 'arguments'}: {exc.message}"))
        # Only what the page lists, looked up for the same principal: a hidden tool stays unseen.
        shown = [t["name"] for t in page["tools"]] if "tools" in page else []
        definitions = {n: d for n in shown if (d := self.backend.lookup(n, ctx.principal)) is not None}
        return _Value(to_jsonable(text.found(page, definitions)))

    def _schema(self, program: Program, asked: Asked) -> _Value | _Raise:
        name = asked.args[0] if asked.args else asked.kwargs.get("name")
        if not isinstance(name, str):
            return _Raise(TypeError("schema(name): name is a tool's name, as a string"))
        principal = program.ctx.principal
        try:  # the gateway's answer first: its policy, and its error for a name it does not know
            answer = self.backend.schema(principal, name[:200])
        except (ToolInputError, ToolFailed) as exc:
            program.failed = "schema"
            return _Raise(RuntimeError(text.tool_error("schema", error_info(exc))))
        d = self.backend.lookup(answer["name"], principal)
        return _Value(text.stub(d) if d is not None else to_jsonable(answer))

    # -- plans -----------------------------------------------------------------------------------

    def _plans(self) -> Plans:
        return Plans(
            self.backend.gate, self.backend.auditor
        )  # looked up each time: a host may replace its gate

    def _lookup(self, ctx: ToolContext) -> Callable[[str], ToolDefinition | None]:
        return lambda name: self.backend.lookup(name, ctx.principal)

    async def _drawn(self, program: Program, result: ToolResult) -> ToolResult:
        """Hold the plan the program drew, for a person to approve as one set.

        A program that stopped with an error after some writes (one may have needed a write's real
        result) holds the writes it made, saying where it stopped. An approver that answers at once
        (a terminal, a host's callback) is asked once for the whole plan, which then runs.
        """
        assert program.plan is not None
        ctx = program.ctx
        stopped = result.error.message if result.error is not None else None
        pending = self._plans().hold(
            program.plan,
            code=program.code,
            principal=ctx.principal,
            session=ctx.session_id,
            writes=program.planned,
            lookup=self._lookup(ctx),
            stopped=stopped,
        )
        gate = self.backend.gate
        decider = decider_of(gate.approver)
        if gate.approver is None or not gate.allows(decider.channel):
            return ToolResult(text.NAME, ctx.call_id, "confirmation_required", pending=pending)
        answer = gate.approver(pending)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is not True:
            self.backend.deny(pending.pending_id, decided_by=decider)
            return _error(ctx, text.plan_declined(len(program.planned)))
        self.backend.approve(pending.pending_id, decided_by=decider)
        return await self._run_plan(pending.pending_id, None, ctx)

    def _settled(self, program: Program, result: ToolResult) -> ToolResult:
        """The answer of a program that ran an approved plan, with what became of the plan's writes:
        the approved ones it did not make this time are declined, and named."""
        assert program.plan is not None
        not_made = self._plans().settle(program.plan)
        if result.error is not None:
            if not not_made:
                return result
            info = result.error
            more = text.not_made_sentence(not_made)
            return _error(program.ctx, ErrorInfo(info.code, f"{info.message} {more}", info.next_step))
        out = dict(result.output)
        out["plan"] = text.plan_report(program.plan.plan_id, not_made)
        return ToolResult(text.NAME, program.ctx.call_id, "ok", output=out)

    # -- endings -------------------------------------------------------------------------------

    def _finished(self, program: Program, step: Finished) -> ToolResult:
        out: dict[str, Any] = {"result": to_jsonable(step.output)}
        printed = "".join(program.printed)
        if printed:
            out["printed"] = printed
        out["calls"] = len(program.calls)
        size = len(json.dumps(out, ensure_ascii=False, default=str).encode())
        if size > self.settings.max_result_bytes:
            limit = self.settings.max_result_bytes
            info = text.limit_reached(
                f"its result is {size:,} bytes, over the limit of {limit:,}", program.calls
            )
            return _error(program.ctx, info)
        return ToolResult(text.NAME, program.ctx.call_id, "ok", output=out)

    def _failure(self, program: Program, failed: Failed) -> ErrorInfo:
        if failed.kind == "syntax":
            return text.syntax_error(failed.line, failed.source, failed.message)
        if failed.kind == "limit":
            what = {
                "TimeoutError": f"it ran past its limit of {self.settings.cpu_seconds:g} seconds of execution",
                "MemoryError": f"it needed more than its limit of {self.settings.memory_mb} MB of memory",
                "RecursionError": "its calls nested too deep (a recursion without end?)",
            }.get(failed.error_type, failed.message)
            return text.limit_reached(what, program.calls)
        if failed.kind == "timeout":
            return text.limit_reached(
                f"it ran past its limit of {self.settings.cpu_seconds:g} seconds of execution", program.calls
            )
        if failed.kind == "crashed":
            return text.crashed(program.calls)
        return text.program_error(
            failed.line,
            failed.source,
            error_type=failed.error_type,
            message=failed.message,
            calls=program.calls,
            failed=program.failed,
        )

    def _wall(self, program: Program) -> ErrorInfo:
        return text.limit_reached(
            f"it ran past its limit of {self.settings.wall_seconds:g} seconds (calls included)", program.calls
        )

    # -- paused programs ------------------------------------------------------------------------

    def _dump(self, run: Run, program: Program, pause: _Pause) -> bytes:
        """The waiting program's state; a state too large to keep ends the program, its call declined."""
        try:
            dumped: bytes | None = run.dump()
        except Exception:  # the worker could not write it out (its memory limit, say)
            log.warning("a program could not be paused: the sandbox could not dump its state")
            dumped = None
        if dumped is None or len(dumped) > self._paused.budget:
            Paused(program, b"", pause.tool, pause.pending, program.attempts).end(
                "max_paused_mb", self.backend
            )
            what = (
                "its state is too large to keep while it waits for an approval "
                f"([code] max_paused_mb: {self.settings.max_paused_mb} MB)"
            )
            raise _Stop(text.limit_reached(what, program.calls))
        return dumped

    def paused(self) -> list[str]:
        """The pending ids programs wait on, oldest first."""
        return self._paused.ids()

    def _audit(
        self, ctx: ToolContext, code: str | None, confirmation: str | None, result: ToolResult, start: float
    ) -> None:
        """One line for the program itself; its calls' lines carry call ids `<this call id>.<n>`.

        A program that drew a plan has the plan's id as its pending id; one run for a plan, or
        resumed, names the id it was given (`confirmation`)."""
        outcome: Outcome = {"ok": "executed", "confirmation_required": "pending_confirmation"}.get(
            result.status, "failed"
        )  # type: ignore[assignment]
        self.backend.auditor.log(
            principal=ctx.principal.id,
            session=ctx.session_id,
            call_id=ctx.call_id,
            tool=text.NAME,
            outcome=outcome,
            duration_ms=(time.perf_counter() - start) * 1000,
            error_code=result.error.code if result.error else None,
            params={k: v for k, v in (("code", code), ("confirmation", confirmation)) if v} or None,
            agent=ctx.principal.agent,
            toolsets=ctx.principal.toolsets,
        )


def _error(ctx: ToolContext, info: ErrorInfo) -> ToolResult:
    return ToolResult(text.NAME, ctx.call_id, "error", error=info)


def _validated(model: type[BaseModel], raw: dict[str, Any], name: str) -> Any:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return _Raise(TypeError(f"{name}(): {problems}"))
