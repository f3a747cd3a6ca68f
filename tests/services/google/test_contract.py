"""One scenario, two backends: the local workspace and Google (scripted) give the model the same results.

Create, find, update and delete an event; send and find a message; create, complete and clear a task.
Ids differ by nature (each backend makes its own), so they are replaced by their order of appearance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..conftest import WEDNESDAY_10AM, MakeWorkspace
from .conftest import GoogleWorkspace, rfc3339_ms
from .test_calendar import event
from .test_mail import LABELS, message
from .test_tasks import task

Call = Callable[..., Any]
ID_KEYS = frozenset(("id", "thread_id", "tasklist_id", "event_id", "task_id"))
SUBJECT = "Grüße zum Q3 ✓"


def scenario(call: Call) -> list[Any]:
    results: list[Any] = []

    def step(name: str, **arguments: Any) -> Any:
        results.append(call(name, **arguments))
        return results[-1]

    created = step(
        "calendar_create_event",
        title="Design review",
        start="tomorrow 3pm",
        duration="1h",
        location="Room 4",
        attendees=["ana@example.com"],
    )
    step("calendar_list_events", start="today", end="friday", query="review")
    step("calendar_update_event", event_id=created["id"], start="friday 10am")
    step("calendar_delete_event", event_id=created["id"])
    step("calendar_list_events", start="today", end="friday")
    step("gmail_send_message", to=["ana@example.com"], subject=SUBJECT, body="See you at noon!")
    step("gmail_search_messages", query="in:sent subject:Q3")
    todo = step("tasks_create_task", title="Send the Q3 report", due="friday")
    step("tasks_complete_task", task_id=todo["id"])
    step("tasks_clear_completed")
    step("tasks_list_tasks", show_completed=True)
    return results


def script_google(gws: GoogleWorkspace) -> None:
    """What Google answers, request by request, in the shapes it really uses."""
    guests = [
        {"email": "you@example.com", "organizer": True, "self": True, "responseStatus": "accepted"},
        {"email": "ana@example.com", "responseStatus": "needsAction"},
    ]
    created = event("g1", location="Room 4", attendees=guests)
    moved = created | {
        "start": {"dateTime": "2025-03-07T10:00:00+01:00", "timeZone": "Europe/Berlin"},
        "end": {"dateTime": "2025-03-07T11:00:00+01:00", "timeZone": "Europe/Berlin"},
    }
    google = gws.google
    google.reply(created).reply({"timeZone": "Europe/Berlin", "items": [created]})
    google.reply(created).reply(moved).empty().reply({"timeZone": "Europe/Berlin", "items": []})
    sent = message(
        "s1",
        labels=("SENT",),
        sender="you@example.com",
        to="ana@example.com",
        subject=SUBJECT,
        body="See you at noon!",
        when=WEDNESDAY_10AM,
    )
    google.reply({"id": "s1", "threadId": "s1", "labelIds": ["SENT"]}).reply(sent).reply(LABELS)
    google.reply({"messages": [{"id": "s1", "threadId": "s1"}]})
    google.reply(
        message(
            "s1",
            shape="metadata",
            labels=("SENT",),
            sender="you@example.com",
            to="ana@example.com",
            subject=SUBJECT,
            body="See you at noon!",
            when=WEDNESDAY_10AM,
        )
    )
    google.reply(LABELS)
    new_task = task("k1", due="2025-03-07T00:00:00.000Z")
    done = new_task | {"status": "completed", "completed": "2025-03-05T09:00:00.000Z"}
    google.reply(new_task).reply(done).reply({"items": [done]}).empty().reply({"kind": "tasks#tasks"})
    assert int(sent["internalDate"]) == rfc3339_ms(WEDNESDAY_10AM)


def normalized(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {
            key: (
                ids.setdefault(item, f"<id {len(ids) + 1}>")
                if key in ID_KEYS and isinstance(item, str)
                else normalized(item, ids)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [normalized(item, ids) for item in value]
    return value


def test_the_scenario_gives_the_model_the_same_results_on_both_backends(
    make_workspace: MakeWorkspace, gws: GoogleWorkspace
) -> None:
    local = scenario(make_workspace().call)
    script_google(gws)
    remote = scenario(gws.call)
    assert gws.google.pending() == 0
    assert normalized(remote, {}) == normalized(local, {})
    assert [(r.method, r.path.rsplit("/", 1)[-1]) for r in gws.google.sent] == [
        ("POST", "events"),
        ("GET", "events"),
        ("GET", "g1"),
        ("PATCH", "g1"),
        ("DELETE", "g1"),
        ("GET", "events"),
        ("POST", "send"),
        ("GET", "s1"),
        ("GET", "labels"),
        ("GET", "messages"),
        ("GET", "s1"),
        ("GET", "labels"),
        ("POST", "tasks"),
        ("PATCH", "k1"),
        ("GET", "tasks"),
        ("DELETE", "k1"),
        ("GET", "tasks"),
    ]


def test_the_scenario_results_are_what_the_model_should_see(make_workspace: MakeWorkspace) -> None:
    results = normalized(scenario(make_workspace().call), {})
    assert results[0] == {
        "title": "Design review",
        "start": "2025-03-06T15:00:00+01:00",
        "end": "2025-03-06T16:00:00+01:00",
        "all_day": False,
        "location": "Room 4",
        "attendees": ["ana@example.com"],
        "id": "<id 1>",
        "calendar_id": "primary",
    }
    assert results[2]["start"] == "2025-03-07T10:00:00+01:00" and results[4]["events"] == []
    assert results[5]["subject"] == SUBJECT and results[5]["labels"] == ["SENT"]
    assert results[6]["messages"] == [results[5]]
    assert results[8]["status"] == "completed" and results[9] == {"cleared": 1}
    assert results[10] == {"tasks": [], "more": False}
