"""Words a request says that do not name what it wants, read where tools are described in users'
words (a catalog with example requests).

"drop Mark a line" names a person, not the tool that marks; "keep it but don't delete it" asks for
no deletion; "has anyone replied" asks whether a reply came, not to reply; "call off the meeting"
says one action in two words, neither of which is it. General English usage, no catalog's words:
the index leaves these words out of the matching (`everyday`) and of the request's meaning
(`meant`, the text the semantic layers compare).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..actions import normalize_action
from .everyday import EVERYDAY_PHRASAL, EVERYDAY_VERBS, POLITE, SHOWING
from .objects import several
from .text import STOP_WORDS, stem, words
from .verbs import _DETERMINERS, AMBIGUOUS_VERBS, LOOKUPS, analyse, asked, happened_verbs, phrasal

_NEGATIONS = frozenset(["not", "never", "without"])
_REMINDING = frozenset(["remember", "remind"])
_HAPPENED = frozenset(["did", "has", "have", "had"])
_PARTICLES = frozenset(["back", "in", "out", "up"])
# A capitalised word inside the request, not its first: a name ("drop Mark a line").
_CAPITALISED = re.compile(r"(?<=\s)[A-Z][a-z]+\b")


def _lead(raw: list[str]) -> int:
    """How many words a polite lead takes ("can you", "please"): the order starts after them."""
    return next((len(lead) for lead in POLITE if tuple(raw[: len(lead)]) == lead and len(raw) > len(lead)), 0)


@lru_cache(maxsize=256)
def unsaid(request: str) -> tuple[frozenset[str], frozenset[str], str | None, str]:
    """What a request says that does not name what it wants: the words to leave out of the
    matching, the verbs that ask nothing (it says not to do them, or they say what happened), the action of an idiom whose two words open the order
    ("call off": delete), and its text without those words (the idiom read as its action)."""
    raw = words(request)
    out: set[int] = set()
    start = _lead(raw)
    idiom = EVERYDAY_PHRASAL.get((raw[start], raw[start + 1])) if len(raw) > start + 1 else None
    names = proper_names(request)
    if len(raw) > start + 2 and raw[start + 1] in names and raw[start + 2] in _DETERMINERS:
        out.add(start + 1)  # "drop Mark a line", "send Sarah a note": who gets it, not what it is
    for i, w in enumerate(raw[:-2]):  # "remember to book the car": booking is the thing to do later
        to = i + 2 if raw[i + 1] == "me" else i + 1
        if w in _REMINDING and to + 1 < len(raw) and raw[to] == "to":
            out.add(to + 1)
    refused = {i + 1 for i, w in enumerate(raw[:-1]) if w in _NEGATIONS and raw[i + 1] not in STOP_WORDS}
    out |= refused
    if raw and raw[0] in _HAPPENED:  # "has anyone replied", "did the bank write back": what happened
        verb = 3 if len(raw) > 2 and raw[1] in _DETERMINERS else 2
        if len(raw) > verb and raw[verb] not in AMBIGUOUS_VERBS and raw[verb] not in STOP_WORDS:
            out.add(verb)
            refused.add(verb)
            if len(raw) > verb + 1 and raw[verb + 1] in _PARTICLES:
                out.add(verb + 1)
    if not out:
        return frozenset(), frozenset(), idiom, request
    kept = [w for i, w in enumerate(raw) if i not in out]
    said = {w for i, w in enumerate(raw) if i not in out}
    return (
        frozenset(raw[i] for i in out) - said,
        frozenset(raw[i] for i in refused),
        idiom,
        " ".join(kept),
    )


def shown(request: str) -> tuple[str, ...]:
    """The lookups an order to show something may ask (`everyday.SHOWING`): every one, as its whole
    reading does ("show every label" lists, "show the notes Kim sent" searches), so that it matches no
    lookup's action more than another; but not to read one when it names several things. Empty for
    any other request."""
    raw = phrasal(words(request))
    raw = raw[_lead(raw) :]
    if not raw or raw[0] not in SHOWING or asked(raw) != LOOKUPS:
        return ()
    return tuple(a for a in LOOKUPS if a != "read") if several(raw) else LOOKUPS


def proper_names(request: str) -> frozenset[str]:
    """The capitalised words inside a request, lowercased: names ("Lisa"), never misspellings."""
    return frozenset(w.lower() for w in _CAPITALISED.findall(request))


def meant(request: str) -> str:
    """The request's text as the semantic layers should read it (`unsaid`)."""
    return unsaid(request)[3]


def everyday(request: str) -> tuple[tuple[tuple[str, str, int], ...], tuple[str, ...]]:
    """`analyse`'s words and actions as read where tools are described in users' words: the actions
    with what the request asks as a whole (`asked`, not a question's lookup) and its `order_verb`,
    without the verbs it says not to do, and without the words that do not name what it wants
    (`unsaid`, `happened_verbs`); an opening idiom counts as its action's word. Where the order's
    shape asks another action than its verb names ("make the lunch 1pm instead" changes what
    exists), the verb's own action is not looked for."""
    counted, actions, whole, _, first = analyse(request)
    said = (first, *whole) if whole != LOOKUPS else (first,)
    dropped, refused, idiom, _ = unsaid(request)
    dropped |= happened_verbs(request)
    not_asked = {normalize_action(w) or EVERYDAY_VERBS.get(w) for w in refused}
    raw = phrasal(words(request))
    own = normalize_action(raw[_lead(raw)]) if raw else None
    if own is not None and asked(raw) not in ((), (own,), LOOKUPS):
        not_asked.add(own)
    extra = ((idiom, stem(idiom), 1),) if idiom is not None and idiom not in dropped else ()
    return (
        tuple(c for c in counted if c[0] not in dropped) + extra,
        tuple(
            a
            for a in (*actions, *(a for a in dict.fromkeys(said) if a and a not in actions))
            if a not in not_asked
        ),
    )
