"""The code-mode benchmark's plays: both do the same work, and code mode's results are the smaller."""

from __future__ import annotations

import pytest

from benchmarks import code_mode
from benchmarks.code_mode_tasks import Play, invoke, program


@pytest.mark.filterwarnings("ignore:open_binary:DeprecationWarning")  # bpe-openai reading its vocabulary
def test_every_play_of_every_task_leaves_the_workspace_alike_and_code_mode_reads_less() -> None:
    rows = code_mode.run_tasks()  # raises when a task's plays end in different states
    assert len(rows) >= 6
    for row in rows:
        assert row.code.results < row.meta.results and row.code.turns < row.meta.turns, row.task
        # run_code alone plays the same programs, and reads one tool definition instead of four
        assert (row.only.results, row.only.turns) == (row.code.results, row.code.turns), row.task
        assert row.only.read < row.code.read, row.task


def test_a_play_refuses_a_turn_that_names_a_tool_or_parameter_no_result_has_shown() -> None:
    with code_mode.workspace("code") as gw:
        play = Play(gw, "Archive my read receipts.")
        play.start()
        with pytest.raises(AssertionError, match="gmail_archive"):
            play.turn([program("call('gmail_archive', {'message_ids': []})")])
        play.turn([program("discover('archive messages', limit=1)['tools']")])
        with pytest.raises(AssertionError, match="thread_ids"):
            play.turn([program("call('gmail_archive', thread_ids=[])")])
        with pytest.raises(AssertionError, match="gmail_search_messages"):
            play.turn([invoke("gmail_search_messages", {})])
        play.turn([program("call('gmail_archive', message_ids=['m1'])")])  # shown: it runs
