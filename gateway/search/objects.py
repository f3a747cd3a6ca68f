"""The object of a request: which of a catalog's categories its nouns belong to.

"move my dentist appointment" is about the calendar, "delete the oat milk to-do" about the task list:
in a catalog whose tools are described in users' words (they have example requests), the words
that only one category's tools use (in their names, descriptions and examples) mark that category,
and a request whose marked words all point to one category raises that category's tools
(`ranking.OBJECT_AGREEMENT`). Verbs say the action, not the object, and are never markers.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

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


MAKING = ("create", "send")
"""The actions that make something new: "send Sam a note" sends a new one, not one that exists."""
_NEW = frozenset(["a", "an", "another"])
_RECIPIENTS = frozenset(["me", "him", "her", "them", "us", "everyone", "someone"])


def acts_on_existing(d: ToolDefinition) -> bool:
    """Whether a tool needs an existing item: it requires one's id ("message_id", "draft_id").

    Read from `ToolDefinition.required_names`: no params model is built and no schema generated."""
    required = d.required_names()
    return any(p == "id" or p.endswith(("_id", "_ids")) for p in required)


def new_order(raw: Sequence[str], asked: Collection[str]) -> bool:
    """Whether a request orders something new made or sent ("send Sam a note"): then the action
    agreement does not hold for a tool that acts on an existing item (a reply, sending a saved draft;
    `ToolObjects.existing`)."""
    return any(a in asked for a in MAKING) and new_thing(raw)


def new_thing(raw: Sequence[str]) -> bool:
    """Whether an order's object is a new thing: an indefinite article right after its verb, or
    after who gets it ("send Sam a note", "shoot an email to the team", "drop me a line")."""
    _, rest = order_words(raw)
    if rest and (rest[0] in _RECIPIENTS or rest[0] not in STOP_WORDS):
        rest = rest[1:]
    return bool(rest) and rest[0] in _NEW


_ONE = "#one"  # a tool that reads one item (its name ends in a singular: "read_message", "get_event")
_MANY = "#many"
_EXISTING = "#existing"  # a tool that needs an existing item's id
_INSIDE = "#in"  # a request about what is on or in the thing it names
_CONTAINING = frozenset(["on", "in"])
_NAMED = "="  # marks the last word of a tool's name, what it acts on ("list_tasks": task)  # a request about several ("show emails from Sam")


@dataclass
class ToolObjects:
    """Every tool's `tool_objects`, as flat arrays an index caches: tool `i`'s words are
    `words[k]` for `k` in `ids[starts[i]:starts[i + 1]]`. Built with the index (`of`), so that starting
    and searching read no tool's schema; a tool's set is made only when a request asks about it."""

    words: list[str]
    starts: array[int]
    ids: array[int]
    _np: Any = field(default=None, repr=False)
    _inverted: Any = field(default=None, repr=False)  # (code by word, tools by word, each word's start)
    _existing: Any = field(default=None, repr=False)

    @classmethod
    def of(cls, tools: Iterable[ToolDefinition]) -> ToolObjects:
        codes: dict[str, int] = {}
        starts, ids = array("I", [0]), array("I")
        for d in tools:
            ids.extend(sorted(codes.setdefault(w, len(codes)) for w in tool_objects(d)))
            starts.append(len(ids))
        return cls(list(codes), starts, ids)

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, i: int) -> frozenset[str]:
        words = self.words
        return frozenset(words[k] for k in self.ids[self.starts[i] : self.starts[i + 1]])

    def holding(self, np: Any, wanted: Collection[str]) -> Any:
        """The tools (numpy ids, ascending) whose words include any of `wanted`: from a map of each
        word's tools, made on the first request that needs it."""
        if self._inverted is None:
            ids = np.frombuffer(self.ids, dtype=np.uint32) if self.ids else np.zeros(0, np.uint32)
            owners = np.repeat(np.arange(len(self), dtype=np.int64), np.diff(np.asarray(self.starts)))
            order = np.argsort(ids, kind="stable")
            bounds = np.searchsorted(ids[order], np.arange(len(self.words) + 1))
            codes = {w: k for k, w in enumerate(self.words)}
            self._inverted = (codes, owners[order], bounds)
        codes, tools, bounds = self._inverted
        parts = [tools[bounds[k] : bounds[k + 1]] for w in wanted if (k := codes.get(w)) is not None]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)

    def existing(self, np: Any) -> Any:
        """Which tools act on an existing item (numpy booleans, made once)."""
        if self._existing is None:
            self._existing = np.zeros(len(self), dtype=bool)
            self._existing[self.holding(np, [_EXISTING])] = True
        return self._existing

    def existing_list(self) -> list[bool]:
        """Which tools act on an existing item, without numpy."""
        code = self.words.index(_EXISTING) if _EXISTING in self.words else -1
        starts, ids = self.starts, self.ids
        return [code in ids[starts[i] : starts[i + 1]] for i in range(len(self))]


def tool_objects(d: ToolDefinition) -> frozenset[str]:
    """The stemmed words of a tool's name and summary: what it acts on, in its own words."""
    one = d.action == "read" and not d.name.endswith("s")
    last = _NAMED + stem(d.name.rsplit("_", 1)[-1].lower())
    words = tokenize(" ".join([d.name.replace("_", " "), d.summary]))
    return frozenset([*words, last, *([_ONE] if one else []), *([_EXISTING] if acts_on_existing(d) else [])])


def names_object(named: frozenset[str], objects: frozenset[str]) -> int:
    """How closely a tool's own words (`tool_objects`) name what a request is about
    (`request_object`): 2 when its name ends with it ("list_tasks" for "what tasks"), 1 when its name
    or summary says it, 0 otherwise; a request about several things is not about a tool that reads one."""
    if not named & objects or (_MANY in named and _ONE in objects) or _longer(named, objects):
        return 0
    return 2 if _INSIDE not in named and any(_NAMED + word in objects for word in named) else 1


def _longer(named: frozenset[str], objects: frozenset[str]) -> bool:
    """Whether a tool's name ends with a longer word that only begins with what the request is about
    ("list_tasklists" for "what tasks"): it acts on another thing."""
    ends = [o[len(_NAMED) :] for o in objects if o.startswith(_NAMED)]
    return any(end != word and end.startswith(word) and end not in named for end in ends for word in named)


def several(raw: Sequence[str]) -> bool:
    """Whether a request is about several things ("show emails from Sam"), not one to read."""
    return _MANY in request_object(raw)


def request_object(raw: Sequence[str]) -> tuple[str, ...]:
    """The stemmed words of what a request is about: the first run of words that are not stop words
    after its verb or question ("show emails from my boss": emails; "what's on my to-do list": todo),
    with an opening verb that is as often a noun ("email the team": email)."""
    lead, rest = order_words(raw)
    phrase: list[str] = [lead] if lead else []
    inside = False  # "what's on my calendar": the calendar holds what is asked for
    for word in rest:
        if word in STOP_WORDS:
            if phrase and phrase != [lead]:
                break
            inside = inside or word in _CONTAINING
            continue
        phrase.append(word)
    many = any(len(w) > 3 and w.endswith("s") and not w.endswith("ss") for w in phrase)
    nouns = phrase[1:] if lead else phrase
    joined = [stem(a + b) for a, b in pairwise(nouns)]  # "task lists": a tool's "tasklists"
    marks = [*([_MANY] if many else []), *([_INSIDE] if inside else [])]
    return (*(stem(w) for w in phrase), *joined, *marks)
