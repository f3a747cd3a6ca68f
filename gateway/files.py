"""Files the gateway keeps for itself (caches, pins): written whole or not at all, old ones pruned."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_json_atomic(path: Path, data: Any, *, compact: bool = False) -> None:
    """Write `data` as JSON so a reader never sees half a file (a temporary file, then a rename).

    Args:
        path: the file; its directory is made when missing.
        data: anything `json.dump` takes.
        compact: no indentation or spaces (caches); otherwise one level of indentation, keys sorted.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            if compact:
                json.dump(data, handle, ensure_ascii=False, separators=(",", ":"))
            else:
                json.dump(data, handle, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def keep_newest(directory: Path, pattern: str, keep: int) -> None:
    """Delete all but the `keep` most recently written files of `directory` matching `pattern`."""
    files = sorted(directory.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in files[keep:]:
        with contextlib.suppress(FileNotFoundError):
            old.unlink()
