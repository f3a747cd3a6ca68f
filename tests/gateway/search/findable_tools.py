"""A catalog of known findability: tools their requests find first, one none finds, seven and a
pair no summary word tells apart.

`provide` serves it to the `gateway` program (`catalogs = ["tests.gateway.search.findable_tools:provide"]`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from gateway import PARAMS_CONFIG, Catalog, Toolset
from gateway.definition import ToolDefinition


class NoParams(BaseModel):
    model_config = PARAMS_CONFIG


def _tool(name: str, category: str, action: str, summary: str, *examples: str) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        category=category,
        action=action,
        verb=action,
        summary=summary,
        description=summary,
        params=NoParams,
        handler=lambda p: None,
        examples=examples,
    )


TOOLS = [
    _tool("notes_create", "notes", "create", "Create a note with a title.", "jot down an idea"),
    _tool("notes_search", "notes", "search", "Search notes by their words."),
    _tool("calendar_create_event", "calendar", "create", "Create a calendar event.", "book a meeting"),
    _tool("mail_send", "mail", "send", "Send an email message to someone."),
    # Six more that say what notes_search says, their names only adding stop words: seven tools
    # a search cannot tell apart, so two of them are never in the first five.
    *(
        _tool(f"notes_search_{extra}", "notes", "search", "Search notes by their words.")
        for extra in ("the", "them", "their", "these", "those", "this")
    ),
    # Nothing but stop words beside its category: no request of its own finds it.
    _tool("notes_the", "notes", "read", "Does it."),
    # Both say the same in their summaries: only their names tell them apart.
    _tool("files_folder_copy", "files", "create", "Copy a file."),
    _tool("files_drive_copy", "files", "create", "Copy a file."),
]


def provide(options: Any) -> Toolset:
    return Toolset(catalog=Catalog(TOOLS))
