"""Counting the expensive work a gateway does per tool: params models built, JSON schemas generated.

A large catalog is usable only if starting a gateway and discovering tools build neither (only
`get_tool_schema` and `invoke_tool` do, for their one tool). The tests count the work, never the
time: `counted(monkeypatch)` wraps `ToolDefinition.model` (a lazy model's build) and
`ToolDefinition.json_schema` and returns the live counts.
"""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from typing import Any

import pytest

from gateway import ToolDefinition


def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts `models` (lazy params models built) and `schemas` (JSON schemas generated) from now on."""
    counts: Counter[str] = Counter()
    model = ToolDefinition.__dict__["model"].func
    schema = ToolDefinition.__dict__["json_schema"].func

    def built(self: ToolDefinition) -> Any:
        if self.is_lazy:
            counts["models"] += 1
        return model(self)

    def generated(self: ToolDefinition) -> Any:
        counts["schemas"] += 1
        return schema(self)

    for name, func in (("model", built), ("json_schema", generated)):
        prop = cached_property(func)
        prop.__set_name__(ToolDefinition, name)
        monkeypatch.setattr(ToolDefinition, name, prop)
    return counts
