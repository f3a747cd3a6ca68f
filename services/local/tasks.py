"""Task lists and tasks in the local workspace (implements `TasksBackend`)."""

from __future__ import annotations

import sqlite3
from datetime import date, datetime

from gateway.errors import NotFound, ToolInputError

from ..backends import NewTask, Task, TaskChanges, TaskList, TaskStatus
from .store import LocalStore, from_db, new_id, resolve_tasklist, to_db

_CLEARABLE = frozenset(("notes", "due"))
"""Fields an update may set to None; for the others None means "leave as it is"."""


class LocalTasks:
    """`TasksBackend` over a `LocalStore`; "@default" is the list created with the workspace."""

    def __init__(self, store: LocalStore) -> None:
        self._store = store

    def list_tasklists(self) -> list[TaskList]:
        with self._store.read() as conn:
            rows = conn.execute("SELECT * FROM tasklists ORDER BY is_default DESC, title, id").fetchall()
        return [_tasklist(row) for row in rows]

    def create_tasklist(self, title: str) -> TaskList:
        with self._store.write() as conn:
            list_id = insert_tasklist(conn, title, now=self._store.now())
            return _tasklist(conn.execute("SELECT * FROM tasklists WHERE id = ?", (list_id,)).fetchone())

    def list_tasks(
        self,
        tasklist_id: str,
        *,
        due_min: date | None = None,
        due_max: date | None = None,
        show_completed: bool = False,
        max_results: int = 100,
    ) -> list[Task]:
        sql = "SELECT * FROM tasks WHERE tasklist_id = ?"
        args: list[object] = []
        if not show_completed:
            sql += " AND status = 'needsAction'"
        if due_min is not None:
            sql += " AND due >= ?"
            args.append(due_min.isoformat())
        if due_max is not None:
            sql += " AND due <= ?"
            args.append(due_max.isoformat())
        sql += " ORDER BY status = 'completed', due IS NULL, due, position LIMIT ?"
        with self._store.read() as conn:
            real_id = _tasklist_id(conn, tasklist_id)
            rows = conn.execute(sql, [real_id, *args, max_results]).fetchall()
        return [_task(row) for row in rows]

    def get_task(self, tasklist_id: str, task_id: str) -> Task:
        with self._store.read() as conn:
            return _task(_task_row(conn, _tasklist_id(conn, tasklist_id), task_id))

    def create_task(self, tasklist_id: str, task: NewTask) -> Task:
        with self._store.write() as conn:
            real_id = _tasklist_id(conn, tasklist_id)
            if task.parent is not None:
                _task_row(conn, real_id, task.parent)
            task_id = insert_task(conn, real_id, task, now=self._store.now())
            return _task(_task_row(conn, real_id, task_id))

    def update_task(self, tasklist_id: str, task_id: str, changes: TaskChanges) -> Task:
        now = self._store.now()
        with self._store.write() as conn:
            real_id = _tasklist_id(conn, tasklist_id)
            current = _task(_task_row(conn, real_id, task_id))
            fields = current.model_dump()
            for name in changes.model_fields_set:
                value = getattr(changes, name)
                if value is not None or name in _CLEARABLE:
                    fields[name] = value
            if not (fields["title"] or "").strip():
                raise ToolInputError("a task needs a title", field="title")
            if fields["status"] != current.status:
                fields["completed_at"] = now if fields["status"] == "completed" else None
            conn.execute(
                "UPDATE tasks SET title = ?, notes = ?, due = ?, status = ?, completed_at = ?, updated = ?"
                " WHERE id = ?",
                (
                    fields["title"],
                    fields["notes"],
                    _due_text(fields["due"]),
                    fields["status"],
                    None if fields["completed_at"] is None else to_db(fields["completed_at"]),
                    to_db(now),
                    task_id,
                ),
            )
            return _task(_task_row(conn, real_id, task_id))

    def delete_task(self, tasklist_id: str, task_id: str) -> None:
        with self._store.write() as conn:
            real_id = _tasklist_id(conn, tasklist_id)
            _task_row(conn, real_id, task_id)
            # Subtasks go with their parent (ON DELETE CASCADE), as in Google Tasks.
            conn.execute("DELETE FROM tasks WHERE id = ?", (task_id,))

    def clear_completed(self, tasklist_id: str) -> int:
        with self._store.write() as conn:
            real_id = _tasklist_id(conn, tasklist_id)
            # Open subtasks of a completed parent stay, moved to the top level, instead of cascading away.
            conn.execute(
                "UPDATE tasks SET parent = NULL WHERE tasklist_id = ? AND status = 'needsAction'"
                " AND parent IN (SELECT id FROM tasks WHERE tasklist_id = ? AND status = 'completed')",
                (real_id, real_id),
            )
            cursor = conn.execute(
                "DELETE FROM tasks WHERE tasklist_id = ? AND status = 'completed'", (real_id,)
            )
            return cursor.rowcount


def insert_tasklist(conn: sqlite3.Connection, title: str, *, now: datetime) -> str:
    """Create a task list inside the caller's transaction; returns its id."""
    if not title.strip():
        raise ToolInputError("a task list needs a title", field="title")
    list_id = new_id()
    conn.execute("INSERT INTO tasklists (id, title, updated) VALUES (?, ?, ?)", (list_id, title, to_db(now)))
    return list_id


def insert_task(
    conn: sqlite3.Connection,
    tasklist_id: str,
    task: NewTask,
    *,
    now: datetime,
    status: TaskStatus = "needsAction",
    completed_at: datetime | None = None,
) -> str:
    """Add a task at the end of a list (a real list id) inside the caller's transaction; returns its id."""
    if not task.title.strip():
        raise ToolInputError("a task needs a title", field="title")
    task_id = new_id()
    row = conn.execute("SELECT COALESCE(MAX(position), 0) FROM tasks WHERE tasklist_id = ?", (tasklist_id,))
    position = int(row.fetchone()[0]) + 1
    conn.execute(
        "INSERT INTO tasks (id, tasklist_id, parent, title, notes, due, status, completed_at, updated, position)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            task_id,
            tasklist_id,
            task.parent,
            task.title,
            task.notes,
            _due_text(task.due),
            status,
            None if completed_at is None else to_db(completed_at),
            to_db(now),
            position,
        ),
    )
    return task_id


def _due_text(due: date | None) -> str | None:
    return None if due is None else due.isoformat()


def _tasklist_id(conn: sqlite3.Connection, tasklist_id: str) -> str:
    real_id = resolve_tasklist(conn, tasklist_id)
    if real_id is None:
        raise NotFound(f"no task list with id {tasklist_id!r}")
    return real_id


def _task_row(conn: sqlite3.Connection, tasklist_id: str, task_id: str) -> sqlite3.Row:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM tasks WHERE id = ? AND tasklist_id = ?", (task_id, tasklist_id)
    ).fetchone()
    if row is None:
        raise NotFound(f"no task with id {task_id!r} in that task list")
    return row


def _tasklist(row: sqlite3.Row) -> TaskList:
    return TaskList(
        id=row["id"], title=row["title"], updated=from_db(row["updated"]), default=bool(row["is_default"])
    )


def _task(row: sqlite3.Row) -> Task:
    return Task(
        id=row["id"],
        tasklist_id=row["tasklist_id"],
        parent=row["parent"],
        title=row["title"],
        notes=row["notes"],
        due=None if row["due"] is None else date.fromisoformat(row["due"]),
        status=row["status"],
        completed_at=None if row["completed_at"] is None else from_db(row["completed_at"]),
        updated=from_db(row["updated"]),
    )
