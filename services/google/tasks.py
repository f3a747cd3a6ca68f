"""Google Tasks v1 as a `TasksBackend`: tasklists.list/get/insert and tasks.list/get/insert/patch/move/delete.

Google keeps a due date as midnight UTC of that day, so dates go out as `YYYY-MM-DDT00:00:00.000Z` and
come back as their date part. "@default" is Google's own alias of the main list. A subtask is created
with `parent`; tasks are ordered open first, by due date, then by Google's `position`.

Clearing: Google's `tasks.clear` only hides completed tasks (they stay listed with `showHidden`), while
the tool promises they are deleted for good with their open subtasks kept. So `clear_completed` lists
the completed tasks, moves their open subtasks to the top level, and deletes them, subtasks first.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from gateway.errors import ToolInputError

from ..backends import NewTask, Task, TaskChanges, TaskList
from .client import GoogleClient
from .errors import Call

SERVICE = "Google Tasks"
DEFAULT_ALIAS = "@default"
PAGE_SIZE = 100
MAX_TASKS = 10_000
_LIST_IN_LINK = re.compile(r"/lists/([^/]+)/tasks/")
_FIELDS = {
    "tasklist": "tasklist_id",
    "task": "task_id",
    "dueMin": "due_after",
    "dueMax": "due_before",
    "title": "title",
    "notes": "notes",
    "due": "due",
    "parent": "parent",
}


class GoogleTasks:
    """`TasksBackend` over Google Tasks v1."""

    def __init__(self, client: GoogleClient) -> None:
        self._client = client

    def list_tasklists(self) -> list[TaskList]:
        call = _call("your task lists")
        items = self._client.collect(
            "tasks", "tasklists.list", call, items="items", limit=MAX_TASKS, page_size=PAGE_SIZE
        )
        default = self._client.call("tasks", "tasklists.get", call, tasklist=DEFAULT_ALIAS).get("id")
        lists = [
            TaskList(
                id=item["id"],
                title=item.get("title", ""),
                updated=_moment(item["updated"]),
                default=item["id"] == default,
            )
            for item in items
        ]
        return sorted(lists, key=lambda tl: (not tl.default, tl.title.casefold(), tl.id))

    def create_tasklist(self, title: str) -> TaskList:
        if not title.strip():
            raise ToolInputError("a task list needs a title", field="title")
        item = self._client.call("tasks", "tasklists.insert", _call("the task list"), body={"title": title})
        return TaskList(id=item["id"], title=item.get("title", title), updated=_moment(item["updated"]))

    def list_tasks(
        self,
        tasklist_id: str,
        *,
        due_min: date | None = None,
        due_max: date | None = None,
        show_completed: bool = False,
        max_results: int = 100,
    ) -> list[Task]:
        params: dict[str, Any] = {
            "tasklist": tasklist_id,
            "showCompleted": show_completed,
            # Tasks completed in Google's own apps are hidden; showing completed ones means those too.
            "showHidden": show_completed,
        }
        if due_min is not None:
            params["dueMin"] = _due(due_min)
        if due_max is not None:
            # Whether Google's bound is inclusive or not, the next midnight covers the day; the filter
            # below is exact.
            params["dueMax"] = _due(due_max + timedelta(days=1))
        items = self._all(tasklist_id, **params)
        tasks = [
            _task(item, tasklist_id)
            for item in items
            if not item.get("deleted") and (show_completed or item.get("status") != "completed")
        ]
        tasks = [
            t
            for t in tasks
            if (due_min is None or (t.due is not None and t.due >= due_min))
            and (due_max is None or (t.due is not None and t.due <= due_max))
        ]
        positions = {item["id"]: item.get("position", "") for item in items}
        tasks.sort(key=lambda t: (t.status == "completed", t.due is None, t.due or date.min, positions[t.id]))
        return tasks[:max_results]

    def get_task(self, tasklist_id: str, task_id: str) -> Task:
        item = self._client.call(
            "tasks", "tasks.get", _call(_task_item(tasklist_id, task_id)), tasklist=tasklist_id, task=task_id
        )
        return _task(item, tasklist_id)

    def create_task(self, tasklist_id: str, task: NewTask) -> Task:
        if not task.title.strip():
            raise ToolInputError("a task needs a title", field="title")
        body: dict[str, Any] = {"title": task.title}
        if task.notes:
            body["notes"] = task.notes
        if task.due is not None:
            body["due"] = _due(task.due)
        params: dict[str, Any] = {"tasklist": tasklist_id, "body": body}
        if task.parent is not None:
            params["parent"] = task.parent
        item = self._client.call("tasks", "tasks.insert", _call(f"task list {tasklist_id!r}"), **params)
        return _task(item, tasklist_id)

    def update_task(self, tasklist_id: str, task_id: str, changes: TaskChanges) -> Task:
        fields = changes.model_fields_set
        body: dict[str, Any] = {}
        if changes.title is not None:
            if not changes.title.strip():
                raise ToolInputError("a task needs a title", field="title")
            body["title"] = changes.title
        if "notes" in fields:
            body["notes"] = changes.notes  # None (JSON null) clears
        if "due" in fields:
            body["due"] = None if changes.due is None else _due(changes.due)
        if changes.status == "completed":
            body["status"] = "completed"  # Google stamps `completed`
        elif changes.status == "needsAction":
            body.update(status="needsAction", completed=None)
        item = self._client.call(
            "tasks",
            "tasks.patch",
            _call(_task_item(tasklist_id, task_id)),
            tasklist=tasklist_id,
            task=task_id,
            body=body,
        )
        return _task(item, tasklist_id)

    def delete_task(self, tasklist_id: str, task_id: str) -> None:
        self._client.call(
            "tasks",
            "tasks.delete",
            _call(_task_item(tasklist_id, task_id)),
            tasklist=tasklist_id,
            task=task_id,
        )

    def clear_completed(self, tasklist_id: str) -> int:
        items = [
            i
            for i in self._all(tasklist_id, tasklist=tasklist_id, showCompleted=True, showHidden=True)
            if not i.get("deleted")
        ]
        done = {i["id"] for i in items if i.get("status") == "completed"}
        for item in items:
            if item["id"] not in done and item.get("parent") in done:
                self._client.call(
                    "tasks",
                    "tasks.move",
                    _call(_task_item(tasklist_id, item["id"])),
                    idempotent=True,  # moving to the top level twice leaves it there
                    tasklist=tasklist_id,
                    task=item["id"],
                )
        # Subtasks before their parents: deleting a parent takes its subtasks along.
        ordered = sorted((i for i in items if i["id"] in done), key=lambda i: i.get("parent") is None)
        for item in ordered:
            self.delete_task(tasklist_id, item["id"])
        return len(ordered)

    def _all(self, tasklist_id: str, **params: Any) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self._client.collect(
            "tasks",
            "tasks.list",
            _call(f"task list {tasklist_id!r}"),
            items="items",
            limit=MAX_TASKS,
            page_size=PAGE_SIZE,
            **params,
        )
        return found


def _call(item: str) -> Call:
    return Call(SERVICE, item, _FIELDS)


def _task_item(tasklist_id: str, task_id: str) -> str:
    return f"task {task_id!r} in task list {tasklist_id!r}"


def _due(day: date) -> str:
    return f"{day.isoformat()}T00:00:00.000Z"


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _task(item: dict[str, Any], tasklist_id: str) -> Task:
    link = _LIST_IN_LINK.search(item.get("selfLink", ""))
    return Task(
        id=item["id"],
        tasklist_id=link.group(1) if link else tasklist_id,
        title=item.get("title", ""),
        notes=item.get("notes") or None,
        due=None if not item.get("due") else date.fromisoformat(item["due"][:10]),
        parent=item.get("parent"),
        status="completed" if item.get("status") == "completed" else "needsAction",
        completed_at=_moment(item["completed"]) if item.get("completed") else None,
        updated=_moment(item["updated"]),
    )
