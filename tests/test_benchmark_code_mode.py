"""The code-mode benchmark's plays: both do the same work, and code mode's results are the smaller."""

from __future__ import annotations

import pytest

from benchmarks import code_mode


@pytest.mark.filterwarnings("ignore:open_binary:DeprecationWarning")  # bpe-openai reading its vocabulary
def test_both_plays_of_every_task_leave_the_workspace_alike_and_code_mode_reads_less() -> None:
    rows = code_mode.run_tasks()  # raises when a task's two plays end in different states
    assert len(rows) >= 6
    for row in rows:
        assert row.code.results < row.meta.results and row.code.turns < row.meta.turns, row.task
