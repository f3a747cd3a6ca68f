"""`--openapi NAME=SPEC` and `gateway openapi check SPEC`: REST APIs from their OpenAPI descriptions."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ..errors import UserError
from ..rendering import shown
from ..settings.loading import OpenApiSettings, Settings
from .output import dump


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "verb", choices=["check"], help="check: list the description's problems and operations"
    )
    parser.add_argument("spec", help="the OpenAPI description (JSON or YAML), or a configured entry's name")
    parser.add_argument(
        "--safe",
        action="append",
        default=[],
        metavar="MARK",
        help="count these writes as not destructive (operation id, tag:NAME or path glob; repeatable)",
    )


def with_entries(settings: Settings, specs: Sequence[str] | None) -> Settings:
    """Settings with `--openapi NAME=SPEC` entries: a configured entry of that name gets this spec (and
    keeps its other settings), any other name is a new entry.

    Raises:
        UserError: a value is not NAME=SPEC, or the name is not a valid catalog name.
    """
    if not specs:
        return settings
    entries = list(settings.openapi)
    for raw in specs:
        name, sep, spec = raw.partition("=")
        if not sep or not name or not spec:
            raise UserError(
                f"--openapi {raw!r}: expected NAME=SPEC, e.g. --openapi github=api.github.com.json"
            )
        known = next((i for i, e in enumerate(entries) if e.name == name), None)
        data = entries[known].model_dump() if known is not None else {}
        try:
            entry = OpenApiSettings.model_validate({**data, "name": name, "spec": Path(spec).expanduser()})
        except ValueError:
            raise UserError(
                f"--openapi {raw!r}: NAME must be lowercase letters, digits and '_', starting with a letter"
            ) from None
        if known is None:
            entries.append(entry)
        else:
            entries[known] = entry
    return settings.model_copy(update={"openapi": entries})


def run(settings: Settings, args: argparse.Namespace) -> int:
    """`gateway openapi check SPEC`: 0 when the description can be served (its problems worked around)."""
    from ..openapi import check  # optional: needs the openapi extra

    configured = {e.name: e for e in settings.openapi}
    entry = configured.get(args.spec)
    path = entry.spec if entry is not None else Path(args.spec).expanduser()
    name = entry.name if entry is not None else "api"
    safe = [*(entry.safe if entry is not None else ()), *args.safe]
    report = check(path, name, safe)
    if args.json:
        print(dump(report.as_dict()))
    else:
        print(shown("\n".join(report.lines()), lines=True))
    return 0
