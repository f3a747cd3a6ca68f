"""Everyday English for what a request asks: verbs and idioms tools' own verbs never use, polite
leads, words that say when, and the shapes of questions and orders that say which lookup or change
they ask ("when is a good time", "what's the address of the venue", "... by deleting the old ones").

General usage, not any catalog's words: `verbs` reads an order's action with them, and the index
matches them only in a catalog whose tools have example requests (described in users' words).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from ..actions import normalize_action

# Everyday verbs and idioms of the eight actions that tools' own verbs never use ("scrap the lunch",
# "bump the review", "shoot Sam an email"): read as what the request asks (`asked`) and, in a catalog
# whose tools have example requests (described in users' words), matched like the vocabulary's verbs.
# General English usage, not any catalog's words.
EVERYDAY_VERBS = {
    **dict.fromkeys(
        ["postpone", "delay", "defer", "shift", "bump", "push", "rearrange", "adjust", "amend", "tweak",
         "extend", "shorten", "lengthen", "prolong", "retitle", "reword", "revise", "alter", "reassign",
         "star", "unstar", "flag", "unflag", "pin", "unpin", "snooze", "relabel"],
        "update",
    ),
    **dict.fromkeys(
        ["scrap", "ditch", "axe", "scratch", "wipe", "bin", "dump", "junk", "nuke", "discard", "toss",
         "chuck", "kill", "unsubscribe"],
        "delete",
    ),
    **dict.fromkeys(
        ["book", "reserve", "arrange", "organise", "organize", "plan", "jot", "pencil", "save", "log", "remember",
         "record", "hold", "block"],
        "create",
    ),
    **dict.fromkeys(
        ["shoot", "ping", "text", "tell", "inform", "mail", "respond", "answer"],
        "send",
    ),
    **dict.fromkeys(["open", "display"], "read"),
    **dict.fromkeys(["locate", "seek", "hunt", "dig"], "search"),
}  # fmt: skip
SHOWING = frozenset(["show", "browse"])
"""Verbs that ask to be shown something, whichever lookup finds it: "show the notes Kim sent" is a
search, "show every label" a list, "show me Kim's note in full" a read. The action vocabulary reads
them as list (a tool's own verb: `show_tables` lists); in a request, its other words say which."""
# A verb and a word later in its clause that together mean one action: "call the meeting off",
# "take it off my calendar", "drop Sam a line", "tick it off", "pull up the notes".
EVERYDAY_PHRASAL = {
    ("call", "off"): "delete",
    ("take", "off"): "delete",
    ("throw", "away"): "delete",
    ("throw", "out"): "delete",
    ("strike", "off"): "delete",
    ("get", "rid"): "delete",
    ("send", "trash"): "delete",
    ("send", "bin"): "delete",
    ("move", "trash"): "delete",
    ("move", "bin"): "delete",
    ("get", "out"): "update",
    ("push", "back"): "update",
    ("push", "forward"): "update",
    ("bring", "forward"): "update",
    ("move", "up"): "update",
    ("move", "back"): "update",
    ("move", "forward"): "update",
    ("tick", "off"): "update",
    ("check", "off"): "update",
    ("cross", "off"): "update",
    ("mark", "done"): "update",
    ("mark", "complete"): "update",
    ("mark", "finished"): "update",
    ("drop", "line"): "send",
    ("drop", "note"): "send",
    ("fire", "off"): "send",
    ("send", "off"): "send",
    ("get", "back"): "send",
    ("let", "know"): "send",
    ("write", "back"): "send",
    ("write", "up"): "create",
    ("write", "down"): "create",
    ("jot", "down"): "create",
    ("note", "down"): "create",
    ("pencil", "in"): "create",
    ("put", "on"): "create",
    ("put", "in"): "create",
    ("block", "out"): "create",
    ("block", "off"): "create",
    ("pull", "up"): "read",
    ("bring", "up"): "read",
    ("look", "for"): "search",
    ("dig", "up"): "search",
    ("hunt", "for"): "search",
}
# An order put politely: "can you", "please", "I need to" before the verb ("can we move the call").
POLITE = (
    ("please",),
    ("can", "you"),
    ("could", "you"),
    ("would", "you"),
    ("will", "you"),
    ("can", "we"),
    ("could", "we"),
    ("i", "need", "to"),
    ("i", "want", "to"),
    ("i", "have", "to"),
    ("go", "ahead", "and"),
)

_DAYS = frozenset(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "today", "tonight",
     "tomorrow", "yesterday", "noon", "midnight", "morning", "afternoon", "evening", "weekend", "week",
     "month", "next", "later", "earlier", "january", "february", "march", "april", "may", "june", "july",
     "august", "september", "october", "november", "december"]
)  # fmt: skip


def to_a_time(raw: Sequence[str]) -> bool:
    """Whether the request moves something "to" a time ("to friday", "to 3pm", "to next week"): a
    verb of many meanings ("move", "set") then asks to change when it happens."""
    return any(word == "to" and (after in _DAYS or after[:1].isdigit()) for word, after in pairwise(raw))


def time_to_find(raw: Sequence[str]) -> bool:
    """A question for a time to be found: "when can I/we ...", "when is a good time"."""
    if raw[:1] not in (["when"], ["whens"]):
        return False
    rest = [w for w in raw[1:] if w not in ("is", "would", "will", "be")]
    asking = rest[:1] in (["can"], ["could"]) and rest[1:2] in (["i"], ["we"])
    return asking or rest[:1] in (["a"], ["an"])


def detail_of_one(raw: Sequence[str]) -> bool:
    """A question for a detail of one known thing: "what's the address of the venue", "what is the
    link for the 10am call"."""
    if raw[:1] not in (["what"], ["whats"]):
        return False
    rest = [w for w in raw[1:] if w not in ("is", "was")]
    if rest[:1] != ["the"]:
        return False
    at = next((i for i, w in enumerate(rest) if w in ("of", "for")), None)
    return at is not None and at > 1 and rest[at + 1 : at + 2] in (["the"], ["this"], ["that"])


def one_thing(later: Sequence[str]) -> bool:
    """Whether an order's object is one thing named as known ("the email", "that message")."""
    rest = [w for w in later if w not in ("me", "us")]
    return len(rest) > 1 and rest[0] in ("the", "that", "this") and not rest[1].endswith("s")


def means(later: Sequence[str]) -> str | None:
    """The action of the means an order names ("... by deleting the old ones": delete), or None."""
    for by, word in pairwise(later):
        if by == "by" and word.endswith("ing") and len(word) > 5:
            base = word[:-3]
            for verb in (base, base + "e", base[:-1]):
                action = normalize_action(verb) or EVERYDAY_VERBS.get(verb)
                if action is not None:
                    return action
    return None
