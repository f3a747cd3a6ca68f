"""The workspace's destructive tools tell the approver what an id is, through the real gateway."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from gateway import Gateway, run_sync

if TYPE_CHECKING:
    from tests.services.conftest import Workspace


def _asked(workspace: Workspace, tool: str, **parameters: Any) -> str:
    """The preview the approver reads for this call (nothing runs: no one approves it)."""
    gw = Gateway(workspace.toolset.catalog, resources=workspace.toolset.resources)
    result = run_sync(gw.invoke(tool, parameters))
    assert result.status == "confirmation_required" and result.pending is not None
    return result.pending.preview


def test_deleting_an_event_shows_its_title_time_and_guests(workspace: Workspace) -> None:
    event = workspace.call(
        "calendar_create_event",
        title="Dentist",
        start="2025-03-06 10:00",
        duration="45m",
        location="Main St 1",
        attendees=["ana@example.com"],
    )
    assert _asked(workspace, "calendar_delete_event", event_id=event["id"]).endswith(
        f'(event {event["id"]} is "Dentist", Thu 06 Mar 2025 10:00 to Thu 06 Mar 2025 10:45 '
        'at "Main St 1", with ana@example.com)'
    )


def test_deleting_or_replying_to_a_message_shows_its_sender_and_subject(workspace: Workspace) -> None:
    message_id = workspace.deliver("Bob <bob@example.com>", "Invoice 42", "Please pay.", hours_ago=2)
    about = (
        f'(message {message_id} is from Bob <bob@example.com>, subject "Invoice 42", Wed 05 Mar 2025 08:00)'
    )
    assert _asked(workspace, "gmail_delete_message", message_id=message_id).endswith(about)
    assert _asked(workspace, "gmail_reply", message_id=message_id, body="Paid.").endswith(about)


def test_sending_a_draft_shows_every_recipient_and_the_whole_body(workspace: Workspace) -> None:
    body = "Thoughts?" + " " * 300 + "P.S. the door code is 4711"
    draft = workspace.call(
        "gmail_create_draft", to=["ana@example.com"], bcc=["eve@example.net"], subject="Plan", body=body
    )
    assert _asked(workspace, "gmail_send_draft", draft_id=draft["draft_id"]).endswith(
        f"(draft {draft['draft_id']} goes to ana@example.com; bcc eve@example.net; "
        f'subject "Plan", body "{body}")'
    )


def test_deleting_a_task_and_clearing_completed_ones_show_their_titles(workspace: Workspace) -> None:
    kept = workspace.call("tasks_create_task", title="Send report", due="2025-03-07")
    done = workspace.call("tasks_create_task", title="Book flights")
    workspace.call("tasks_complete_task", task_id=done["id"])
    assert _asked(workspace, "tasks_delete_task", task_id=kept["id"]).endswith(
        f'(task {kept["id"]} is "Send report", due 2025-03-07)'
    )
    assert _asked(workspace, "tasks_clear_completed").endswith(
        '(1 completed task(s) in @default: "Book flights")'
    )


@pytest.mark.parametrize(
    "case",
    [
        ("calendar_delete_event", {"event_id": "nope"}, 'event_id="nope", calendar_id="primary"', "no event"),
        ("gmail_delete_message", {"message_id": "nope"}, 'message_id="nope"', "no message"),
        ("tasks_delete_task", {"task_id": "nope"}, 'task_id="nope", tasklist_id="@default"', "no task"),
    ],
    ids=["event", "message", "task"],
)
def test_an_id_that_names_nothing_is_asked_with_the_raw_id_and_says_so_without_a_warning(
    workspace: Workspace, caplog: pytest.LogCaptureFixture, case: tuple[str, dict[str, str], str, str]
) -> None:
    tool, parameters, shown, missing = case
    values, about = _asked(workspace, tool, **parameters).split(" with ", 1)[1].split(" (", 1)
    assert values == shown
    assert about.startswith(f"could not be looked up: {missing}") and "'nope'" in about
    assert [r for r in caplog.records if r.levelname == "WARNING"] == []
