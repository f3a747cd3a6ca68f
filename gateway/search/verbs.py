"""The verbs of a request: phrasal verbs read as one word, and the actions its verbs map onto.

"set up a cluster" asks to create one, "shut down the server" to stop it, and "remove the event" is a
delete whatever the tools call it: the index looks for those actions' concept tokens beside the
request's own words. What the request asks for as a whole (`asked`: an order's first verb, a
question's lookup) raises the tools with that action in `ranking`. Pure Python, no dependency.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ..actions import normalize_action
from ..definition import ToolDefinition
from .everyday import (
    EVERYDAY_PHRASAL,
    EVERYDAY_VERBS,
    POLITE,
    detail_of_one,
    means,
    one_thing,
    time_to_find,
    to_a_time,
)
from .text import STOP_WORDS, stem, words

_PHRASES = {
    ("look", "up"): "search",
    ("what", "on"): "list",
    ("whats", "on"): "list",
    ("quick", "add"): "create",
}
# A verb and its particle mean what one word says: "set up" a cluster is to create it, not to set
# something; "back up" a database is to make a backup of it.
_PHRASAL_VERBS = {
    ("set", "up"): "create",
    ("sign", "up"): "register",
    ("back", "up"): "backup",
    ("shut", "down"): "stop",
    ("turn", "on"): "enable",
    ("turn", "off"): "disable",
    ("switch", "on"): "enable",
    ("switch", "off"): "disable",
    ("clean", "up"): "delete",
    ("get", "rid"): "delete",
    ("fill", "in"): "update",
    ("log", "in"): "login",
    ("log", "out"): "logout",
}
# Words after which the next one is a noun (or an adjective), never the request's verb.
_DETERMINERS = frozenset(
    [
        "a",
        "an",
        "the",
        "my",
        "your",
        "our",
        "their",
        "his",
        "her",
        "its",
        "this",
        "that",
        "these",
        "those",
        "each",
        "every",
        "some",
        "any",
        "no",
    ]
)
# Verbs of the vocabulary that are nouns as often as verbs in a request: not taken as an action.
AMBIGUOUS_VERBS = frozenset(
    [
        "email",
        "message",
        "status",
        "label",
        "post",
        "match",
        "set",
        "check",
        "watch",
        "share",
        "draft",
        "copy",
        "batch",
        "call",
        "complete",
        "filter",
        "query",
        "view",
        "mark",
        "start",
        "stop",
        "move",
        "run",
        "import",
        "export",
    ]
)


# Of those, the ones with one meaning as a verb: an order that opens with one asks for it ("email
# the team", "label these"); "move", "set" or "run" may mean many things.
_NOUN_VERBS = frozenset(["email", "message", "label", "post", "draft", "share", "mark", "filter", "query"])
_THINGS = frozenset(["email", "message", "label", "post", "draft"])  # ... that name what they make


# After these, a request's first word is a noun ("email from Sam", "call with the bank").
_NOUN_NEXT = frozenset(
    ["from", "about", "with", "of", "in", "on", "at", "for", "by", "is", "are", "was", "were"]
)
# A request that opens with one of these is a question, not an order.
_QUESTION_WORDS = frozenset(
    [
        "what",
        "whats",
        "which",
        "when",
        "whens",
        "where",
        "wheres",
        "who",
        "whos",
        "whom",
        "whose",
        "how",
        "hows",
        "any",
        "anything",
        "anyone",
        "anybody",
        "did",
        "do",
        "does",
        "am",
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "got",
        "can",
        "could",
    ]
)
# "can I ...", "do I have ...": the verb after them is the question's, not an order.
_AUXILIARIES = frozenset(
    ["did", "do", "does", "am", "is", "are", "was", "were", "has", "have", "can", "could"]
)
# A question whether something happened ("did the bank write back", "has anyone replied") asks to
# search for it.
_HAPPENED = frozenset(["did", "has", "have", "had"])
LOOKUPS = ("list", "search", "read")
"""What a question asks for: to look something up, whichever way."""

_CLAUSE_WORDS = frozenset(["and", "then"])
_PARTICLES = frozenset(["out", "off", "back", "away", "forward", "over", "down"])


@lru_cache(maxsize=50_000)
def _action_of(word: str) -> str | None:
    return None if word in AMBIGUOUS_VERBS else normalize_action(word)


def phrasal(raw: Sequence[str]) -> list[str]:
    """The words of a request with each phrasal verb as the one word it means ("set up" -> create)."""
    out: list[str] = []
    skip = False
    for i, word in enumerate(raw):
        if skip:
            skip = False
            continue
        one = _PHRASAL_VERBS.get((word, raw[i + 1])) if i + 1 < len(raw) else None
        if one is not None and not (i > 0 and raw[i - 1] in _DETERMINERS):
            out.append(one)
            skip = True
        else:
            out.append(word)
    return out


def query_actions(raw: Sequence[str]) -> list[str]:
    """The actions a request's verbs map onto: 'remove' -> delete, 'look up' -> search.

    A word right after a determiner or a possessive is a noun ("add a task to my list", "the
    update"), not a verb. In a question ("can I ...", "did Sam ..."), the verb after the auxiliary
    is the question's, not an order.
    """
    raw = [w for w in raw if w not in ("s", "t")]  # "what's on" -> what, on
    if raw and raw[0] in _QUESTION_WORDS:
        return _found(raw[1:] if raw[0] in _AUXILIARIES else raw)
    if _idiom(raw) is not None:  # "drop Sam a line" asks to drop nothing, "bring it forward" to send nothing
        particle = next(w for w in raw[1:] if (raw[0], w) in EVERYDAY_PHRASAL)
        return _found([w for w in raw[1:] if w != particle])
    return _found(raw)


def _idiom(raw: Sequence[str]) -> str | None:
    """The action of the everyday idiom an order opens with ("call ... off": delete), or None; a
    phrase of the vocabulary comes first ("look up details for ...": search)."""
    if len(raw) > 1 and (raw[0], raw[1]) in _PHRASES:
        return None
    return next((a for w in raw[1:] if (a := EVERYDAY_PHRASAL.get((raw[0], w))) is not None), None)


def order_verb(raw: Sequence[str]) -> str | None:
    """The action of an order's first word when it is a verb as often a noun: an order opens with its
    verb ("email bob the slides", "mark it read"), unless a preposition follows ("email from Sam")."""
    raw = [w for w in raw if w not in ("s", "t")]
    if not raw or raw[0] not in AMBIGUOUS_VERBS or (len(raw) > 1 and raw[1] in _NOUN_NEXT):
        return None
    return normalize_action(raw[0])


def asked(raw: Sequence[str]) -> tuple[str, ...]:
    """The actions a request asks for, as a whole: an order's verb's ("cancel my 3pm"), or for a
    question ("what do I have on friday", "did Sam write back") looking something up (list, search,
    read). None when that is unsure: a request of several clauses ("list the comments and delete
    one"), a verb that is as often a noun or means several things ("move", "email"), a verb whose
    particle comes later and changes it ("get these emails out of my inbox"). The words after the
    verb are its object ("mark these emails as read" does not ask to read).
    """
    raw = _unpoliced(raw)
    if not raw or any(w in _CLAUSE_WORDS for w in raw):
        return ()
    if raw[0] in _HAPPENED or time_to_find(raw):
        return ("search",)  # "when can I fit it in", "when's a good time": a time to be found
    if detail_of_one(raw):
        return ("read",)  # "what's the address of the venue": one thing's detail
    if raw[0] in _QUESTION_WORDS or _put_as_an_order(raw):
        return LOOKUPS
    later = raw[1:]
    idiom = _idiom(raw)
    if idiom is not None:
        return (idiom,)
    if any(w in _PARTICLES for w in later):
        return ()
    action = _action_of(raw[0]) or EVERYDAY_VERBS.get(raw[0])
    if action is None and raw[0] in _NOUN_VERBS:
        action = order_verb(raw)
    if action is None and normalize_action(raw[0]) in LOOKUPS:  # "check my inbox": any lookup
        action = "read"
    if action is None and to_a_time(raw) and normalize_action(raw[0]) == "update":
        action = "update"  # "move the review to friday": whatever else "move" means, not here
    if action is None and normalize_action(raw[0]) is None:
        action = means(later)  # "tidy my list by deleting the done items"
    if action == "create" and "instead" in later:
        action = "update"  # "make the lunch 1pm instead": what exists changes
    if action == "read" and one_thing(later) and normalize_action(raw[0]) == "read":
        return ("read",)  # "read me the email from Sam": that one
    if action in LOOKUPS:  # "show", "find" or "check" my email: a lookup, which one the words say
        return LOOKUPS
    return () if action is None else (action,)


def order_words(raw: Sequence[str]) -> tuple[str, list[str]]:
    """A request's opening verb when it is as often a noun ("email"), and the words after its verb
    or its question's opening ("what", "did") that say what it is about."""
    raw = _unpoliced(raw)
    if not raw:
        return "", []
    if raw[0] in _QUESTION_WORDS:
        return "", [w for w in raw[1:] if w not in _QUESTION_WORDS]
    if normalize_action(raw[0]) is None and raw[0] not in EVERYDAY_VERBS and not _idiom(raw):
        return "", raw  # no verb: "emails from Tom last week"
    return (raw[0] if raw[0] in _THINGS else ""), raw[1:]


def everyday_action(word: str) -> str | None:
    """The action an everyday verb names ("scrap": delete), or None."""
    return EVERYDAY_VERBS.get(word)


def _unpoliced(raw: Sequence[str]) -> list[str]:
    """`raw` without contractions' leftovers and a polite lead ("can you move the call": move ...)."""
    raw = [w for w in raw if w not in ("s", "t")]
    for lead in POLITE:
        if tuple(raw[: len(lead)]) == lead and len(raw) > len(lead):
            return raw[len(lead) :]
    return raw


def _found(raw: Sequence[str]) -> list[str]:
    found: list[str] = []
    for i, word in enumerate(raw):
        action = _PHRASES.get((word, raw[i + 1])) if i + 1 < len(raw) else None
        if action is None and i > 0 and raw[i - 1] in _DETERMINERS:
            continue
        if action is None:
            action = _action_of(word)
        if action is not None and action not in found:
            found.append(action)
    return found


@lru_cache(maxsize=256)
def happened_verbs(request: str) -> frozenset[str]:
    """In a question whether something happened ("did the bank get back to me", "has anyone
    replied"), its verbs: they tell what happened, not what to do, and name no tool."""
    raw = _unpoliced(phrasal(words(request)))
    if not raw or raw[0] not in _HAPPENED:
        return frozenset()
    return frozenset(w for w in raw[1:] if w not in AMBIGUOUS_VERBS and normalize_action(w) is not None)


def _put_as_an_order(raw: Sequence[str]) -> bool:
    """A question put as an order: "remind me what I have on", "tell me when the bus leaves"."""
    return len(raw) > 2 and raw[1] == "me" and raw[2] in _QUESTION_WORDS


def opener(raw: Sequence[str]) -> str:
    """The first word of an order of one clause when the action vocabulary does not know it ("bin
    it", "book a table"): a catalog's own example requests may tell what it asks (`example_verbs`)."""
    if (
        not raw
        or raw[0] in _QUESTION_WORDS
        or raw[0] in STOP_WORDS
        or any(w in _CLAUSE_WORDS for w in raw)
        or _put_as_an_order(raw)
    ):
        return ""
    return "" if normalize_action(raw[0]) is not None else raw[0]


def example_verbs(tools: Iterable[ToolDefinition]) -> dict[str, str]:
    """The verbs a catalog's example requests open with, and the action of the tools they ask for.

    "bin the message from the airline" is an example of a tool that deletes: in this catalog "bin"
    asks to delete. A verb the examples use for tools of different actions is left out.
    """
    seen: dict[str, set[str]] = {}
    for d in tools:
        for request in d.example_requests:
            word = opener(phrasal(words(request)))
            if word and word.isalpha():
                seen.setdefault(word, set()).add(d.action)
    return {word: next(iter(actions)) for word, actions in seen.items() if len(actions) == 1}


@lru_cache(maxsize=256)
def analyse(
    request: str,
) -> tuple[tuple[tuple[str, str, int], ...], tuple[str, ...], tuple[str, ...], str, str | None]:
    """A request's distinct words without stop words (word, stem, occurrences), phrasal verbs read as
    the word they mean, the actions its verbs name, those the whole request asks for (`asked`; or its
    last clause after a comma: "I can't go anymore, take it off"), its
    `opener` and its `order_verb`: what any index makes of it before its own
    vocabulary. Remembered for the last requests: a discover with learning analyses one request for
    the catalog's index and the learned one."""
    raw = phrasal(words(request))
    counted = Counter(w for w in raw if w not in STOP_WORDS)
    return (
        tuple((word, stem(word), count) for word, count in counted.items()),
        tuple(query_actions(raw)),
        asked(raw) or (asked(phrasal(words(request.rsplit(",", 1)[1]))) if "," in request else ()),
        opener(raw),
        order_verb(raw),
    )
