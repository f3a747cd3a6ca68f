"""History for the learning-from-use benchmark: a development split, and feeding it to a gateway.

History lines are in the datasets' `queries.jsonl` format; each is fed through `Usage.import_lines`,
the path `gateway usage import` takes, with every gold tool a positive for its query.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from gateway.usage import SqliteUsageStore, Usage

from .datasets import Dataset


def is_history(query: str) -> bool:
    """The development split: sha1 of the query's UTF-8 bytes, as an integer, divisible by 4."""
    return int(hashlib.sha1(query.encode("utf-8")).hexdigest(), 16) % 4 == 0


def split(queries: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(history, test) of a dataset's queries by `is_history`."""
    history = [q for q in queries if is_history(q["query"])]
    test = [q for q in queries if not is_history(q["query"])]
    return history, test


def usage_from(data: Dataset, history: Sequence[dict[str, Any]], *, semantic: bool) -> tuple[Usage, int]:
    """A `Usage` on an in-memory store holding `history`; (it, pairs recorded)."""
    usage = Usage(SqliteUsageStore(":memory:"), semantic=semantic)
    lines = []
    for record in history:
        gold = set(record.get("gold") or [])
        for group in record.get("gold_groups") or []:
            gold.update(group)
        tools = sorted(data.to_catalog[name] for name in gold if name in data.to_catalog)
        if tools:
            lines.append(json.dumps({"query": record["query"], "tools": tools}))
    recorded, problems = usage.import_lines(lines)
    assert not problems, problems[:3]
    usage.learned(list(data.catalog), wait=True)  # read the store now, not in the first query
    return usage, recorded
