"""Which tools of a catalog a request can find: each tool's own requests ranked against the whole catalog.

A catalog author writes names and summaries; whether a model that states a need ever reaches the
tool is a question of the whole catalog, not of one tool. For every tool this asks up to three kinds
of request, each ranked by the index against every tool (zero-shot, no learning):

- `example`: the author's own example requests;
- `summary`: the first sentence of its summary, as a person would state it;
- `name`: the words of its name but its category's (`gmail_send_message`: "send message").

and reports the tools no request reaches in the top `depth`, the tools another one always outranks
(on every one of their requests, the same tool is above them), and the summaries with no word of
their own (every word of the summary, stemmed as the index stems it, is in another tool's summary
too: a model reading both cannot tell them apart by it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..definition import ToolDefinition
from .index import SearchIndex
from .text import tokenize, words

DEPTH = 5
"""A tool is found when one of its requests ranks it among the first `DEPTH` (COLT's and ours: R@5)."""
KINDS = ("example", "summary", "name")
_MAX_EXAMPLES = 3
_MAX_WORDS = 30
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]])[.!?](?:\s|$)")


@dataclass(frozen=True)
class ToolFinding:
    """How one tool's requests ranked it.

    Attributes:
        name: the tool.
        ranks: its rank (1 first) for each request asked, by kind; None where it was not in the
            first `depth`.
        shadowed_by: the tool ranked above it on every one of its requests, if one was.
        twin: a tool whose summary has every word of this one's (None: it has a word of its own).
    """

    name: str
    ranks: dict[str, list[int | None]]
    shadowed_by: str | None = None
    twin: str | None = None

    @property
    def found(self) -> bool:
        return any(r is not None for ranks in self.ranks.values() for r in ranks)

    @property
    def first(self) -> bool:
        return any(r == 1 for ranks in self.ranks.values() for r in ranks)

    @property
    def indistinct(self) -> bool:
        return self.twin is not None


@dataclass(frozen=True)
class Findability:
    """The report over a catalog: per tool, and the figures a catalog author checks."""

    depth: int
    tools: list[ToolFinding] = field(default_factory=list)

    @property
    def found(self) -> int:
        return sum(t.found for t in self.tools)

    @property
    def found_share(self) -> float:
        return self.found / len(self.tools) if self.tools else 1.0

    @property
    def first(self) -> int:
        return sum(t.first for t in self.tools)

    def by_kind(self) -> dict[str, tuple[int, int]]:
        """Per kind of request: how many were asked and how many ranked their tool in the first `depth`."""
        out: dict[str, tuple[int, int]] = {}
        for kind in KINDS:
            ranks = [r for t in self.tools for r in t.ranks.get(kind, ())]
            if ranks:
                out[kind] = (len(ranks), sum(r is not None for r in ranks))
        return out

    @property
    def never_found(self) -> list[ToolFinding]:
        return [t for t in self.tools if not t.found]

    @property
    def shadowed(self) -> list[ToolFinding]:
        return [t for t in self.tools if t.shadowed_by is not None]

    @property
    def indistinct(self) -> list[ToolFinding]:
        return [t for t in self.tools if t.twin is not None]

    def as_dict(self) -> dict[str, object]:
        return {
            "tools": len(self.tools),
            "depth": self.depth,
            "found": self.found,
            "found_share": round(self.found_share, 4),
            "first": self.first,
            "requests": {kind: {"asked": n, "found": f} for kind, (n, f) in self.by_kind().items()},
            "never_found": [t.name for t in self.never_found],
            "shadowed": [{"tool": t.name, "by": t.shadowed_by} for t in self.shadowed],
            "indistinct": [{"tool": t.name, "twin": t.twin} for t in self.indistinct],
            "per_tool": {t.name: t.ranks for t in self.tools},
        }


def requests_of(d: ToolDefinition) -> dict[str, list[str]]:
    """The requests asked for `d`, by kind (a kind it has nothing for is absent)."""
    asked: dict[str, list[str]] = {}
    examples = [e.strip() for e in d.example_requests if e.strip()][:_MAX_EXAMPLES]
    if examples:
        asked["example"] = examples
    sentence = _first_sentence(d.summary or d.description or "")
    if sentence:
        asked["summary"] = [sentence]
    # The name's words without its category's: the words alone would be the name itself, which
    # search finds by name whatever the catalog holds.
    category = set(words(d.category))
    named = [w for w in words(d.name) if w not in category] or words(d.name)
    if named:
        asked["name"] = [" ".join(named)]
    return asked


def _first_sentence(text: str) -> str:
    """The first sentence of `text`, at most `_MAX_WORDS` words, without its final stop."""
    text = " ".join(text.split())
    end = _SENTENCE_END.search(text)
    sentence = text[: end.start()] if end else text.rstrip(".!? ")
    return " ".join(sentence.split()[:_MAX_WORDS])


def report(
    index: SearchIndex,
    tools: Sequence[ToolDefinition],
    *,
    depth: int = DEPTH,
    progress: Callable[[int, int], None] | None = None,
) -> Findability:
    """Rank every request of every tool of `tools` against `index` (which holds them all).

    `progress(done, total)` is called now and then with the tools ranked so far.
    """
    twins = _twins(tools)
    findings = []
    for n, d in enumerate(tools):
        ranks: dict[str, list[int | None]] = {}
        above: set[str] | None = None  # the tools ranked above `d` on every request so far
        placed: dict[str, list[int]] = {}
        for kind, texts in requests_of(d).items():
            for text in texts:
                names = [hit.name for hit, _ in index.search(text, limit=depth)]
                rank = names.index(d.name) + 1 if d.name in names else None
                ranks.setdefault(kind, []).append(rank)
                higher = names[: rank - 1] if rank is not None else names
                above = set(higher) if above is None else above & set(higher)
                for i, name in enumerate(higher):
                    placed.setdefault(name, []).append(i)
        shadow = min(above, key=lambda name: (sum(placed[name]), name)) if above else None
        findings.append(ToolFinding(d.name, ranks, shadow, twins.get(d.name)))
        if progress is not None and (n + 1) % 1000 == 0:
            progress(n + 1, len(tools))
    return Findability(depth, findings)


def _twins(tools: Sequence[ToolDefinition]) -> dict[str, str]:
    """For each tool whose summary has no word of its own, a tool whose summary has all of them.

    Words are the index's (stemmed, stop words out); of several such tools, the one with the
    fewest words (the nearest), then by name. A summary without any word the index keeps is not
    judged here: its name's request says whether the tool is found.
    """
    bags = [frozenset(tokenize(d.summary or d.description or "")) for d in tools]
    postings: dict[str, set[int]] = {}
    for i, bag in enumerate(bags):
        for word in bag:
            postings.setdefault(word, set()).add(i)
    twins: dict[str, str] = {}
    for i, bag in enumerate(bags):
        if not bag:
            continue
        rarest = sorted(bag, key=lambda w: len(postings[w]))
        candidates = set(postings[rarest[0]])
        for word in rarest[1:]:
            candidates &= postings[word]
            if len(candidates) <= 1:
                break
        candidates.discard(i)
        if candidates:
            nearest = min(candidates, key=lambda j: (len(bags[j]), tools[j].name))
            twins[tools[i].name] = tools[nearest].name
    return twins
