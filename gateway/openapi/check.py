"""`gateway openapi check SPEC`: what the gateway makes of a description, before serving it.

Every problem with its JSON pointer and what the gateway does about it, then the operation count by
tag, by method and by flag (as the provider sets flags, with no `safe` marks unless given). Building
every operation's parameters is what finds the problems of schemas and references, so this reads the
whole description: seconds for the largest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from .document import Problem, parse, pointer, read_bytes, version_of
from .operations import Operation, operations_of
from .origins import origin, shown
from .params import layout
from .provider import flags, server_url
from .schemas import Converter
from .validation import problems as schema_problems

MAX_LISTED_PROBLEMS = 200
"""Problems listed in the text report (all of them are counted, and all are in --json)."""


@dataclass
class Report:
    path: str
    title: str
    version: str
    base_url: str | None
    operations: int
    by_tag: dict[str, int] = field(default_factory=dict)
    by_method: dict[str, int] = field(default_factory=dict)
    by_flag: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "title": self.title,
            "openapi": self.version,
            "base_url": self.base_url,
            "operations": self.operations,
            "by_tag": self.by_tag,
            "by_method": self.by_method,
            "by_flag": self.by_flag,
            "problems": [p.as_dict() for p in self.problems],
        }

    def lines(self) -> list[str]:
        out = [
            f"{self.path}: {self.title} (OpenAPI {self.version}), {self.operations} operations",
            f"base URL: {self.base_url or 'none (set base_url in the [[openapi]] entry)'}",
            f"{len(self.problems)} problems" + (":" if self.problems else ""),
        ]
        for p in self.problems[:MAX_LISTED_PROBLEMS]:
            out.append(f"  {p.pointer}\n      {p.message}\n      -> {p.action}")
        if len(self.problems) > MAX_LISTED_PROBLEMS:
            out.append(f"  ... and {len(self.problems) - MAX_LISTED_PROBLEMS} more (--json lists every one)")
        out.append("by flag: " + ", ".join(f"{k} {v}" for k, v in self.by_flag.items()))
        out.append("by method: " + ", ".join(f"{k} {v}" for k, v in self.by_method.items()))
        out.append("by tag:")
        out += [f"  {tag:<40} {n:>5}" for tag, n in self.by_tag.items()]
        return out


def _elsewhere(ops: Sequence[Operation], base: str | None) -> list[Problem]:
    """Operations whose own server is on another origin than the API's (ignored when serving)."""
    out = []
    for op in ops:
        own = urljoin(f"{base.rstrip('/')}/", op.server) if op.server and base else op.server
        if own and origin(own) != origin(base):
            out.append(
                Problem(
                    pointer("paths", op.path, op.method.lower(), "servers"),
                    f"the operation's server is on {shown(origin(own))}, not on the API's {shown(origin(base))}",
                    "ignored (no credentials go there): its requests go to the base URL unless allowed_servers "
                    "lists that server",
                )
            )
    return out


def check(path: Path, name: str = "api", safe: Sequence[str] = ()) -> Report:
    """Raises: SpecError: the description cannot be served at all."""
    doc = parse(read_bytes(path), path)
    version = version_of(doc, path)
    ops, found = operations_of(name, doc)
    converter = Converter(doc, version)
    for op in ops:
        where = pointer("paths", op.path, op.method.lower())
        made = layout(converter, op.path, op.method)
        for problem in schema_problems(made.schema):
            found.append(
                Problem(
                    where, f"a parameter's schema is invalid: {problem}", "that parameter takes any value"
                )
            )
        for note in made.notes:
            action = (
                "calls are refused" if made.unsupported_body else "the operation is served without its body"
            )
            found.append(Problem(f"{where}/requestBody", note, action))
    found += converter.problems.values()
    servers = doc.get("servers")
    base = server_url([s for s in servers if isinstance(s, dict)] if isinstance(servers, list) else [], {})
    found += _elsewhere(ops, base)
    if not base or not base.startswith(("http://", "https://")):
        found.append(
            Problem(
                "#/servers",
                "no absolute server URL" + (f" ({base!r})" if base else ""),
                "calls fail until base_url is set in the [[openapi]] entry",
            )
        )
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    assert isinstance(info, dict)
    tags: Counter[str] = Counter(op.tags[0] if op.tags else "(no tag)" for op in ops)
    methods: Counter[str] = Counter(op.method for op in ops)
    kinds: Counter[str] = Counter()
    for op in ops:
        read_only, destructive = flags(op, safe)
        kinds["read_only" if read_only else "destructive" if destructive else "write"] += 1
    return Report(
        path=str(path),
        title=str(info.get("title", "")),
        version=version,
        base_url=base,
        operations=len(ops),
        by_tag=dict(sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))),
        by_method=dict(sorted(methods.items(), key=lambda kv: (-kv[1], kv[0]))),
        by_flag={k: kinds[k] for k in ("read_only", "write", "destructive")},
        problems=sorted(found, key=lambda p: p.pointer),
    )
