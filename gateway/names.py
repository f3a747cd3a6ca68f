"""Tool names: the one place that says what a valid name is and how one is made."""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable

from .actions import normalize_action

MAX_NAME_LENGTH = 64
NAME_PATTERN = re.compile(r"^[a-z0-9_]{1,64}$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_NAME = re.compile(r"[^a-z0-9_]+")


def name_problem(name: object) -> str | None:
    """Say what is wrong with a tool name, or None when it is valid."""
    if not isinstance(name, str) or not name:
        return "name must be a non-empty string"
    if len(name) > MAX_NAME_LENGTH:
        return f"name {name!r} is longer than {MAX_NAME_LENGTH} characters"
    if not NAME_PATTERN.match(name):
        return f"name {name!r} may only use lowercase letters, digits and '_'"
    return None


def to_name(raw: str) -> str:
    """Make a valid tool name from any identifier ('calendar.events.insert', 'sendMail').

    Long results are cut deterministically: the head is kept and a short hash of the
    whole identifier is appended, so two long identifiers never collapse to one name.
    """
    snake = _CAMEL.sub("_", raw).lower()
    name = _NON_NAME.sub("_", snake).strip("_") or "tool"
    name = re.sub(r"_+", "_", name)
    if len(name) <= MAX_NAME_LENGTH:
        return name
    digest = hashlib.sha256(raw.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME_LENGTH - 9].rstrip('_')}_{digest}"


def closest_names(name: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """The names most like `name`, best first, for 'did you mean' answers."""
    pool = sorted(set(candidates))
    lowered = name.lower().strip()
    # A synonym verb is as close as a typo: "notes_remove" should find "notes_delete".
    canonical = "_".join(normalize_action(w) or w for w in lowered.split("_"))
    close = []
    for probe in dict.fromkeys((canonical, lowered)):
        for match in difflib.get_close_matches(probe, pool, n=limit, cutoff=0.6):
            if match not in close:
                close.append(match)
    close = close[:limit]
    if len(close) < limit:
        # Names that contain every word of the request are close too ("send_email" ~ "gmail_send").
        words = [w for w in re.split(r"[^a-z0-9]+", lowered) if len(w) > 2]
        for candidate in pool:
            if len(close) >= limit:
                break
            if candidate not in close and words and all(w in candidate for w in words):
                close.append(candidate)
    return close
