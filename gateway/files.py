"""Files the gateway keeps for itself (caches, pins): written whole or not at all, old ones pruned."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from .errors import UserError


def write_atomic(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a file so a reader never sees half of it: `write` fills a temporary file, then a rename.

    Args:
        path: the file; its directory is made when missing.
        write: writes the whole content to the binary file handle it is given.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, data: Any, *, compact: bool = False) -> None:
    """Write `data` as JSON so a reader never sees half a file (`write_atomic`).

    Args:
        path: the file; its directory is made when missing.
        data: anything `json.dump` takes.
        compact: no indentation or spaces (caches); otherwise one level of indentation, keys sorted.
    """
    if compact:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    else:
        text = json.dumps(data, indent=1, sort_keys=True)
    write_atomic(path, lambda handle: handle.write(text.encode("utf-8")))


def keep_newest(directory: Path, pattern: str, keep: int) -> None:
    """Delete all but the `keep` most recently written files of `directory` matching `pattern`."""
    files = sorted(directory.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in files[keep:]:
        with contextlib.suppress(FileNotFoundError):
            old.unlink()


def private_secret(path: Path, *, what: str) -> str:
    """The secret in `path`, made (64 hex characters, mode 0600) when there is none yet.

    Raises:
        UserError: the file is readable by others, too short, or cannot be read or made.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32) + "\n")
        if path.stat().st_mode & 0o077:
            raise UserError(f"{path} is readable by other users: run chmod 600 {path}")
        secret = path.read_text().strip()
    except OSError as exc:
        raise UserError(f"cannot keep {what} in {path}: {exc.strerror or exc}") from None
    if len(secret) < 32:
        raise UserError(f"{path} holds a secret shorter than 32 characters: delete it to make a new one")
    return secret
