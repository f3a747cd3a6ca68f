"""The object of a request: which of a catalog's categories its nouns belong to.

"move my dentist appointment" is about the calendar, "delete the oat milk to-do" about the task list:
in a catalog whose tools are described in users' words (they have example requests), the words
that only one category's tools use (in their names, descriptions and examples) mark that category,
and a request whose marked words all point to one category raises that category's tools
(`ranking.OBJECT_AGREEMENT`). Verbs say the action, not the object, and are never markers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from ..actions import ACTIONS, normalize_action
from ..definition import ToolDefinition
from .text import STOP_WORDS, stem, tokenize
from .verbs import AMBIGUOUS_VERBS, everyday_action, order_words

MIN_TOOLS = 2
"""A marker is used by at least this many tools of its category (one tool's wording is not a category's)."""
MIN_SHARE = 0.8
"""... and at least this share of the tools that use it are of that category."""


def category_markers(tools: Iterable[ToolDefinition]) -> dict[str, str]:
    """Stemmed words that mark one category: used by at least `MIN_TOOLS` of its tools and mostly by them.

    Empty for a catalog of one category, or whose tools have no example requests.
    """
    tools = list(tools)
    if len({d.category for d in tools}) < 2 or not any(d.example_requests for d in tools):
        return {}
    uses: dict[str, Counter[str]] = {}
    for d in tools:
        text = " ".join([d.name.replace("_", " "), d.category, d.summary, d.description, *d.example_requests])
        for word in set(tokenize(text)):
            uses.setdefault(word, Counter())[d.category] += 1
    markers: dict[str, str] = {}
    for word, counts in uses.items():
        category, n = counts.most_common(1)[0]
        if n >= MIN_TOOLS and n / sum(counts.values()) >= MIN_SHARE and _noun_like(word):
            markers[word] = category
    return markers


_NOUNS_TOO = frozenset(map(stem, AMBIGUOUS_VERBS))


def _noun_like(word: str) -> bool:
    """Not a number, and not a verb of the action vocabulary or an everyday one, unless as often a
    noun ("email", "draft", "label")."""
    return word.isalpha() and (
        word in _NOUNS_TOO
        or (word not in ACTIONS and normalize_action(word) is None and everyday_action(word) is None)
    )


def asked_category(stems: Sequence[str], markers: dict[str, str]) -> str | None:
    """The one category the request's marked words point to, or None (none, or several)."""
    found = {markers[s] for s in stems if s in markers}
    return found.pop() if len(found) == 1 else None


_ONE = "#one"  # a tool that reads one item (its name ends in a singular: "read_message", "get_event")
_MANY = "#many"  # a request about several ("show emails from Sam")


def tool_objects(d: ToolDefinition) -> frozenset[str]:
    """The stemmed words of a tool's name and summary: what it acts on, in its own words."""
    one = d.action == "read" and not d.name.endswith("s")
    return frozenset([*tokenize(" ".join([d.name.replace("_", " "), d.summary])), *([_ONE] if one else [])])


def names_object(named: frozenset[str], objects: frozenset[str]) -> bool:
    """Whether a tool's own words (`tool_objects`) name what a request is about (`request_object`):
    a request about several things is not about a tool that reads one."""
    return bool(named & objects) and not (_MANY in named and _ONE in objects)


def request_object(raw: Sequence[str]) -> tuple[str, ...]:
    """The stemmed words of what a request is about: the first run of words that are not stop words
    after its verb or question ("show emails from my boss": emails; "what's on my to-do list": todo),
    with an opening verb that is as often a noun ("email the team": email)."""
    lead, rest = order_words(raw)
    phrase: list[str] = [lead] if lead else []
    for word in rest:
        if word in STOP_WORDS:
            if phrase and phrase != [lead]:
                break
            continue
        phrase.append(word)
    many = any(len(w) > 3 and w.endswith("s") and not w.endswith("ss") for w in phrase)
    return (*(stem(w) for w in phrase), *([_MANY] if many else []))
