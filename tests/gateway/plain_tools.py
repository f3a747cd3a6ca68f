"""Plain typed functions as tools (no params model), recording their calls; a provider for the CLI."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from gateway import Catalog, ToolContext, Toolset, tool

CALLS: list[tuple[str, dict[str, Any]]] = []


@tool(category="demo", action="read", read_only=True)
def greet(name: str, excited: bool = False) -> str:
    """Say hello to someone.

    Args:
        name: Who to greet.
        excited: End with an exclamation mark.
    """
    CALLS.append(("greet", {"name": name, "excited": excited}))
    return f"Hello, {name}{'!' if excited else '.'}"


@tool(category="demo", action="create", destructive=False, examples=[{"title": "Plan", "minutes": 30}])
async def demo_schedule(
    title: str,
    ctx: ToolContext,
    minutes: Annotated[int, Field(ge=5, le=480)] = 30,
    room: Literal["blue", "green"] | None = None,
) -> dict[str, Any]:
    """Book a room.

    Books a room for a meeting of the given length.

    Args:
        title: What the meeting is about.
        minutes: How long it lasts, in minutes.
        room: Which room; any free one when omitted.
        ctx: The call's context (not a parameter the model sees).

    Returns:
        The booking, with the principal who made it.
    """
    CALLS.append(("demo_schedule", {"title": title, "minutes": minutes, "room": room}))
    return {"title": title, "minutes": minutes, "room": room, "by": ctx.principal.id}


PLAIN_TOOLS = [greet, demo_schedule]


def provide(options: Any) -> Toolset:
    """A toolset provider, for the command-line tests."""
    return Toolset(catalog=Catalog(PLAIN_TOOLS))
