"""What each console route does: read the gateway, the audit log or the usage store, and render."""

from __future__ import annotations

import json
from datetime import datetime

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse

from ..context import Principal
from ..discovery import overview
from ..errors import UserError
from ..gate.confirmation import ApprovalRefused, ProgramEnded
from ..limits import LimitState, Unreachable
from ..named_toolsets import confine
from ..runtime import principal_from
from . import activity, approvals, catalog, connections, findability, playground
from .site import Console

PAGE_SIZES = ("10", "20", "50", "2")
"""Rows a playground page may show (10 unless asked; 50 is the most `discover_tools` gives)."""
OUTCOMES = (
    "executed",
    "failed",
    "pending_confirmation",
    "approved",
    "approved_by_host",
    "denied_by_host",
    "declined",
    "refused",
    "limited",
    "denied",
    "invalid",
    "unknown",
    "cancelled",
    "interrupted",
)


class Pages:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.gw = console.gw
        self.settings = console.settings
        self.findings = findability.Reports(self.gw)

    # -- approvals ---------------------------------------------------------------------------

    async def approvals(self, request: Request, who: str) -> Response:
        done = request.query_params.get("done", "")
        return self.console.render(
            request,
            "approvals.html",
            page="approvals",
            waiting=approvals.waiting(self.gw),
            done=done
            if done in ("approved", "denied", "gone", "refused", "ended", "invalid", "revoked")
            else "",
            done_id=request.query_params.get("id", "")[:64],
            rules=approvals.standing(self.gw),
        )

    async def approval_rows(self, request: Request, who: str) -> Response:
        return self.console.render(request, "_pending_rows.html", waiting=approvals.waiting(self.gw))

    async def decide(self, request: Request, who: str) -> Response:
        pending_id, verb = request.path_params["pending_id"], request.path_params["verb"]
        is_api = request.url.path.startswith(f"{request.scope.get('root_path', '')}/api/")
        if verb not in ("approve", "deny") or not approvals.valid_id(pending_id):
            return JSONResponse(
                {"error": "not_found", "message": "No such pending call or verb."}, status_code=404
            )
        verdict: str
        try:
            only = await _chosen_writes(request, is_api)
            verdict = approvals.decide(self.gw, pending_id, approve=verb == "approve", who=who, only=only)
        except ApprovalRefused as exc:
            if is_api:
                return JSONResponse({"error": "forbidden", "message": str(exc)}, status_code=403)
            verdict = "ended" if isinstance(exc, ProgramEnded) else "refused"
        except UserError as exc:  # a write number the plan does not have
            if is_api:
                return JSONResponse({"error": "invalid", "message": str(exc)}, status_code=400)
            verdict = "invalid"
        if is_api:
            status = 200 if verdict != "gone" else 409
            return JSONResponse({"pending_id": pending_id, "result": verdict}, status_code=status)
        root = request.scope.get("root_path", "")
        return RedirectResponse(f"{root}/approvals?done={verdict}&id={pending_id}", status_code=303)

    async def revoke(self, request: Request, who: str) -> Response:
        """End a standing approval at once (from any replica: they share the store); audited."""
        rule_id = request.path_params["rule_id"]
        is_api = request.url.path.startswith(f"{request.scope.get('root_path', '')}/api/")
        revoked = approvals.valid_id(rule_id) and approvals.revoke(self.gw, rule_id, who=who)
        if is_api:
            return JSONResponse(
                {"rule_id": rule_id, "result": "revoked" if revoked else "gone"},
                status_code=200 if revoked else 409,
            )
        root = request.scope.get("root_path", "")
        return RedirectResponse(
            f"{root}/approvals?done={'revoked' if revoked else 'gone'}&id={rule_id}", status_code=303
        )

    async def connections(self, request: Request, who: str) -> Response:
        done = request.query_params.get("done", "")
        return self.console.render(
            request,
            "connections.html",
            page="connections",
            connections=connections.listed(self.gw),
            done=done if done in ("disconnected", "gone") else "",
        )

    async def disconnect(self, request: Request, who: str) -> Response:
        form = await request.form()
        principal, service = str(form.get("principal", ""))[:200], str(form.get("service", ""))[:200]
        done = connections.disconnect(self.gw, principal, service, who=who)
        root = request.scope.get("root_path", "")
        return RedirectResponse(
            f"{root}/connections?done={'disconnected' if done else 'gone'}", status_code=303
        )

    async def api_rules(self, request: Request, who: str) -> Response:
        return JSONResponse({"rules": [r.as_view() for r in self.gw.gate.rules()]})

    async def api_pending(self, request: Request, who: str) -> Response:
        return JSONResponse({"pending": [approvals.as_json(w) for w in approvals.waiting(self.gw)]})

    # -- activity ----------------------------------------------------------------------------

    def _filters(self, request: Request) -> activity.Filters:
        q = request.query_params
        return activity.Filters(
            principal=q.get("principal", "")[:200],
            agent=q.get("agent", "")[:200],
            tool=q.get("tool", "")[:200],
            outcome=q.get("outcome", "")[:40],
            since=self._moment(q.get("since", "")),
            until=self._moment(q.get("until", "")),
        )

    def _moment(self, text: str) -> float | None:
        if not text:
            return None
        try:
            parsed = datetime.fromisoformat(text[:40])
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=self.console.zone)
        return parsed.timestamp()

    async def activity(self, request: Request, who: str) -> Response:
        filters = self._filters(request)
        before = request.query_params.get("before", "")
        page = activity.read_page(
            self.settings.audit_path, filters, before=int(before) if before.isdigit() else None
        )
        query = {k: v for k, v in request.query_params.items() if k != "before" and v}
        return self.console.render(
            request,
            "activity.html",
            page="activity",
            rows=page.rows,
            older=page.older,
            query=query,
            filters=filters,
            outcomes=OUTCOMES,
            logging=self.settings.audit.enabled,
            path=str(self.settings.audit_path),
        )

    async def activity_row(self, request: Request, who: str) -> Response:
        found = activity.read_row(self.settings.audit_path, int(request.path_params["offset"]))
        if found is None:
            return self.console.render(
                request, "missing.html", 404, page="activity", what="No audit line starts there."
            )
        row, related = found
        params = row.record.get("params")
        return self.console.render(
            request,
            "activity_row.html",
            page="activity",
            row=row,
            related=related,
            params=json.dumps(params, indent=2, ensure_ascii=False) if params is not None else "",
        )

    async def export(self, request: Request, who: str) -> Response:
        return StreamingResponse(
            activity.export(self.settings.audit_path, self._filters(request)),
            media_type="application/x-ndjson",
            headers={"Content-Disposition": 'attachment; filename="audit.jsonl"'},
        )

    async def api_activity(self, request: Request, who: str) -> Response:
        before = request.query_params.get("before", "")
        page = activity.read_page(
            self.settings.audit_path, self._filters(request), before=int(before) if before.isdigit() else None
        )
        rows = [{"id": r.offset, "status": r.status, **r.record} for r in page.rows]
        return JSONResponse({"rows": rows, "older": page.older})

    # -- discovery -----------------------------------------------------------------------------

    async def discovery(self, request: Request, who: str) -> Response:
        q = request.query_params
        known, principal, toolset = self._chosen(request)
        categories = [c for c in q.getlist("category") if c][:20]
        actions = [a for a in q.getlist("action") if a][:20]
        query = q.get("query", "")[:4096]
        cursor = q.get("cursor", "")[:200]
        limit = int(q["limit"]) if q.get("limit", "") in PAGE_SIZES else int(PAGE_SIZES[0])
        result = None
        if query or categories or actions:
            result = playground.run(
                self.gw,
                principal,
                query=query,
                categories=categories,
                actions=actions,
                limit=limit,
                cursor=cursor,
            )
        # What the next page's link repeats (the cursor belongs to exactly these).
        kept = ("query", "category", "action", "principal", "toolset", "limit")
        request_args = [(k, v) for k, v in q.multi_items() if k in kept]
        visible = overview(self.gw.visible(principal))
        return self.console.render(
            request,
            "discovery.html",
            page="discovery",
            principals=known,
            principal=principal,
            toolsets=self.gw.policy.toolsets.names,
            toolset=toolset if principal.toolsets else "",
            query=query,
            categories=categories,
            actions=actions,
            overview=visible,
            result=result,
            request_args=request_args,
            limit=limit,
            page_sizes=PAGE_SIZES,
            traffic=playground.traffic(self.gw, called=activity.tools_named(self.settings.audit_path)),
        )

    def _chosen(self, request: Request) -> tuple[list[Principal], Principal, str]:
        """The principals known, the one the page asks for (confined to its toolset, as a client
        confined to it would be) and that toolset's name."""
        q = request.query_params
        known = catalog.principals(self.settings)
        chosen = q.get("principal", self.settings.principal)
        principal = next((p for p in known if p.id == chosen), principal_from(self.settings))
        toolset = q.get("toolset", "")[:64]
        if toolset in self.gw.policy.toolsets:
            principal = confine(principal, [toolset])
        return known, principal, toolset

    async def findability(self, request: Request, who: str) -> Response:
        known, principal, toolset = self._chosen(request)
        job = self.findings.of(principal)
        return self.console.render(
            request,
            "findability.html",
            page="findability",
            principals=known,
            principal=principal,
            toolsets=self.gw.policy.toolsets.names,
            toolset=toolset if principal.toolsets else "",
            job=job,
            shown=200,
        )

    # -- catalog -------------------------------------------------------------------------------

    async def catalog(self, request: Request, who: str) -> Response:
        category = request.query_params.get("category", "")[:100]
        action = request.query_params.get("action", "")[:40]
        named = request.query_params.get("toolset", "")[:64]
        toolset = self.gw.policy.toolsets.get(named) if named else None
        if named and toolset is None:
            return self.console.render(
                request, "missing.html", 404, page="catalog", what="No toolset by that name."
            )
        listed = catalog.tools(self.gw, category=category, action=action, toolset=toolset)
        held = self.gw.catalog if toolset is None else catalog.tools(self.gw, toolset=toolset)
        return self.console.render(
            request,
            "catalog.html",
            page="catalog",
            overview=overview(tuple(held)),
            toolsets=self.gw.policy.toolsets.names,
            toolset=named,
            category=category,
            action=action,
            tools=listed[:500],
            more=max(0, len(listed) - 500),
            sources=catalog.sources(self.gw),
            servers=catalog.servers(self.gw, self.settings),
            accepted=request.query_params.get("accepted", ""),
            limits=self._limits(),
            on_error=self.gw.limits.on_error,
        )

    def _limits(self) -> list[LimitState] | None:
        """Each limit's state for the configured principals; None: its store cannot be reached."""
        try:
            return self.gw.limits.states(catalog.principals(self.settings))
        except Unreachable:
            return None

    async def tool(self, request: Request, who: str) -> Response:
        d = self.gw.catalog.get(request.path_params["name"])
        if d is None:
            return self.console.render(
                request, "missing.html", 404, page="catalog", what="No tool by that name."
            )
        return self.console.render(
            request, "tool.html", page="catalog", tool=catalog.tool_view(self.gw, self.settings, d)
        )

    async def accept(self, request: Request, who: str) -> Response:
        form = await request.form()
        tool = str(form.get("tool", "")) or None
        server = request.path_params["server"]
        try:
            done = catalog.accept(self.gw, server, tool)
        except (OSError, UserError) as exc:
            return JSONResponse({"error": "failed", "message": str(exc)}, status_code=500)
        root = request.scope.get("root_path", "")
        return RedirectResponse(f"{root}/catalog?accepted={'1' if done else '0'}", status_code=303)


async def _chosen_writes(request: Request, is_api: bool) -> list[int] | None:
    """The writes of a plan a person chose: the page's checked boxes (`only`, one per write), or the
    API's `?only=1,3`; None when the request names none (a single call, or a whole plan by the API).

    Raises:
        UserError: a value that is no write number.
    """
    if is_api:
        raw = request.query_params.get("only")
        values = raw.split(",") if raw is not None else None
    else:
        form = await request.form()
        values = [str(v) for v in form.getlist("only")] if "plan" in form else None
    if values is None:
        return None
    try:
        return [int(v) for v in values if v.strip()]
    except ValueError:
        raise UserError(f"{', '.join(values)[:100]!r} is not a list of write numbers such as 1,3") from None
