"""What the command line prints: JSON for machines, and exit codes that say how a call ended."""

from __future__ import annotations

import json
from typing import Any

from ..context import ToolResult
from ..rendering import result_payload, shown_json


def dump(value: Any) -> str:
    """JSON for the terminal: readable non-ASCII text, but no control or bidi character raw."""
    return shown_json(json.dumps(value, indent=2, ensure_ascii=False))


def print_result(result: ToolResult) -> int:
    payload = result_payload(result)
    print(dump(payload))
    if result.status == "ok":
        return 0
    if result.status == "confirmation_required" or (result.error and result.error.code == "declined"):
        return 3
    return 1
