"""The discovery playground: the page a model would get for a request, each score split into its parts.

It runs the same ranking as `discover_tools` for the chosen principal (their visible tools, their
index, the learned votes) but records nothing: a search made here teaches the gateway nothing and
never shows up in what the traffic says.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import discovery
from ..context import Principal
from ..engine import Gateway
from ..errors import ToolInputError


@dataclass(frozen=True)
class Scored:
    rank: int
    name: str
    category: str
    action: str
    summary: str
    flags: tuple[str, ...]
    name_match: str  # "exact", "prefix" or ""
    lexical: float  # BM25F over the query's words
    semantic: float | None  # cosine similarity of the embeddings (None: no semantic layer)
    rank_weight: float
    learned: float  # the vote of earlier sessions' requests, in (0, 1]
    score: float | None  # what the page is ordered by after the name matches (None: no query)
    placed: str = ""  # why the row is not where its score alone would put it (the lead rule)


@dataclass
class Result:
    tools: list[Scored] = field(default_factory=list)
    total: int = 0
    error: str = ""
    message: str = ""
    suggestions: dict[str, Any] = field(default_factory=dict)
    semantic: bool = False
    learning: bool = False
    offset: int = 0  # the rank before this page's first row
    next_cursor: str = ""  # the next page's cursor, when there is one


def run(
    gw: Gateway,
    principal: Principal,
    *,
    query: str,
    categories: Collection[str] = (),
    actions: Collection[str] = (),
    limit: int = 10,
    cursor: str = "",
) -> Result:
    """The ranked page for a request, as `discover_tools` would answer `principal` (the page after
    `cursor`, a `next_cursor` of the page before)."""
    visible = gw.visible(principal)
    index = gw.index(principal)
    usage = gw.usage
    query = query.strip()
    cats, acts = list(categories) or None, list(actions) or None
    learned: Mapping[str, float] = {}
    if usage is not None and query:
        learned = usage.votes(visible, query, principal=principal.id, categories=cats, actions=acts)
    result = Result(semantic=index.semantic, learning=usage is not None)
    if not query and not cats and not acts:
        result.error = "Give a query, a category or an action."
        return result
    try:
        out = discovery.discover(
            visible,
            index,
            query=query,
            categories=cats,
            actions=acts,
            limit=limit,
            cursor=cursor or None,
            votes=(lambda q, c, a, d: learned) if learned else None,
        )
    except ToolInputError as exc:
        result.error = exc.message
        return result
    assert "tools" in out  # a request or a filter, never the overview
    result.offset = discovery.cursor_offset(cursor) if cursor else 0
    result.next_cursor = out.get("next_cursor", "")
    result.total = out["total"]
    result.message = out.get("message", "")
    result.suggestions = dict(out.get("suggestions", {}))
    names = [t["name"] for t in out["tools"]]
    parts = index.explain(query, names) if query else {}
    scores: dict[str, float] = {}
    by_score: list[str] = []
    depth = result.offset + limit
    if query:  # what the page is ordered by, as discover scores it
        scored, _ = discovery.scored_page(index, query, learned, categories=cats, actions=acts, depth=depth)
        scores = {d.name: float(score) for d, score in scored}
        by_score = [d.name for d, _ in scored]
    asked = discovery.asked_actions(query, acts) if query else frozenset()
    key = query.lower()
    for rank, hit in enumerate(out["tools"], start=result.offset + 1):
        name = hit["name"]
        d = gw.catalog.get(name)
        lexical, semantic = parts.get(name, (0.0, None))
        result.tools.append(
            Scored(
                rank=rank,
                name=name,
                # A page entry names its category and action only when the name does not say them.
                category=d.category if d is not None else str(hit.get("category", "")),
                action=d.action if d is not None else str(hit.get("action", "")),
                summary=hit["summary"],
                flags=tuple(d.flags)
                if d is not None
                else (("destructive",) if hit.get("destructive") else ()),
                name_match="exact" if name == key else "prefix" if key and name.startswith(key) else "",
                lexical=round(lexical, 4),
                semantic=None if semantic is None else round(semantic, 4),
                rank_weight=d.rank_weight if d is not None else 1.0,
                learned=round(learned.get(name, 0.0), 4),
                score=None if name not in scores else round(scores[name], 4),
                placed=_placed(rank, name, d, by_score, asked, named=bool(key) and name.startswith(key)),
            )
        )
    return result


def _placed(rank: int, name: str, d: Any, by_score: list[str], asked: frozenset[str], *, named: bool) -> str:
    """Why a row is not at the rank its score gives it: a tool that deletes never leads a request
    that does not ask to delete (`discovery.may_lead`), so the best one that may takes the first
    place and the rows above it move down one."""
    if named or name not in by_score or by_score.index(name) == rank - 1:
        return ""
    if rank == 1:
        return "first by the lead rule: the best tool that may lead (the tools scored above it delete, which this request does not ask)"
    if d is not None and not discovery.may_lead(d, asked):
        return "down one: it deletes, and this request does not ask to delete, so it may not lead"
    return "down one: the tool placed first by the lead rule was scored below it"


@dataclass
class Traffic:
    found_nothing: list[dict[str, Any]] = field(default_factory=list)
    never_followed: list[dict[str, Any]] = field(default_factory=list)
    never_found: list[str] = field(default_factory=list)
    never_found_count: int = 0
    learning: bool = False


def traffic(gw: Gateway, *, called: Collection[str] = (), top: int = 20) -> Traffic:
    """What the usage store says: queries that found nothing, that no call followed, tools never found.

    A tool is found when a search led to a call of it (a learned pair) or when it was called at all
    (`called`: the tools the audit log names), however the caller came by its name.
    """
    usage = gw.usage
    if usage is None:
        return Traffic()
    stats = usage.stats(top)
    found = {tool for entry in usage.store.export() for tool in entry["tools"]} | set(called)
    never = [d.name for d in gw.catalog if d.name not in found]
    return Traffic(
        found_nothing=list(stats.get("found_nothing", [])),
        never_followed=list(stats.get("never_followed", [])),
        never_found=never[:200],
        never_found_count=len(never),
        learning=True,
    )
