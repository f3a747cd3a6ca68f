"""Learning from use at scale: a search asks only the votes its page reads, and its answers do not change."""

from __future__ import annotations

import json

from gateway import Catalog, Gateway, Principal
from gateway import discovery as discovery_module
from gateway.definition import NoParams, ToolDefinition
from gateway.usage import SqliteUsageStore, Usage

ANA = Principal("ana")
SUBJECTS = [
    "invoice",
    "ticket",
    "order",
    "shipment",
    "payment",
    "refund",
    "contract",
    "lead",
    "survey",
    "badge",
]
KINDS = ["monthly", "weekly", "yearly", "regional", "team", "audit", "summary", "export", "draft", "public"]


def _nothing(params: NoParams) -> None:
    return None


def _tools() -> list[ToolDefinition]:
    """A hundred report tools, one per subject and kind, all of them asked for in like words."""
    return [
        ToolDefinition(
            name=f"{subject}_{kind}_report",
            category=subject,
            action="read",
            summary=f"Read the {kind} {subject} report.",
            description=f"The {kind} report of every {subject}.",
            params=NoParams,
            handler=_nothing,
            read_only=True,
        )
        for subject in SUBJECTS
        for kind in KINDS
    ]


def _history() -> list[str]:
    """Past requests for every tool, several each, so that every tool's pool votes for a report."""
    lines = []
    for subject in SUBJECTS:
        for n, kind in enumerate(KINDS):
            for words in ("show the {k} {s} report", "{k} report of {s}s", "get me the {s} numbers, {k}")[
                : 1 + n % 3
            ]:
                query = words.format(k=kind, s=subject)
                lines.append(json.dumps({"query": query, "tools": [f"{subject}_{kind}_report"]}))
    return lines


def test_a_search_reads_only_the_votes_its_page_holds_and_answers_as_with_all_of_them() -> None:
    tools = _tools()
    usage = Usage(SqliteUsageStore(":memory:"), check_seconds=0.0)
    usage.import_lines(_history())
    gw = Gateway(Catalog(tools), search_cache_dir=False, usage=usage)
    visible, index = gw.visible(ANA), gw.index(ANA)

    def every_vote(query: str, categories: object, actions: object, depth: int) -> dict[str, float]:
        return dict(usage.votes(visible, query, principal=ANA.id))  # all of them, whatever the depth

    for query in ("the monthly report", "report of payments", "weekly numbers please", "audit"):
        votes = usage.votes(visible, query, principal=ANA.id)
        strongest = dict(sorted(votes.items(), key=lambda item: (-item[1], item[0]))[:50])
        assert usage.votes(visible, query, principal=ANA.id, limit=50) == strongest
        for limit in (5, 10, 50):
            page = gw.discover(ANA, query=query, limit=limit)
            assert page == discovery_module.discover(
                visible, index, query=query, limit=limit, votes=every_vote
            )
            if "next_cursor" in page:  # the next page too
                cursor = page["next_cursor"]
                assert gw.discover(ANA, query=query, limit=limit, cursor=cursor) == discovery_module.discover(
                    visible, index, query=query, limit=limit, cursor=cursor, votes=every_vote
                )
    # More tools have a vote than a page of 50 holds: the cut was made.
    assert len(usage.votes(visible, "the monthly report", principal=ANA.id)) > 50
