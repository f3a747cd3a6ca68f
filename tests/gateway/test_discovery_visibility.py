"""A tool a principal may not see changes nothing of what discovery tells that principal.

Compared for many requests: a catalog holding tools hidden from the caller, and the same catalog
without them. Every answer (pages, totals, cursors, "nothing matched", suggestions, errors) must be
identical, with the semantic layer and without it; otherwise a caller could probe which words the
hidden tools contain.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gateway import Catalog, Gateway, Policy, Principal, Rule, ToolContext, ToolDefinition, run_sync
from gateway.search import index as search_index
from gateway.search import semantic_available
from tests.discovery_answers import as_page

from .sample_tools import ALL_TOOLS, NoteParams

GUEST = Principal("guest")
AGENT = Principal("ana", frozenset({"support"}))


def _tool(name: str, category: str, action: str, summary: str) -> ToolDefinition:
    def handler(params: NoteParams) -> str:
        return params.title

    return ToolDefinition(
        name=name,
        category=category,
        action=action,
        summary=summary,
        description=summary,
        params=NoteParams,
        handler=handler,
    )


VISIBLE = [
    _tool("billing_list_invoices", "billing", "list", "List the invoices of an account, newest first."),
    _tool("billing_pay_invoice", "billing", "update", "Pay an open invoice with the card on file."),
    _tool("mail_send_message", "mail", "send", "Send an email to one or more people."),
    _tool("mail_search_messages", "mail", "search", "Search email by sender, subject or words."),
    _tool("calendar_create_event", "calendar", "create", "Create a meeting or an appointment."),
    _tool("calendar_list_events", "calendar", "list", "List the events of a day or a week."),
]
HIDDEN = [
    _tool("support_open_ticket", "support", "create", "Open a support ticket for a customer's complaint."),
    _tool("support_escalate_ticket", "support", "update", "Escalate a ticket to the second-level team."),
    _tool("support_refund_order", "support", "update", "Refund a customer's order in full or in part."),
    _tool("support_close_ticket", "support", "delete", "Close a resolved ticket and notify the customer."),
]
REQUESTS: list[dict[str, Any]] = [
    {"query": q}
    for q in (
        "ticket",
        "open a ticket",
        "tickt",
        "refund",
        "refund my order",
        "a customer complained",
        "escalate",
        "support",
        "support_",
        "support_open_ticket",
        "close",
        "delete a note",
        "read a file",
        "send an email",
        "pay an invoice",
        "what's on my calendar this week",
        "order",
        "second-level team",
        "zzz qqq",
        "notes",
    )
] + [
    {"query": "ticket", "limit": 2},
    {"query": "list", "limit": 2},
    {"query": "update", "actions": ["update"]},
    {"query": "close a ticket", "actions": ["delete"]},
    {"categories": ["support"]},
    {"query": "ticket", "categories": ["support"]},
    {"categories": ["billing"]},
    {"actions": ["create"]},
    {"actions": ["delete"], "limit": 1},
    {},
]


@pytest.fixture(params=["lexical", "hybrid"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "hybrid" and not semantic_available():
        pytest.skip("the semantic layer (the search extra) is not installed")
    if request.param == "lexical":
        monkeypatch.setattr(search_index, "semantic_available", lambda: False)
    yield request.param


def _answers(gw: Gateway, principal: Principal) -> list[Any]:
    answers = []
    context = ToolContext(principal=principal)
    for request in REQUESTS:
        result = run_sync(gw.call("discover_tools", request, context))
        answers.append((result.status, result.output, result.error))
        cursor = result.output.get("next_cursor") if result.ok else None
        if cursor:
            more = run_sync(gw.call("discover_tools", {**request, "cursor": cursor}, context))
            answers.append((more.status, more.output, more.error))
    return answers


def test_hidden_tools_change_no_answer_of_discovery(engine: str) -> None:
    tools = [*ALL_TOOLS, *VISIBLE]
    others = sorted({d.category for d in Catalog(tools)})
    policy = Policy(
        rules=(
            Rule("allow", categories=("support",), roles=("support",)),
            Rule("allow", categories=tuple(others)),
        ),
        default="deny",
    )
    with_hidden = Gateway(Catalog([*tools, *HIDDEN]), policy=policy, search_cache_dir=False)
    without = Gateway(Catalog(tools), search_cache_dir=False)
    assert _answers(with_hidden, GUEST) == _answers(without, GUEST)
    # The tools are there for those who may see them: the comparison is not vacuous.
    found = as_page(with_hidden.discover(AGENT, query="open a ticket"))
    assert found["tools"][0]["name"] == "support_open_ticket"
    assert as_page(with_hidden.discover(GUEST, query="ticket"))["total"] == 0


def test_the_total_counts_the_tools_that_match_with_the_semantic_layer_too() -> None:
    if not semantic_available():
        pytest.skip("the semantic layer (the search extra) is not installed")
    catalog = Catalog([*ALL_TOOLS, *VISIBLE, *HIDDEN])
    hybrid = Gateway(catalog, search_cache_dir=False)
    lexical_index = search_index.SearchIndex(catalog, semantic=False)
    assert hybrid.index().semantic
    for request in REQUESTS:
        query = request.get("query")
        if not query:
            continue
        filters: dict[str, Any] = {"categories": request.get("categories"), "actions": request.get("actions")}
        out = as_page(hybrid.discover(Principal(), query=query, limit=2, **filters))
        matches = lexical_index.page(query, limit=1, **filters)[1]
        assert out["total"] == matches, query
        assert ("next_cursor" in out) == (matches > 2), query
