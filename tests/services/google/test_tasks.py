"""The tasks tools on Google Tasks v1: the exact requests, and what the model gets back."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.errors import NotFound

from .conftest import GoogleWorkspace

LIST = "/tasks/v1/lists/%40default/tasks"


def task(task_id: str = "t1", **fields: Any) -> dict[str, Any]:
    """A tasks resource as Google returns it."""
    return {
        "kind": "tasks#task",
        "id": task_id,
        "etag": '"LTE4MjE"',
        "title": "Send the Q3 report",
        "updated": "2025-03-05T09:00:00.000Z",
        "selfLink": f"https://www.googleapis.com/tasks/v1/lists/L1/tasks/{task_id}",
        "position": "00000000000000000001",
        "status": "needsAction",
        "links": [],
        "webViewLink": f"https://tasks.google.com/task/{task_id}",
    } | fields


def test_list_tasklists_marks_the_default_list(gws: GoogleWorkspace) -> None:
    gws.google.reply(
        {
            "items": [
                {"id": "L2", "title": "Errands", "updated": "2025-03-01T10:00:00.000Z"},
                {"id": "L1", "title": "My Tasks", "updated": "2025-03-04T10:00:00.000Z"},
            ]
        }
    )
    gws.google.reply({"id": "L1", "title": "My Tasks", "updated": "2025-03-04T10:00:00.000Z"})
    result = gws.call("tasks_list_tasklists")
    listing, default = gws.google.sent
    assert (listing.method, listing.path, listing.query) == (
        "GET",
        "/tasks/v1/users/@me/lists",
        {"maxResults": ["100"]},
    )
    assert default.path == "/tasks/v1/users/@me/lists/%40default"
    assert result == {
        "tasklists": [
            {"id": "L1", "title": "My Tasks", "updated": "2025-03-04T11:00:00+01:00", "default": True},
            {"id": "L2", "title": "Errands", "updated": "2025-03-01T11:00:00+01:00", "default": False},
        ]
    }


def test_list_tasks_filters_by_due_day_and_sorts_open_first_by_due(gws: GoogleWorkspace) -> None:
    gws.google.reply(
        {
            "items": [
                task("late", due="2025-03-07T00:00:00.000Z", position="2"),
                task("soon", due="2025-03-06T00:00:00.000Z", position="3"),
                task("after", due="2025-03-08T00:00:00.000Z"),
            ],
            "nextPageToken": "n",
        }
    )
    gws.google.reply({"items": [task("old", due="2025-03-06T00:00:00.000Z", status="deleted", deleted=True)]})
    result = gws.call("tasks_list_tasks", due_after="tomorrow", due_before="friday")
    first, second = gws.google.sent
    assert (first.method, first.path) == ("GET", LIST)
    assert first.query == {
        "showCompleted": ["false"],
        "showHidden": ["false"],
        "dueMin": ["2025-03-06T00:00:00.000Z"],
        "dueMax": ["2025-03-08T00:00:00.000Z"],
        "maxResults": ["100"],
    }
    assert second.query["pageToken"] == ["n"]
    assert [t["id"] for t in result["tasks"]] == ["soon", "late"] and result["more"] is False
    assert result["tasks"][0] == {
        "title": "Send the Q3 report",
        "due": "2025-03-06",
        "id": "soon",
        "tasklist_id": "L1",
        "status": "needsAction",
        "updated": "2025-03-05T10:00:00+01:00",
    }


def test_list_tasks_with_completed_ones_shows_hidden_ones_too(gws: GoogleWorkspace) -> None:
    gws.google.reply(
        {
            "items": [
                task("done", status="completed", completed="2025-03-04T12:00:00.000Z", hidden=True),
                task("open"),
            ]
        }
    )
    result = gws.call("tasks_list_tasks", show_completed=True, max_results=1)
    assert gws.google.only().query["showHidden"] == ["true"]
    assert [t["id"] for t in result["tasks"]] == ["open"] and result["more"] is True


def test_create_task_sends_the_due_day_as_midnight_utc_and_the_parent_as_a_parameter(
    gws: GoogleWorkspace,
) -> None:
    gws.google.reply(task("t2", due="2025-03-07T00:00:00.000Z", notes="Attach the charts.", parent="t1"))
    result = gws.call(
        "tasks_create_task", title="Send the Q3 report", due="friday", notes="Attach the charts.", parent="t1"
    )
    request = gws.google.only()
    assert (request.method, request.path, request.query) == ("POST", LIST, {"parent": ["t1"]})
    assert request.body == {
        "title": "Send the Q3 report",
        "notes": "Attach the charts.",
        "due": "2025-03-07T00:00:00.000Z",
    }
    assert result["parent"] == "t1" and result["due"] == "2025-03-07"


def test_update_task_patches_only_the_given_fields_and_null_clears(gws: GoogleWorkspace) -> None:
    gws.google.reply(task(title="Renamed"))
    gws.call("tasks_update_task", task_id="t1", title="Renamed", due="", notes="")
    request = gws.google.only()
    assert (request.method, request.path) == ("PATCH", f"{LIST}/t1")
    assert request.body == {"title": "Renamed", "notes": None, "due": None}


def test_complete_and_reopen_a_task(gws: GoogleWorkspace) -> None:
    gws.google.reply(task(status="completed", completed="2025-03-05T09:00:00.000Z"))
    done = gws.call("tasks_complete_task", task_id="t1")
    assert gws.google.sent[0].body == {"status": "completed"}
    assert done["status"] == "completed" and done["completed_at"] == "2025-03-05T10:00:00+01:00"
    gws.google.reply(task())
    gws.call("tasks_update_task", task_id="t1", completed=False)
    assert gws.google.sent[1].body == {"status": "needsAction", "completed": None}


def test_delete_task_and_a_missing_one(gws: GoogleWorkspace) -> None:
    gws.google.empty().fail(404, "notFound", "Task not found.")
    assert gws.call("tasks_delete_task", task_id="t1") == {"deleted": True, "task_id": "t1"}
    assert (gws.google.sent[0].method, gws.google.sent[0].path) == ("DELETE", f"{LIST}/t1")
    with pytest.raises(NotFound, match="task 't1' in task list '@default'"):
        gws.call("tasks_delete_task", task_id="t1")


def test_clear_completed_deletes_them_for_good_and_keeps_their_open_subtasks(gws: GoogleWorkspace) -> None:
    gws.google.reply(
        {
            "items": [
                task("parent", status="completed", completed="2025-03-04T12:00:00.000Z"),
                task("open-child", parent="parent"),
                task("done-child", parent="parent", status="completed", completed="2025-03-04T12:00:00.000Z"),
                task("open"),
            ]
        }
    )
    gws.google.reply(task("open-child")).empty().empty()
    assert gws.call("tasks_clear_completed") == {"cleared": 2}
    listing, move, first, second = gws.google.sent
    assert listing.query == {"showCompleted": ["true"], "showHidden": ["true"], "maxResults": ["100"]}
    assert (move.method, move.path, move.query) == ("POST", f"{LIST}/open-child/move", {})
    assert [(r.method, r.path) for r in (first, second)] == [
        ("DELETE", f"{LIST}/done-child"),
        ("DELETE", f"{LIST}/parent"),
    ]
