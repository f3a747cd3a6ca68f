"""Text and schemas from other servers are untrusted: cleaned before the model sees them, pinned when first seen.

A fronted server writes the descriptions our model reads, so a hostile or compromised
server can try to steer the model ("tool poisoning"). Its text is length-capped, stripped
of control and invisible characters, and sentences matching known injection patterns are
removed and reported. What a tool looked like when first seen is pinned (as hashes); a later
change is reported instead of silently accepted ("rug pull").
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import write_json_atomic
from ..rendering import HIDDEN_CHARACTERS

MAX_DESCRIPTION_CHARS = 2000
MAX_SCHEMA_TEXT_CHARS = 500
REMOVED = "[removed]"

# C0/C1 controls except tab and newline; zero-width, bidi-override and Unicode tag characters hide text.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_INVISIBLE = re.compile(f"[{HIDDEN_CHARACTERS}]")
_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n{3,}")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")

_TAGS = "important|system|instructions?|secret|hidden|admin|sudo|assistant|user|prompt"
_TAGGED_BLOCK = re.compile(rf"<\s*({_TAGS})\b[^>]*>.*?<\s*/\s*\1\s*>", re.I | re.S)

INJECTION_PATTERNS: Mapping[str, re.Pattern[str]] = {
    "hidden_tag": re.compile(rf"<\s*/?\s*({_TAGS})\b[^>]*>", re.I),
    "override": re.compile(
        r"\b(ignore|disregard|forget|override)\b.{0,40}?\b(previous|prior|above|earlier|all|any|other|system)"
        r"\b.{0,40}?\b(instructions?|prompts?|rules?|messages?|directives?)\b",
        re.I,
    ),
    "secrecy": re.compile(
        r"\b(do not|don't|never|without)\s+(tell|telling|inform|informing|mention|mentioning|reveal|revealing"
        r"|show|showing|alert|alerting|notify|notifying)\b.{0,40}?\b(user|human|them)\b",
        re.I,
    ),
    "role_change": re.compile(
        r"\b(you are now|new instructions|system prompt|developer mode|jailbreak|act as an?)\b", re.I
    ),
    "sensitive_file": re.compile(
        r"(~/\.ssh|\bid_rsa\b|\bid_ed25519\b|/etc/passwd|/etc/shadow|\.aws/credentials|\.netrc\b|"
        r"\bmcp\.json\b|\.cursor/|\.env\b|private[ _-]key)",
        re.I,
    ),
    "exfiltration": re.compile(
        r"\b(send|upload|post|forward|leak|exfiltrate|include|pass|copy)\b.{0,60}?\b(credentials?|passwords?"
        r"|tokens?|api[ _-]?keys?|secrets?|conversation|chat history|system prompt)\b",
        re.I,
    ),
}
"""Named patterns of text that addresses the model instead of describing the tool."""


@dataclass(frozen=True)
class Cleaned:
    """Sanitized text and the names of the injection patterns that were found (and removed)."""

    text: str
    findings: tuple[str, ...] = ()


def clean_text(raw: object, limit: int = MAX_DESCRIPTION_CHARS) -> Cleaned:
    """Strip control and invisible characters, remove injected sentences, cap the length."""
    text = _INVISIBLE.sub("", _CONTROL.sub("", str(raw or "").replace("\r\n", "\n").replace("\r", "\n")))
    findings: set[str] = set()
    if _TAGGED_BLOCK.search(text):
        findings.add("hidden_tag")
        text = _TAGGED_BLOCK.sub(f" {REMOVED} ", text)
    lines: list[str] = []
    for line in text.split("\n"):
        kept: list[str] = []
        for piece in _SENTENCE.split(line):
            hits = [name for name, pattern in INJECTION_PATTERNS.items() if pattern.search(piece)]
            if hits:
                findings.update(hits)
                if not kept or kept[-1] != REMOVED:
                    kept.append(REMOVED)
            elif piece.strip():
                kept.append(_SPACES.sub(" ", piece).strip())
        lines.append(" ".join(kept))
    text = _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
    if len(text) > limit:
        text = text[: limit - 3].rstrip() + "..."
    return Cleaned(text, tuple(sorted(findings)))


# JSON-schema keywords whose values are schemas (or maps/lists of them); everything else is data.
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_ONE = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


def clean_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A copy of a JSON schema with its descriptions cleaned and its titles dropped (noise to the model)."""
    findings: set[str] = set()

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, Mapping):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title":
                continue
            if key == "description" and isinstance(value, str):
                cleaned = clean_text(value, MAX_SCHEMA_TEXT_CHARS)
                findings.update(cleaned.findings)
                out[key] = cleaned.text
            elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
                out[key] = {k: walk(v) for k, v in value.items()}
            elif key in _SCHEMA_ONE or key in _SCHEMA_LISTS:
                out[key] = walk(value)
            else:
                out[key] = value
        return out

    return walk(schema), tuple(sorted(findings))


def fingerprint(value: Any) -> str:
    """A stable hash of JSON data (key order does not matter)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class PinStore:
    """What each fronted tool looked like when first seen, as hashes in one JSON file.

    Nothing is re-pinned automatically: a changed tool keeps being reported until an
    operator accepts the change with `accept`.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = {}
        self._pins: dict[str, dict[str, dict[str, str]]] = loaded if isinstance(loaded, dict) else {}
        self._batches = 0  # open `batch` blocks: a pin made inside waits for the last to end
        self._unsaved = False

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """The pins made inside are written once, as the block ends: a server's whole tool list costs
        one write, not one a tool (a list of thousands would rewrite the file thousands of times)."""
        with self._lock:
            self._batches += 1
        try:
            yield
        finally:
            with self._lock:
                self._batches -= 1
                if not self._batches and self._unsaved:
                    self._unsaved = False
                    self._save()

    def check(self, server: str, tool: str, parts: Mapping[str, Any]) -> tuple[str, ...]:
        """The names of the parts that differ from the pin; a tool seen for the first time is pinned."""
        hashes = {name: fingerprint(value) for name, value in parts.items()}
        with self._lock:
            pinned = self._pins.setdefault(server, {}).get(tool)
            if pinned is None:
                self._pins[server][tool] = hashes
                if self._batches:
                    self._unsaved = True
                else:
                    self._save()
                return ()
            return tuple(name for name in sorted(hashes) if pinned.get(name) != hashes[name])

    def accept(self, server: str, tool: str | None = None) -> None:
        """Forget the pins of one tool (or a whole server): what is seen next is pinned afresh."""
        with self._lock:
            if tool is None:
                self._pins.pop(server, None)
            else:
                self._pins.get(server, {}).pop(tool, None)
            self._save()

    def _save(self) -> None:
        write_json_atomic(self.path, self._pins)
