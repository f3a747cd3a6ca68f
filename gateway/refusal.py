"""A call the chokepoint stops before it runs: the model's error and the audit outcome, on their way to a result.

Raised by the engine's own steps and by the checks it delegates to (rate limits), so each check stays in
the module that owns it and costs `Gateway._invoke` one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .context import ErrorInfo

if TYPE_CHECKING:
    from .audit import Outcome
    from .gate.confirmation import DecidedBy


class CallRefused(Exception):
    """A model-facing error and its audit outcome (and who decided, for a declined confirmation)."""

    def __init__(self, info: ErrorInfo, outcome: Outcome, decided_by: DecidedBy | None = None) -> None:
        self.info = info
        self.outcome = outcome
        self.decided_by = decided_by
