"""Writing tools directories in tmp_path, and calling their tools through the meta-tools."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import yaml

from gateway import Catalog, Gateway, MemoryAuditLog, Principal, ToolContext, run_sync
from gateway.filetools.directories import FileTools
from gateway.rendering import result_payload

PYTHON = f"#!{sys.executable}\n"
LOCAL = Principal()

ECHO = PYTHON + textwrap.dedent(
    """\
    import json, os, sys
    json.dump({"stdin": json.load(sys.stdin), "env": dict(os.environ), "cwd": os.getcwd()}, sys.stdout)
    """
)

TEXT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "Any text."}},
    "required": ["text"],
}


def definition(*, schema: dict[str, Any] | None = None, body: str = "A tool for tests.", **front: Any) -> str:
    """A definition file: front matter (defaults filled in), the body, and the schema block if given."""
    meta = {"category": "test", "action": "read", "summary": "A tool for tests.", "read_only": True, **front}
    text = f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n{body}\n"
    if schema is not None:
        text += f"\n```json schema\n{json.dumps(schema, indent=2)}\n```\n"
    return text


def write_tool(folder: Path, name: str, script: str = ECHO, *, suffix: str = ".py", **front: Any) -> Path:
    """A definition `name.md` and its executable script `name<suffix>`; returns the script."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(definition(**front), encoding="utf-8")
    path = folder / f"{name}{suffix}"
    path.write_text(script, encoding="utf-8")
    path.chmod(0o755)
    return path


def gateway_over(*dirs: Path, audit: MemoryAuditLog | None = None) -> tuple[Gateway, FileTools]:
    catalog = Catalog()
    tools = FileTools(dirs, catalog=catalog)
    tools.refresh()
    return Gateway(catalog, audit=audit), tools


def call(gw: Gateway, meta_tool: str, arguments: dict[str, Any], principal: Principal = LOCAL) -> Any:
    """What the model receives for one meta-tool call."""
    return result_payload(run_sync(gw.call(meta_tool, arguments, ToolContext(principal=principal))))


def invoke(gw: Gateway, name: str, parameters: dict[str, Any], principal: Principal = LOCAL) -> Any:
    return call(gw, "invoke_tool", {"tool_name": name, "parameters": parameters}, principal)


def dead(pid: int) -> bool:
    """Whether process `pid` has ended (gone, or a zombie nobody reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] == "Z"


def wait_until_dead(pid: int, timeout: float = 10.0) -> bool:
    """Bounded polling: a killed process needs a moment to be gone."""
    deadline = time.monotonic() + timeout
    while not dead(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
