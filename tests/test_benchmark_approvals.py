"""The approvals benchmark's plays: the same work whichever way a person decides, with fewer decisions
as a plan or under a rule than call by call."""

from __future__ import annotations

import pytest

from benchmarks import approvals


@pytest.mark.filterwarnings("ignore:open_binary:DeprecationWarning")  # bpe-openai reading its vocabulary
def test_single_calls_a_plan_and_a_rule_do_the_same_work_with_one_decision_instead_of_one_a_write() -> None:
    rows = approvals.run_tasks(["remind attendees", "thank ten", "move tasks", "meeting places"])
    by_task = {r.task: r for r in rows}
    ten = by_task["thank ten"].plays
    assert (ten["single"].decisions, ten["plan"].decisions, ten["rule"].decisions) == (10, 1, 1)
    assert ten["plan"].read < ten["single"].read and ten["rule"].read < ten["plan"].read
    assert ten["single"].turns == ten["rule"].turns + 10  # one resume for each write
    assert by_task["remind attendees"].rules == 1  # one tool written with: one rule
    # Writes that need no approval of their own (moving tasks) are still held by a plan: one decision.
    assert [p.decisions for p in by_task["move tasks"].plays.values()] == [0, 1, 0]
    quiet = by_task["meeting places"].plays  # reads only: nobody is asked in any regime
    assert [p.decisions for p in quiet.values()] == [0, 0, 0]
