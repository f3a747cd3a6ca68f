"""A small catalog whose handlers record every call, so tests can prove a handler never ran."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from gateway import PARAMS_CONFIG, ToolContext, tool


class Calls(list[tuple[str, dict[str, Any]]]):
    def names(self) -> list[str]:
        return [name for name, _ in self]


CALLS = Calls()


class NoteParams(BaseModel):
    model_config = PARAMS_CONFIG
    title: str = Field(max_length=200, description="Title of the note.")
    priority: int = Field(1, ge=1, le=5, description="1 (low) to 5 (high).")
    color: Literal["red", "green"] | None = Field(None, description="Optional color.")


class NoteId(BaseModel):
    model_config = PARAMS_CONFIG
    note_id: str = Field(description="Id of the note.")


class PathParams(BaseModel):
    model_config = PARAMS_CONFIG
    path: str = Field(description="A path under /srv/files.")


@tool(
    category="notes",
    action="create",
    destructive=False,
    examples=["jot down: buy milk", {"title": "Buy milk"}],
)
def notes_create(params: NoteParams) -> dict[str, Any]:
    """Create a note.

    Creates a note with a title and a priority.
    """
    CALLS.append(("notes_create", params.model_dump()))
    return {"id": "n1", "title": params.title}


@tool(category="notes", action="search", read_only=True, concurrency_safe=True)
def notes_search(params: NoteParams) -> list[str]:
    """Search notes by title."""
    CALLS.append(("notes_search", params.model_dump()))
    return [params.title]


@tool(category="notes", action="delete", examples=[{"note_id": "n1"}])
def notes_delete(params: NoteId, ctx: ToolContext) -> dict[str, Any]:
    """Delete a note for good."""
    CALLS.append(("notes_delete", params.model_dump()))
    return {"deleted": params.note_id, "by": ctx.principal.id}


@tool(category="notes", action="update")
def notes_archive(params: NoteId) -> dict[str, Any]:
    """Archive a note (says nothing about its flags: treated as destructive)."""
    CALLS.append(("notes_archive", params.model_dump()))
    return {"archived": params.note_id}


def _inside_root(params: Any, ctx: ToolContext) -> str | None:
    if not str(params.path).startswith("/srv/files/") or ".." in params.path:
        return "Paths must stay under /srv/files/."
    return None


@tool(category="files", action="read", read_only=True, permission=_inside_root)
def files_read(params: PathParams) -> str:
    """Read a file under the root."""
    CALLS.append(("files_read", params.model_dump()))
    return f"contents of {params.path}"


@tool(category="files", action="read", read_only=True)
def files_boom(params: PathParams) -> str:
    """Always raises, to test failure handling."""
    CALLS.append(("files_boom", params.model_dump()))
    raise RuntimeError("secret internal detail /etc/shadow")


ALL_TOOLS = [notes_create, notes_search, notes_delete, notes_archive, files_read, files_boom]


def provide(options: Any) -> Any:
    """A toolset provider, for configuration and CLI tests."""
    from gateway import Catalog, Toolset

    return Toolset(catalog=Catalog(ALL_TOOLS))
