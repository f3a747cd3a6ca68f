"""Tasks tools: list task lists and tasks, create, change, complete, delete and clear tasks."""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import BaseModel, Field

from gateway.context import ToolContext
from gateway.definition import PARAMS_CONFIG, NoParams, tool
from gateway.errors import ToolInputError

from ..backends import DEFAULT_TASKLIST, NewTask, TaskChanges, WorkspaceSettings
from ..dates import parse_date
from ._common import MAX_ID_LENGTH, out, settings_of, tasks_of
from ._describe import describe_completed, describe_task
from ._requests import REQUESTS

_DAY_HINT = "a day in ISO 8601 or natural language: '2025-03-14', 'tomorrow', 'next friday', 'in 3 days'"
_TASKLIST = Field(
    default=DEFAULT_TASKLIST,
    max_length=MAX_ID_LENGTH,
    description='Task list id from tasks_list_tasklists; "@default" is your main list.',
)
_TASK_ID = Field(min_length=1, max_length=MAX_ID_LENGTH, description="Task id, from tasks_list_tasks.")


@tool(
    category="tasks",
    action="list",
    read_only=True,
    concurrency_safe=True,
    examples=[*REQUESTS["tasks_list_tasklists"], {}],
)
def tasks_list_tasklists(params: NoParams, ctx: ToolContext) -> dict[str, Any]:
    """List your task lists themselves, not the tasks on them; the default one is marked default: true."""
    return {"tasklists": out(tasks_of(ctx).list_tasklists(), settings_of(ctx).zone)}


class ListTasksParams(BaseModel):
    model_config = PARAMS_CONFIG
    tasklist_id: str = _TASKLIST
    due_before: str | None = Field(
        default=None, max_length=200, description=f"Only tasks due on or before this day: {_DAY_HINT}."
    )
    due_after: str | None = Field(
        default=None, max_length=200, description="Only tasks due on or after this day (same formats)."
    )
    show_completed: bool = Field(
        default=False, description="Include completed tasks. Default: open tasks only."
    )
    max_results: int = Field(default=50, ge=1, le=100, description="Most tasks to return.")


@tool(
    category="tasks",
    action="list",
    read_only=True,
    concurrency_safe=True,
    examples=[*REQUESTS["tasks_list_tasks"], {"due_before": "friday", "show_completed": False}],
)
def tasks_list_tasks(params: ListTasksParams, ctx: ToolContext) -> dict[str, Any]:
    """List the tasks (to-dos) in a list, open ones first, soonest due first.

    With due_before or due_after, tasks without a due date are left out.
    """
    settings = settings_of(ctx)
    due_max = None if params.due_before is None else _day(params.due_before, settings, field="due_before")
    due_min = None if params.due_after is None else _day(params.due_after, settings, field="due_after")
    if due_min is not None and due_max is not None and due_max < due_min:
        raise ToolInputError("due_before is earlier than due_after, so nothing can match", field="due_before")
    tasks = tasks_of(ctx).list_tasks(
        params.tasklist_id,
        due_min=due_min,
        due_max=due_max,
        show_completed=params.show_completed,
        max_results=params.max_results + 1,
    )
    return {"tasks": out(tasks[: params.max_results], settings.zone), "more": len(tasks) > params.max_results}


class CreateTaskParams(BaseModel):
    model_config = PARAMS_CONFIG
    title: str = Field(min_length=1, max_length=1024, description="What needs doing.")
    notes: str | None = Field(default=None, max_length=8192, description="Details. Default: none.")
    due: str | None = Field(
        default=None, max_length=200, description=f"Due date, {_DAY_HINT}. Default: none."
    )
    parent: str | None = Field(
        default=None,
        max_length=MAX_ID_LENGTH,
        description="Id of a task in the same list to nest this under.",
    )
    tasklist_id: str = _TASKLIST


@tool(
    category="tasks",
    action="create",
    destructive=False,
    examples=[
        *REQUESTS["tasks_create_task"],
        {"title": "Send the Q3 report", "due": "friday", "notes": "Attach the charts."},
    ],
)
def tasks_create_task(params: CreateTaskParams, ctx: ToolContext) -> dict[str, Any]:
    """Create a task (a to-do item); returns it with its id."""
    settings = settings_of(ctx)
    due = None if params.due is None else _day(params.due, settings, field="due")
    task = NewTask(title=params.title, notes=params.notes or None, due=due, parent=params.parent)
    return dict(out(tasks_of(ctx).create_task(params.tasklist_id, task), settings.zone))


class UpdateTaskParams(BaseModel):
    model_config = PARAMS_CONFIG
    task_id: str = _TASK_ID
    tasklist_id: str = _TASKLIST
    title: str | None = Field(default=None, min_length=1, max_length=1024, description="New title.")
    notes: str | None = Field(default=None, max_length=8192, description="New notes; '' clears them.")
    due: str | None = Field(
        default=None, max_length=200, description=f"New due date ({_DAY_HINT}); '' clears it."
    )
    completed: bool | None = Field(default=None, description="true completes the task, false reopens it.")


@tool(
    category="tasks",
    action="update",
    destructive=False,
    examples=[*REQUESTS["tasks_update_task"], {"task_id": "t1u2v3", "due": "next monday"}],
)
def tasks_update_task(params: UpdateTaskParams, ctx: ToolContext) -> dict[str, Any]:
    """Change a task; only the fields you give change.

    Returns the updated task.
    """
    settings = settings_of(ctx)
    changes: dict[str, Any] = {}
    if params.title is not None:
        changes["title"] = params.title
    if params.notes is not None:
        changes["notes"] = params.notes or None
    if params.due is not None:
        changes["due"] = _day(params.due, settings, field="due") if params.due.strip() else None
    if params.completed is not None:
        changes["status"] = "completed" if params.completed else "needsAction"
    if not changes:
        raise ToolInputError("nothing to change; give at least one field besides task_id", field="task_id")
    updated = tasks_of(ctx).update_task(
        params.tasklist_id, params.task_id, TaskChanges.model_validate(changes)
    )
    return dict(out(updated, settings.zone))


class TaskParams(BaseModel):
    model_config = PARAMS_CONFIG
    task_id: str = _TASK_ID
    tasklist_id: str = _TASKLIST


@tool(
    category="tasks",
    action="update",
    destructive=False,
    examples=[*REQUESTS["tasks_complete_task"], {"task_id": "t1u2v3"}],
)
def tasks_complete_task(params: TaskParams, ctx: ToolContext) -> dict[str, Any]:
    """Mark a task completed.

    To reopen it, call tasks_update_task with completed=false.
    """
    done = tasks_of(ctx).update_task(params.tasklist_id, params.task_id, TaskChanges(status="completed"))
    return dict(out(done, settings_of(ctx).zone))


@tool(
    category="tasks",
    action="delete",
    examples=[*REQUESTS["tasks_delete_task"], {"task_id": "t1u2v3"}],
    describe=describe_task,
)
def tasks_delete_task(params: TaskParams, ctx: ToolContext) -> dict[str, Any]:
    """Delete a task and its subtasks for good."""
    tasks_of(ctx).delete_task(params.tasklist_id, params.task_id)
    return {"deleted": True, "task_id": params.task_id}


class ClearCompletedParams(BaseModel):
    model_config = PARAMS_CONFIG
    tasklist_id: str = _TASKLIST


@tool(
    category="tasks",
    action="delete",
    examples=[*REQUESTS["tasks_clear_completed"], {"tasklist_id": "@default"}],
    describe=describe_completed,
)
def tasks_clear_completed(params: ClearCompletedParams, ctx: ToolContext) -> dict[str, Any]:
    """Delete every completed task in a list for good.

    Open subtasks of a completed task stay, moved to the top of the list.
    """
    return {"cleared": tasks_of(ctx).clear_completed(params.tasklist_id)}


def _day(text: str, settings: WorkspaceSettings, *, field: str) -> date:
    return parse_date(text, tz=settings.zone, now=settings.now(), field=field)
