"""Tasks tools, called through the catalog on a real workspace file (Europe/Berlin, Wed 2025-03-05 10:00)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest

from gateway.errors import NotFound, ToolInputError

if TYPE_CHECKING:
    from tests.services.conftest import MakeWorkspace, Workspace


def _titles(workspace: Workspace, **arguments: Any) -> list[str]:
    return [t["title"] for t in workspace.call("tasks_list_tasks", **arguments)["tasks"]]


def test_a_new_workspace_has_one_default_task_list(workspace: Workspace) -> None:
    lists = workspace.call("tasks_list_tasklists")["tasklists"]
    assert [(tl["title"], tl["default"]) for tl in lists] == [("My Tasks", True)]


def test_a_created_task_has_its_natural_language_due_date_as_a_day(workspace: Workspace) -> None:
    created = workspace.call("tasks_create_task", title="Send report", due="friday", notes="Attach charts")
    assert (created["title"], created["due"], created["notes"], created["status"]) == (
        "Send report",
        "2025-03-07",
        "Attach charts",
        "needsAction",
    )
    listed = workspace.call("tasks_list_tasks")["tasks"]
    assert listed == [created]


def test_an_unreadable_due_date_names_the_due_field(workspace: Workspace) -> None:
    with pytest.raises(ToolInputError) as caught:
        workspace.call("tasks_create_task", title="Send report", due="someday")
    assert caught.value.field == "due"


def test_due_filters_are_inclusive_and_leave_out_undated_and_completed_tasks(workspace: Workspace) -> None:
    for title, due in [
        ("today", "today"),
        ("friday", "friday"),
        ("next week", "next monday"),
        ("undated", None),
    ]:
        workspace.call("tasks_create_task", title=title, **({"due": due} if due else {}))
    done = workspace.call("tasks_create_task", title="done friday", due="friday")
    workspace.call("tasks_complete_task", task_id=done["id"])
    assert _titles(workspace) == ["today", "friday", "next week", "undated"]
    assert _titles(workspace, due_before="friday") == ["today", "friday"]
    assert _titles(workspace, due_after="friday") == ["friday", "next week"]
    assert _titles(workspace, due_after="thursday", due_before="friday", show_completed=True) == [
        "friday",
        "done friday",
    ]


def test_due_before_earlier_than_due_after_is_refused(workspace: Workspace) -> None:
    with pytest.raises(ToolInputError) as caught:
        workspace.call("tasks_list_tasks", due_after="friday", due_before="thursday")
    assert caught.value.field == "due_before"


def test_update_changes_only_the_fields_given_and_an_empty_due_clears_it(workspace: Workspace) -> None:
    created = workspace.call("tasks_create_task", title="Book flights", due="tomorrow", notes="Window seat")
    workspace.clock.advance(timedelta(minutes=5))
    updated = workspace.call("tasks_update_task", task_id=created["id"], notes="Aisle seat")
    assert updated == {**created, "notes": "Aisle seat", "updated": "2025-03-05T10:05:00+01:00"}
    cleared = workspace.call("tasks_update_task", task_id=created["id"], due="")
    assert "due" not in cleared
    assert cleared["title"] == "Book flights"


def test_an_update_with_nothing_to_change_is_refused(workspace: Workspace) -> None:
    created = workspace.call("tasks_create_task", title="Book flights")
    with pytest.raises(ToolInputError):
        workspace.call("tasks_update_task", task_id=created["id"])


def test_completing_stamps_the_clock_and_reopening_clears_it(workspace: Workspace) -> None:
    created = workspace.call("tasks_create_task", title="Pay rent")
    workspace.clock.advance(timedelta(hours=2))
    done = workspace.call("tasks_complete_task", task_id=created["id"])
    assert (done["status"], done["completed_at"]) == ("completed", "2025-03-05T12:00:00+01:00")
    assert _titles(workspace) == []
    reopened = workspace.call("tasks_update_task", task_id=created["id"], completed=False)
    assert reopened["status"] == "needsAction"
    assert "completed_at" not in reopened


def test_deleting_a_task_deletes_its_subtasks(workspace: Workspace) -> None:
    parent = workspace.call("tasks_create_task", title="Move house")
    child = workspace.call("tasks_create_task", title="Pack books", parent=parent["id"])
    assert child["parent"] == parent["id"]
    workspace.call("tasks_delete_task", task_id=parent["id"])
    for task in (parent, child):
        with pytest.raises(NotFound):
            workspace.tasks.get_task("@default", task["id"])
    assert _titles(workspace, show_completed=True) == []


def test_clear_completed_deletes_only_completed_tasks_and_keeps_open_subtasks(workspace: Workspace) -> None:
    parent = workspace.call("tasks_create_task", title="Plan trip")
    child = workspace.call("tasks_create_task", title="Renew passport", parent=parent["id"])
    workspace.call("tasks_create_task", title="Water plants")
    other = workspace.call("tasks_create_task", title="Call bank")
    for task in (parent, other):
        workspace.call("tasks_complete_task", task_id=task["id"])
    assert workspace.call("tasks_clear_completed") == {"cleared": 2}
    assert sorted(_titles(workspace, show_completed=True)) == ["Renew passport", "Water plants"]
    assert "parent" not in workspace.call("tasks_update_task", task_id=child["id"], title="Renew passport!")
    assert workspace.call("tasks_clear_completed") == {"cleared": 0}


def test_tasks_in_another_list_are_reached_by_its_id(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace(seed_demo=True)
    lists = {tl["title"]: tl["id"] for tl in workspace.call("tasks_list_tasklists")["tasklists"]}
    assert sorted(lists) == ["Errands", "My Tasks"]
    errands = lists["Errands"]
    assert _titles(workspace, tasklist_id=errands) == ["Pick up dry cleaning", "Buy coffee beans"]
    created = workspace.call("tasks_create_task", title="Post parcel", tasklist_id=errands)
    assert created["tasklist_id"] == errands
    with pytest.raises(NotFound):
        workspace.call("tasks_complete_task", task_id=created["id"])  # not in @default


def test_an_unknown_task_list_or_parent_is_not_found(workspace: Workspace) -> None:
    with pytest.raises(NotFound, match="task list"):
        workspace.call("tasks_list_tasks", tasklist_id="nope")
    with pytest.raises(NotFound):
        workspace.call("tasks_create_task", title="Orphan", parent="nope")
    with pytest.raises(NotFound):
        workspace.call("tasks_delete_task", task_id="nope")
