"""services.workspace: the catalog's shape and flags, and what `provide` builds."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from gateway.context import ToolContext
from gateway.errors import UserError
from gateway.toolset import ProviderOptions
from services.backends import CalendarBackend, MailBackend, TasksBackend, WorkspaceSettings
from services.workspace import BY_ACTION, BY_CATEGORY, BY_NAME, CATALOG, provide

if TYPE_CHECKING:
    from tests.services.conftest import MakeWorkspace

EXPECTED_FLAGS = {
    "calendar_list_calendars": ("list", ("read_only", "concurrency_safe")),
    "calendar_list_events": ("list", ("read_only", "concurrency_safe")),
    "calendar_get_event": ("read", ("read_only", "concurrency_safe")),
    "calendar_create_event": ("create", ()),
    "calendar_update_event": ("update", ()),
    "calendar_delete_event": ("delete", ("destructive",)),
    "calendar_find_free_time": ("search", ("read_only", "concurrency_safe")),
    "calendar_quick_add": ("create", ()),
    "gmail_search_messages": ("search", ("read_only", "concurrency_safe")),
    "gmail_read_message": ("read", ("read_only", "concurrency_safe")),
    "gmail_send_message": ("send", ("destructive",)),
    "gmail_create_draft": ("create", ()),
    "gmail_send_draft": ("send", ("destructive",)),
    "gmail_reply": ("send", ("destructive",)),
    "gmail_mark_read": ("update", ()),
    "gmail_modify_labels": ("update", ()),
    "gmail_archive": ("update", ()),
    "gmail_trash_message": ("delete", ()),
    "gmail_delete_message": ("delete", ("destructive",)),
    "gmail_list_labels": ("list", ("read_only", "concurrency_safe")),
    "tasks_list_tasklists": ("list", ("read_only", "concurrency_safe")),
    "tasks_list_tasks": ("list", ("read_only", "concurrency_safe")),
    "tasks_create_task": ("create", ()),
    "tasks_update_task": ("update", ()),
    "tasks_complete_task": ("update", ()),
    "tasks_delete_task": ("delete", ("destructive",)),
    "tasks_clear_completed": ("delete", ("destructive",)),
}
REVERSIBLE_DELETES = {"gmail_trash_message"}


def test_the_catalog_has_exactly_the_workspace_tools_with_their_actions_and_flags() -> None:
    assert {d.name: (d.action, d.flags) for d in CATALOG} == EXPECTED_FLAGS
    assert BY_NAME is CATALOG.by_name


def test_every_tool_has_consistent_flags() -> None:
    for d in CATALOG:
        if d.read_only:
            assert not d.is_destructive and d.concurrency_safe, d.name
        if d.action in ("send",) or (d.action == "delete" and d.name not in REVERSIBLE_DELETES):
            assert d.is_destructive, d.name
        if not d.read_only and not d.is_destructive:
            assert d.destructive is False, f"{d.name}: reversible writes say destructive=False explicitly"


def test_every_tool_is_described_for_the_model_with_a_valid_example() -> None:
    for d in CATALOG:
        assert d.category in ("calendar", "gmail", "tasks") and d.name.startswith(d.category + "_")
        assert len(d.example_calls) == 1, d.name
        d.model.model_validate(d.example_calls[0])
        assert 3 <= len(d.example_requests) <= 5, d.name
        assert "title" not in d.json_schema
        for name, info in d.model.model_fields.items():
            assert info.description, f"{d.name}.{name}"


def test_category_and_action_indexes_are_sorted() -> None:
    for index in (BY_CATEGORY, BY_ACTION):
        assert list(index) == sorted(index)
        for names in index.values():
            assert list(names) == sorted(names)
    assert list(BY_CATEGORY) == ["calendar", "gmail", "tasks"]
    assert sum(len(names) for names in BY_ACTION.values()) == len(CATALOG) == 27


def test_provide_registers_every_backend_and_the_settings_as_resources(tmp_path: Path) -> None:
    toolset = provide(ProviderOptions(data_dir=tmp_path, timezone="Asia/Kolkata", seed_demo=False))
    ctx = ToolContext(resources=toolset.resources)
    for kind in (CalendarBackend, MailBackend, TasksBackend):
        assert isinstance(ctx.require(kind), kind)
    assert ctx.require(WorkspaceSettings).timezone == "Asia/Kolkata"
    assert toolset.catalog is CATALOG
    assert (tmp_path / "workspace.sqlite3").is_file()


def test_without_a_clock_the_workspace_reads_real_time(tmp_path: Path) -> None:
    toolset = provide(ProviderOptions(data_dir=tmp_path, seed_demo=False))
    settings = ToolContext(resources=toolset.resources).require(WorkspaceSettings)
    assert settings.now().tzinfo is not None


def test_a_google_backend_without_credentials_is_refused_at_startup(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="gateway auth google"):
        provide(ProviderOptions(data_dir=tmp_path, backend="google"))
    assert not (tmp_path / "workspace.sqlite3").exists()


def test_an_unknown_backend_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="'ftp' is not available"):
        provide(ProviderOptions(data_dir=tmp_path, backend="ftp"))


def test_an_unknown_timezone_is_refused_at_startup(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="timezone"):
        provide(ProviderOptions(data_dir=tmp_path, timezone="Europe/Atlantis"))


def test_the_demo_is_seeded_once_relative_to_the_clock(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace(seed_demo=True)

    def counts() -> tuple[int, int, int, int]:
        events = workspace.call("calendar_list_events", start="today", end="in 7 days")["events"]
        mail = workspace.call("gmail_search_messages", query="in:anywhere", max_results=100)["messages"]
        tasks = [
            t
            for tl in workspace.call("tasks_list_tasklists")["tasklists"]
            for t in workspace.call("tasks_list_tasks", tasklist_id=tl["id"], show_completed=True)["tasks"]
        ]
        return len(events), len(mail), sum(m["unread"] for m in mail), len(tasks)

    assert counts() == (6, 8, 3, 7)
    first_event = workspace.call("calendar_list_events", start="today")["events"][0]
    assert first_event["start"] == "2025-03-05T09:30:00+01:00"
    again = make_workspace(seed_demo=True)
    assert again.data_dir == workspace.data_dir
    assert counts() == (6, 8, 3, 7)


def test_seeding_off_leaves_the_workspace_empty(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace(seed_demo=False)
    assert workspace.call("gmail_search_messages", query="in:anywhere")["messages"] == []
    assert workspace.call("calendar_list_events")["events"] == []
    assert workspace.call("tasks_list_tasks", show_completed=True)["tasks"] == []


def test_a_workspace_holding_data_is_not_seeded(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace(seed_demo=False)
    workspace.call("tasks_create_task", title="Mine")
    make_workspace(seed_demo=True)
    assert [t["title"] for t in workspace.call("tasks_list_tasks")["tasks"]] == ["Mine"]
    assert workspace.call("calendar_list_events")["events"] == []


def test_an_emptied_demo_workspace_is_not_seeded_again(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace(seed_demo=True)
    with sqlite3.connect(workspace.data_dir / "workspace.sqlite3") as conn:
        for table in ("events", "messages", "tasks"):
            conn.execute(f"DELETE FROM {table}")
    make_workspace(seed_demo=True)
    assert workspace.call("gmail_search_messages", query="in:anywhere")["messages"] == []


def test_calls_after_close_are_refused(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace()
    assert workspace.toolset.close is not None
    workspace.toolset.close()
    with pytest.raises(UserError, match="closed"):
        workspace.call("tasks_list_tasklists")
