"""The answers of `discover_tools` (an overview, a ranked page, or an honest "nothing matched") and of
`get_tool_schema`.

Pure functions over the tools one principal may see and the search index; the `Gateway` decides
who sees what and hands both in. Pages are cut with an opaque cursor bound to the request, so a
cursor from one query cannot page through another.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NotRequired, TypedDict, cast, final

from .actions import ACTIONS, normalize_action
from .definition import ToolDefinition
from .errors import ToolInputError
from .names import closest_names
from .rendering import safe_text, to_jsonable
from .search import SearchIndex
from .search.boosts import EvenBoosts
from .search.verbs import analyse
from .usage.learned import LearnedVotes

MAX_DISCOVER_LIMIT = 50
VOTE_WEIGHT = 2.0
"""A learned vote of 1 adds twice the page's best text score: requests made before find where they
ended, whatever the tools' text says; a weak vote only reorders near neighbours."""
LEAD_MARGIN = 1.0
"""The text's first keeps first place unless a voted tool's blended score passes its own by this
much (the text's best score): a vote takes first place from the words' best match only when it is
strong and the words are not clearly for that match (one past request, at most half a vote, never
does)."""

EVEN_DEPTH = 10
"""A tool asked for often has its votes added up (`LearnedVotes.summed`) only where the store holds
evidence for each of the text's best this many (its rivals could have votes too); elsewhere, below
the first place, the votes of the tools asked for most count as much as the store has seen of them
(`LearnedVotes.crowding`)."""

_LEAD_DEPTH = 50
"""How deep a ranking is read for a tool that may lead, when its best ones all need a confirmation."""

Votes = Callable[[str, Collection[str] | None, Collection[str] | None, int], Mapping[str, float]]
"""(query, categories, actions, depth) -> tool name -> vote in (0, 1]: what earlier traffic says. Only
the strongest `depth` votes (by vote, then name) are read: a page of that depth holds no more voted
tools, so the others may be left out."""


MAX_LISTED_CATEGORIES = 40
"""An unknown category's error lists every category up to this many; past it, the closest few."""


def _categories_hint(unknown: Sequence[str], known: Sequence[str]) -> str:
    """The valid categories, or (a catalog of hundreds) the closest to those asked for and where the
    rest are: an error stays a line, not thousands of names."""
    if len(known) <= MAX_LISTED_CATEGORIES:
        return f"Categories: {', '.join(known)}"
    close = dict.fromkeys(c for u in unknown[:5] for c in closest_names(u, known, limit=5))
    some = f"Closest: {', '.join(close)}. " if close else ""
    return f"{some}Call discover_tools with no arguments for all {len(known):,} categories."


Entry = TypedDict(
    "Entry",
    {
        "name": str,
        "summary": str,
        "category": NotRequired[str],
        "action": NotRequired[str],
        "destructive": NotRequired[bool],
        "with": NotRequired[list[str]],  # the tools usually needed with it (learning from use)
    },
)
"""One tool on a discover page: what neither its name nor the filter says, nothing more; and, when
learning from use knows them, the tools usually needed with it (`with`, a keyword in Python)."""


@final
class Suggestions(TypedDict, total=False):
    """Where to look next when nothing matched."""

    close_names: list[str]
    categories_with_related_tools: list[str]
    categories: list[str]


@final
class Page(TypedDict):
    """The answer of `discover_tools` to a request or a filter: one page of tools."""

    tools: list[Entry]
    total: int
    next_cursor: NotRequired[str]
    message: NotRequired[str]  # nothing matched: said, with `suggestions`
    suggestions: NotRequired[Suggestions]
    next_step: str


@final
class CategoryCount(TypedDict):
    """One category of the overview: how many tools, and how many of each action."""

    name: str
    tools: int
    actions: dict[str, int]


@final
class Overview(TypedDict):
    """The answer of `discover_tools` with no request and no filter: the catalog's shape."""

    total_tools: int
    categories: list[CategoryCount]
    actions: dict[str, int]
    next_step: str


@final
class ExampleCall(TypedDict):
    """The arguments of `invoke_tool` for a tool's first example call."""

    tool_name: str
    parameters: Any


@final
class SchemaAnswer(TypedDict):
    """The answer of `get_tool_schema`; a provider's metadata (`server`, `openapi`, ...) follows
    these keys, never replacing one."""

    name: str
    category: str
    action: str
    description: str
    flags: list[str]
    parameters: dict[str, Any]
    example_requests: NotRequired[list[str]]
    example: NotRequired[ExampleCall]
    note: NotRequired[str]
    companions: NotRequired[list[SchemaAnswer]]  # asked for: the tools usually used with it


def overview(tools: Sequence[ToolDefinition]) -> Overview:
    """Categories and actions with their tool counts."""
    categories: dict[str, dict[str, int]] = {}
    actions: dict[str, int] = {}
    for d in tools:
        per = categories.setdefault(d.category, {})
        per[d.action] = per.get(d.action, 0) + 1
        actions[d.action] = actions.get(d.action, 0) + 1
    return {
        "total_tools": len(tools),
        "categories": [
            {"name": name, "tools": sum(per.values()), "actions": dict(sorted(per.items()))}
            for name, per in sorted(categories.items())
        ],
        "actions": dict(sorted(actions.items())),
        "next_step": "Call discover_tools with a query and/or categories or actions to list matching tools.",
    }


def discover(
    visible: Sequence[ToolDefinition],
    index: SearchIndex,
    *,
    query: str | None = None,
    categories: Collection[str] | None = None,
    actions: Collection[str] | None = None,
    limit: int = 10,
    cursor: str | None = None,
    votes: Votes | None = None,
) -> Page | Overview:
    """One page of the tools in `visible` for a request. No query and no filter: an overview.

    Args:
        visible: the tools the caller may see, sorted by name.
        index: the search index of exactly the tools in `visible`: a tool the caller may not see
            must not change a ranking, a total or whether anything matched.
        query: free text, a tool name or the start of one.
        categories: only tools in these categories.
        actions: only tools with these actions.
        limit: tools per page (at most `MAX_DISCOVER_LIMIT`).
        cursor: `next_cursor` of the previous page of the same request.
        votes: learned evidence for the request's tools (None or no vote: the ranking of the text).
    """
    query = (query or "").strip()
    if not query and not categories and not actions:
        return overview(visible)
    known_categories = sorted({d.category for d in visible}) if categories else []
    unknown = [c for c in categories or () if c not in known_categories]
    if unknown:
        raise ToolInputError(
            f"Unknown categories: {', '.join(safe_text(c, 40) for c in unknown[:5])}. "
            + _categories_hint(unknown, known_categories),
            field="categories",
        )
    if actions:
        # A synonym means its vocabulary word ('remove' is 'delete'); anything else is refused like
        # an unknown category, with the words that are valid.
        actions = [normalize_action(a) or a for a in actions]
        unknown = [a for a in actions if a not in ACTIONS]
        if unknown:
            raise ToolInputError(
                f"Unknown actions: {', '.join(safe_text(a, 40) for a in unknown[:5])}. "
                f"Actions: {', '.join(ACTIONS)}",
                field="actions",
            )
    signature = hashlib.sha256(
        json.dumps([query, sorted(categories or ()), sorted(actions or ())]).encode()
    ).hexdigest()[:8]
    offset = _decode_cursor(cursor, signature) if cursor else 0
    limit = max(1, min(limit, MAX_DISCOVER_LIMIT))
    if query:
        # The index ranks (exact name, name prefix, then score) and filters.
        exact = index.tool(query.strip().lower()) is not None  # an exact name stays first: no vote asked
        depth = max(offset + limit, _LEAD_DEPTH)  # the deepest ranking read below
        learned = votes(query, categories, actions, depth) if votes is not None and not exact else {}

        def ranked(depth: int) -> tuple[list[ToolDefinition], int]:
            found, total = scored_page(
                index, query, learned, categories=categories, actions=actions, depth=depth
            )
            return [d for d, _ in found], total

        first, total = ranked(offset + limit)
        if not exact:
            asked = asked_actions(query, actions)
            before, first = first, _asked_first(first, asked, ranked)
            if learned and first is not before:
                first = _lead_held(
                    first, asked, index, query, learned, categories=categories, actions=actions
                )
        page = first[offset : offset + limit]
    else:
        pool = [
            d
            for d in visible
            if (not categories or d.category in categories) and (not actions or d.action in actions)
        ]
        page, total = pool[offset : offset + limit], len(pool)
    tools = [_entry(d, categories, actions) for d in page]
    if total:
        step = "Call get_tool_schema on the chosen tool before invoke_tool."
        if offset + limit < total:
            cursor = _encode_cursor(offset + limit, signature)
            return Page(tools=tools, total=total, next_cursor=cursor, next_step=step)
        return Page(tools=tools, total=total, next_step=step)
    return Page(
        tools=tools,
        total=total,
        message="No tool matched."
        if query
        else "No tool has that category and action."
        if categories
        else "No tool has that action.",
        suggestions=_suggestions(visible, index, query, known_categories),
        next_step="Try other words (a verb and an object, e.g. 'delete event'), drop the filters, "
        "or browse a category with discover_tools(categories=[...]).",
    )


def asked_actions(query: str, actions: Collection[str] | None = None) -> frozenset[str]:
    """The actions a request asks: those its words name ("cancel my 3pm" names delete, "move my
    dentist appointment" none, `gateway.search.verbs`) and those of its actions filter."""
    _, named, whole, _, _ = analyse(query)
    return frozenset(named) | frozenset(whole) | frozenset(actions or ())


def may_lead(d: ToolDefinition, asked: Collection[str]) -> bool:
    """Whether `d` may rank first for a request asking `asked`: a tool that needs confirmation and
    deletes only when the request asks to delete ("cancel my 3pm" does; "move my dentist
    appointment", "show my events" and "create an event" do not)."""
    return not (d.is_destructive and d.action == "delete") or "delete" in asked


def _asked_first(
    first: list[ToolDefinition],
    asked: Collection[str],
    ranked: Callable[[int], tuple[list[ToolDefinition], int]],
) -> list[ToolDefinition]:
    """`first` (a ranking's best) with its best tool that may lead moved to the top when its top needs
    a confirmation the request did not ask for: however the text, the dense layer or learning ranked
    it, a destructive tool the words do not ask is never the first answer. Only the tools between
    the two move, one place down, so every page of the request sees the same order."""
    if not first or may_lead(first[0], asked):
        return first
    lead = next((i for i, d in enumerate(first) if may_lead(d, asked)), None)
    if lead is None and len(first) < _LEAD_DEPTH:
        deeper, _ = ranked(_LEAD_DEPTH)
        lead = next((i for i, d in enumerate(deeper) if may_lead(d, asked)), None)
        if lead is None:
            return first
        return [deeper[lead], *first[: len(first) - 1]] if lead >= len(first) else _moved(first, lead)
    return first if lead is None else _moved(first, lead)


def _lead_held(
    first: list[ToolDefinition],
    asked: Collection[str],
    index: SearchIndex,
    query: str,
    learned: Mapping[str, float],
    *,
    categories: Collection[str] | None,
    actions: Collection[str] | None,
) -> list[ToolDefinition]:
    """`first` (a ranking with votes whose top was moved by `_asked_first`) with the text's best tool
    that may lead on top instead, unless the voted one's blended score passes its own by
    `LEAD_MARGIN`: the hold that keeps the text's first in place holds for the tool that replaces a
    first needing a confirmation too (one past request never puts a near-twin first)."""
    text, _ = index.page(query, categories=categories, actions=actions, limit=_LEAD_DEPTH)
    lead = next((d for d, _ in text if may_lead(d, asked)), None)
    if lead is None or first[0] is lead:
        return first
    found, _ = scored_page(index, query, learned, categories=categories, actions=actions, depth=_LEAD_DEPTH)
    scores = {d.name: score for d, score in found}
    if scores.get(first[0].name, 0.0) - scores.get(lead.name, 0.0) >= LEAD_MARGIN:
        return first
    at = next((i for i, d in enumerate(first) if d is lead), None)
    return [lead, *first[: len(first) - 1]] if at is None else _moved(first, at)


def _moved(first: list[ToolDefinition], lead: int) -> list[ToolDefinition]:
    return [first[lead], *first[:lead], *first[lead + 1 :]]


def scored_page(
    index: SearchIndex,
    query: str,
    learned: Mapping[str, float],
    *,
    categories: Collection[str] | None,
    actions: Collection[str] | None,
    depth: int,
) -> tuple[list[tuple[ToolDefinition, float]], int]:
    """The text's best `depth` with the score each is ordered by (already scaled by its rank weight).

    With learned votes, `VOTE_WEIGHT` times each vote is added to its tool's score (the scores
    divided by the best) and the text's first keeps its place unless beaten by `LEAD_MARGIN`; how the
    votes of tools asked for often count depends on how much of the text's best `EVEN_DEPTH` the
    store has seen (`LearnedVotes`, `EvenBoosts`). The total counts the voted tools too. The console's playground
    shows these scores.
    """
    if not learned:
        return index.page(query, categories=categories, actions=actions, limit=depth)
    boosts = _boosts(learned, depth)
    if isinstance(learned, LearnedVotes) and (learned.summed or learned.crowding):
        # A tool asked for often adds up its two votes where the store holds evidence for each of the
        # text's best `EVEN_DEPTH` (each rival could have its votes added up too); elsewhere summed
        # votes would pass a tool the store has never seen for lack of history alone, and below the
        # first place the votes of the tools asked for most are scaled by the share of them it has seen.
        summed = _boosts({**learned, **learned.summed}, depth) if learned.summed else boosts
        boosts = EvenBoosts(boosts, summed, learned.evidence, EVEN_DEPTH, learned.crowding)
    return index.page(
        query, categories=categories, actions=actions, limit=depth, boosts=boosts, hold=LEAD_MARGIN
    )


def _boosts(votes: Mapping[str, float], depth: int) -> dict[str, float]:
    """What `votes` add to their tools' scores on a page of `depth`, which holds at most `depth` voted
    tools: the strongest votes are the ones that can place (a weaker vote with a strong text score
    is already among the text's best)."""
    if len(votes) > depth:
        votes = {name: -vote for vote, name in sorted([(-v, name) for name, v in votes.items()])[:depth]}
    return {name: VOTE_WEIGHT * vote for name, vote in votes.items()}


def _entry(d: ToolDefinition, categories: Collection[str] | None, actions: Collection[str] | None) -> Entry:
    """One tool on a page: its name and what it does, then only what neither its name nor the filter
    says (its category, its action) and, when it is destructive, that it is. The rest (every flag,
    the parameters) is in its schema; a page stays in the model's context for the whole conversation."""
    entry = Entry(name=d.name, summary=d.summary)
    if not d.name.startswith(f"{d.category}_") and set(categories or ()) != {d.category}:
        entry["category"] = d.category
    named = {normalize_action(word) for word in d.name.split("_")}
    if d.action not in named and set(actions or ()) != {d.action}:
        entry["action"] = d.action
    if d.is_destructive:
        entry["destructive"] = True
    return entry


def _suggestions(
    visible: Sequence[ToolDefinition], index: SearchIndex, query: str, known_categories: list[str]
) -> Suggestions:
    suggestions = Suggestions()
    if query:
        close = closest_names(query, [d.name for d in visible])
        if close:
            suggestions["close_names"] = close
        related = sorted({d.category for d, _ in index.search(query)})
        if related:
            suggestions["categories_with_related_tools"] = related[:5]
    suggestions["categories"] = known_categories or sorted({d.category for d in visible})
    return suggestions


def _encode_cursor(offset: int, signature: str) -> str:
    return base64.urlsafe_b64encode(f"{offset}:{signature}".encode()).decode().rstrip("=")


def cursor_offset(cursor: str) -> int:
    """Where the page of a `next_cursor` starts (0 for a cursor that is not one): for showing ranks;
    `discover` itself checks that a cursor belongs to its query."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        return max(0, int(base64.urlsafe_b64decode(padded.encode()).decode().partition(":")[0]))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return 0


def _decode_cursor(cursor: str, signature: str) -> int:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        offset_text, _, sig = base64.urlsafe_b64decode(padded.encode()).decode().partition(":")
        offset = int(offset_text)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        offset, sig = -1, ""
    if offset < 0 or sig != signature:
        raise ToolInputError(
            "The cursor is not valid for this query; repeat the same query, categories and actions with the "
            "cursor from its answer, or omit the cursor.",
            field="cursor",
        )
    return offset


def with_companions(page: Page, named: Mapping[str, list[str]]) -> None:
    """Name under each hit of `page` the tools usually needed with it (`Usage.companions`)."""
    for entry in page["tools"]:
        found = named.get(entry["name"])
        if found:
            entry["with"] = found


def schema_answer(d: ToolDefinition) -> SchemaAnswer:
    """The answer of get_tool_schema: description, JSON schema, flags, examples."""
    out = SchemaAnswer(
        name=d.name,
        category=d.category,
        action=d.action,
        description=d.description,
        flags=list(d.flags),
        parameters=d.json_schema,
    )
    if d.example_requests:
        out["example_requests"] = list(d.example_requests)
    if d.example_calls:
        out["example"] = {"tool_name": d.name, "parameters": to_jsonable(d.example_calls[0])}
    if d.is_destructive:
        out["note"] = "Destructive: the user must approve each call; invoke_tool returns a pending_id first."
    if not d.metadata:
        return out
    provided = {key: to_jsonable(value) for key, value in d.metadata.items() if key not in out}
    return cast(SchemaAnswer, {**out, **provided})
