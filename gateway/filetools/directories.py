"""Tools directories: load every definition file of some directories into a live catalog, and keep it current.

A broken definition is reported (file and line) and skipped; the rest load. The directories
are re-read on demand (`FileTools.refresh`) and, in a gateway built from settings, by a
watcher thread that polls them, so a new tool appears without a restart.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from ..catalog import Catalog
from ..errors import RegistrationError, UserError
from ..names import name_problem
from ..toolset import ProviderOptions, Toolset

try:
    from .definition import DefinitionProblem, FileToolDefinition, load_definition
except ImportError as exc:  # PyYAML or jsonschema missing
    raise UserError(
        f"tools directories need the 'files' extra ({exc.name} is missing): "
        "pip install 'metatool-gateway[files]'"
    ) from exc

log = logging.getLogger("gateway.filetools")

POLL_SECONDS = 2.0
_SKIPPED = {"readme.md"}


class FileTools:
    """The tools defined in `dirs`, kept in `catalog`.

    Args:
        dirs: the tools directories, in order: a name defined in an earlier one wins.
        catalog: the catalog to add the tools to and swap them in; tools of other
            origins keep their names (a clashing definition is skipped and reported).
    """

    def __init__(self, dirs: Sequence[Path | str], *, catalog: Catalog) -> None:
        self.dirs = tuple(Path(d).expanduser().absolute() for d in dirs)
        self.catalog = catalog
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._names: set[str] = set()
        self._problems: tuple[DefinitionProblem, ...] = ()
        self._logged: set[DefinitionProblem] = set()
        self._fingerprint: object = None
        self._generation = 0
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    # -- loading ------------------------------------------------------------------------

    def refresh(self) -> bool:
        """Re-read the directories if any file in them changed; True when they were re-read."""
        with self._lock:
            fingerprint = self._scan()
            if fingerprint == self._fingerprint:
                return False
            self._fingerprint = fingerprint
            self._load()
            return True

    def reload(self) -> None:
        """Re-read the directories unconditionally."""
        with self._lock:
            self._fingerprint = self._scan()
            self._load()

    def _scan(self) -> object:
        """What the directories hold now: names, sizes, times and modes of their entries."""
        seen: list[object] = []
        for folder in self.dirs:
            try:
                with os.scandir(folder) as entries:
                    stats = []
                    for entry in entries:
                        try:
                            st = entry.stat()
                        except OSError:
                            continue
                        stats.append((entry.name, st.st_mtime_ns, st.st_size, st.st_mode, st.st_ino))
                seen.append(sorted(stats))
            except OSError as exc:
                seen.append(exc.errno)
        return tuple(map(repr, seen))

    def _load(self) -> None:
        problems: list[DefinitionProblem] = []
        built: dict[str, FileToolDefinition] = {}
        taken = {name for name in self.catalog.by_name if name not in self._names}
        for folder in self.dirs:
            if not folder.is_dir():
                problems.append(DefinitionProblem(folder, None, "tools directory does not exist"))
                continue
            for path in sorted(p for p in folder.glob("*.md") if p.is_file()):
                if path.name.startswith((".", "_")) or path.name.lower() in _SKIPPED:
                    continue
                definition, found = load_definition(path)
                problems.extend(found)
                if definition is None:
                    continue
                name = definition.name
                if name in built:
                    clash = f"{name} is defined in {built[name].source} too; that one is kept"
                elif name in taken:
                    clash = f"another catalog has a tool named {name}; this one is skipped"
                else:
                    built[name] = definition
                    continue
                problems.append(DefinitionProblem(path, None, clash))
        try:
            self.catalog.replace(self._names, built.values())
        except RegistrationError as exc:  # a clash that appeared meanwhile; keep what was there
            problems.extend(DefinitionProblem(self.dirs[0], None, p) for p in exc.problems)
        else:
            self._names = set(built)
        self._problems = tuple(problems)
        for problem in problems:
            if problem not in self._logged:
                self._logged.add(problem)
                log.warning("skipped tool definition: %s", problem)
        self._generation += 1
        self._changed.notify_all()

    # -- for operators and tests ------------------------------------------------------

    @property
    def problems(self) -> tuple[DefinitionProblem, ...]:
        """Why definitions were skipped in the last reading, each with its file and line."""
        with self._lock:
            return self._problems

    @property
    def names(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(sorted(self._names))

    @property
    def generation(self) -> int:
        """How many times the directories were read."""
        with self._lock:
            return self._generation

    def wait_for_generation(self, generation: int, timeout: float) -> bool:
        """Block until the directories were read `generation` times; False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: self._generation >= generation, timeout)

    # -- watching ------------------------------------------------------------------------

    def watch(self, interval: float = POLL_SECONDS) -> None:
        """Poll the directories every `interval` seconds in a daemon thread until `close`."""
        if self._watcher is not None:
            return

        def poll() -> None:
            while not self._stop.wait(interval):
                try:
                    self.refresh()
                except Exception:  # a bad moment on disk must not end the watching
                    log.exception("re-reading the tools directories failed")

        self._watcher = threading.Thread(target=poll, name="gateway-tools-watch", daemon=True)
        self._watcher.start()

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=10)


def provide(options: ProviderOptions) -> Toolset:
    """The `files` catalog: the tools of `options.extra["tools_dirs"]`.

    With `extra["catalog"]` (the live catalog a gateway serves) the tools go straight into
    it and the directories are watched (`extra["tools_poll_seconds"]`, default 2).
    """
    dirs = options.extra.get("tools_dirs") or ()
    if not dirs:
        raise UserError("the 'files' catalog needs a tools directory: --tools-dir DIR or GATEWAY_TOOLS_DIR")
    live = options.extra.get("catalog")
    tools = FileTools([Path(d) for d in dirs], catalog=live if isinstance(live, Catalog) else Catalog())
    tools.refresh()
    if isinstance(live, Catalog):
        tools.watch(float(options.extra.get("tools_poll_seconds") or POLL_SECONDS))
        return Toolset(catalog=Catalog(), resources={FileTools: tools}, close=tools.close)
    return Toolset(catalog=tools.catalog, resources={FileTools: tools}, close=tools.close)


_DEFINITION = """\
---
category: {category}
action: read
summary: Echo a text back (replace with one line saying what {name} does).
read_only: true
timeout: 10
examples:              # what a user might say (a string), or a call (its parameters)
  - say hello back to me
  - text: hello
# roles: [staff]       # only users holding one of these roles (default: every user)
# agents: [planner]    # only these agents (default: every agent)
# env: [HOME]          # variables passed through from the gateway's environment
---
Say what the tool does, when to use it and what it returns: the model reads this text.

```json schema
{{
  "type": "object",
  "properties": {{
    "text": {{"type": "string", "description": "The text to echo back."}}
  }},
  "required": ["text"]
}}
```
"""

_SCRIPT = """\
#!/bin/sh
# {name}: the parameters arrive as JSON on standard input, and each flat one as a PARAM_<NAME>
# variable (always quote it: "$PARAM_TEXT"). Print JSON or text; exit non-zero to fail.
set -eu
printf 'You said: %s\\n' "$PARAM_TEXT"
"""


def scaffold(folder: Path, name: str, category: str | None = None) -> tuple[Path, Path]:
    """Write a working definition and script for a new tool `name` in `folder`.

    Raises:
        UserError: the name is invalid or one of the files exists already.
    """
    if (problem := name_problem(name)) is not None:
        raise UserError(problem)
    category = category or name.split("_", maxsplit=1)[0] or "tools"
    definition, script = folder / f"{name}.md", folder / f"{name}.sh"
    for path in (definition, script):
        if path.exists():
            raise UserError(f"{path} exists already")
    folder.mkdir(parents=True, exist_ok=True)
    definition.write_text(_DEFINITION.format(name=name, category=category), encoding="utf-8")
    script.write_text(_SCRIPT.format(name=name), encoding="utf-8")
    script.chmod(0o755)
    return definition, script
