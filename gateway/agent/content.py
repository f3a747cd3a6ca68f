"""Tool results made of content blocks (text and images), not only JSON data.

A handler that wants the model to *see* something returns `content(...)`. The value is
plain JSON in the MCP `CallToolResult` shape, so it survives the gateway unchanged and an
MCP host can pass it on as it is; each SDK adapter maps the blocks to its own shape.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

__all__ = ["Image", "ImageBlock", "TextBlock", "blocks_of", "content"]


@dataclass(frozen=True, slots=True)
class Image:
    """An image for `content`: raw bytes (or base64 text) and its media type, e.g. `image/png`."""

    data: bytes | str
    media_type: str

    def base64(self) -> str:
        return self.data if isinstance(self.data, str) else base64.b64encode(self.data).decode()


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str


@dataclass(frozen=True, slots=True)
class ImageBlock:
    data: str
    """Base64 without a data: prefix."""
    media_type: str

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.data}"


Block = TextBlock | ImageBlock


def content(*parts: str | Image) -> dict[str, Any]:
    """A handler's return value that the model receives as content blocks.

    Example:
        `return content("The chart:", Image(png_bytes, "image/png"))`
    """
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Image):
            blocks.append({"type": "image", "data": part.base64(), "mimeType": part.media_type})
        else:
            blocks.append({"type": "text", "text": str(part)})
    return {"content": blocks}


def blocks_of(output: Any) -> tuple[Block, ...]:
    """The content blocks of a result's output, or () when it is ordinary JSON data."""
    if not isinstance(output, dict) or set(output) != {"content"}:
        return ()
    raw = output["content"]
    if not isinstance(raw, list) or not raw:
        return ()
    blocks: list[Block] = []
    for item in raw:
        if not isinstance(item, dict):
            return ()
        kind = item.get("type")
        if kind == "text" and isinstance(item.get("text"), str):
            blocks.append(TextBlock(item["text"]))
        elif kind == "image" and isinstance(item.get("data"), str) and isinstance(item.get("mimeType"), str):
            blocks.append(ImageBlock(item["data"], item["mimeType"]))
        else:
            return ()
    return tuple(blocks)
