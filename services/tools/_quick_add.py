"""Split a quick-add sentence ("Lunch with Ana tomorrow at noon for 1 hour") into title, time and length."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from gateway.errors import ToolInputError

from ..dates import When, parse_duration, parse_when

MAX_SPAN_WORDS = 7
_CONNECTORS = frozenset(("at", "on", "in", "for", "from", "by", "-", "–"))
_TRAILING_PUNCTUATION = ",.;:!?"
_EXAMPLE = "'Lunch with Ana tomorrow at noon for 1 hour'"


@dataclass(frozen=True, slots=True)
class QuickAdd:
    """What a quick-add sentence says: the title, the words that say when, their reading, the length."""

    title: str
    phrase: str
    when: When
    length: timedelta | None


def split_quick_add(text: str, *, tz: ZoneInfo, now: datetime) -> QuickAdd:
    """The title, the start and the length ("for ...") a sentence describes.

    The start is the longest run of words that reads as a date or time (a later run wins a tie, since
    titles usually come first), read as the start of something new (a time that has passed today is
    tomorrow's); the words left over, minus dangling connectors, are the title.

    Raises:
        ToolInputError: no time phrase, or nothing left for a title (field "text").
    """
    words = text.split()
    length, words = _take_length(words)
    found = _find_when(words, tz=tz, now=now)
    if found is None:
        raise ToolInputError(
            f"the text does not say when; include a day or time, as in {_EXAMPLE}", field="text"
        )
    first, last, when = found
    title_words = words[:first] + words[last:]
    while title_words and _bare(title_words[-1]).lower() in _CONNECTORS:
        title_words.pop()
    while title_words and _bare(title_words[0]).lower() in _CONNECTORS:
        title_words.pop(0)
    title = " ".join(title_words).strip(_TRAILING_PUNCTUATION + " ")
    if not title:
        raise ToolInputError(
            f"the text only says when; say what the event is, as in {_EXAMPLE}", field="text"
        )
    phrase = " ".join(_bare(w) for w in words[first:last])
    return QuickAdd(title=title, phrase=phrase, when=when, length=length)


def _bare(word: str) -> str:
    return word.rstrip(_TRAILING_PUNCTUATION)


def _take_length(words: list[str]) -> tuple[timedelta | None, list[str]]:
    """Remove the first "for <duration>" phrase, longest reading first."""
    for i, word in enumerate(words):
        if word.lower() != "for":
            continue
        for end in range(min(len(words), i + 1 + MAX_SPAN_WORDS), i + 1, -1):
            phrase = " ".join(_bare(w) for w in words[i + 1 : end])
            try:
                return parse_duration(phrase), words[:i] + words[end:]
            except ToolInputError:
                continue
    return None, words


def _find_when(words: list[str], *, tz: ZoneInfo, now: datetime) -> tuple[int, int, When] | None:
    best: tuple[int, int, When] | None = None
    for first in range(len(words)):
        for last in range(min(len(words), first + MAX_SPAN_WORDS), first, -1):
            span = [_bare(w) for w in words[first:last]]
            if len(span) == 1 and (span[0].isdigit() or span[0].lower() in _CONNECTORS):
                continue  # "Room 5" is not the 5th of the month
            try:
                when = parse_when(" ".join(span), tz=tz, now=now, upcoming=True)
            except ToolInputError:
                continue
            if best is None or last - first >= best[1] - best[0]:
                best = (first, last, when)
            break  # the longest reading starting here is enough
    return best
