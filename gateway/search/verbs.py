"""The verbs of a request: phrasal verbs read as one word, and the actions its verbs map onto.

"set up a cluster" asks to create one, "shut down the server" to stop it, and "remove the event" is a
delete whatever the tools call it: the index looks for those actions' concept tokens beside the
request's own words. Pure Python, no dependency.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from ..actions import normalize_action
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
_AMBIGUOUS_VERBS = frozenset(
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


@lru_cache(maxsize=50_000)
def _action_of(word: str) -> str | None:
    return None if word in _AMBIGUOUS_VERBS else normalize_action(word)


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
    update"), not a verb.
    """
    raw = [w for w in raw if w not in ("s", "t")]  # "what's on" -> what, on
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
def analyse(request: str) -> tuple[tuple[tuple[str, str, int], ...], tuple[str, ...]]:
    """A request's distinct words without stop words (word, stem, occurrences), phrasal verbs read as
    the word they mean, and the actions its verbs name: what any index makes of it before its own
    vocabulary. Remembered for the last requests: a discover with learning analyses one request for
    the catalog's index and the learned one."""
    raw = phrasal(words(request))
    counted = Counter(w for w in raw if w not in STOP_WORDS)
    return tuple((word, stem(word), count) for word, count in counted.items()), tuple(query_actions(raw))
