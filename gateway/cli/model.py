"""`gateway model pull` and `gateway model check`: the dense layer's model, fetched and verified on purpose.

Nothing is downloaded while searching or starting a server; `pull` is the one command that reaches
the Hugging Face hub (HF_ENDPOINT, HF_HUB_OFFLINE and proxy variables honoured), then checks every
file against its pinned sha256 and prints the hashes.
"""

from __future__ import annotations

import argparse

from ..runtime import dense_model
from ..search.models import check, pull
from ..settings.loading import Settings
from .output import dump


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "verb",
        choices=["pull", "check"],
        help="pull: download the configured model's files and verify them; check: verify those on this machine",
    )


def run(settings: Settings, args: argparse.Namespace) -> int:
    """0 when every file of the configured model is on this machine and is the published one."""
    reference = dense_model(settings.search.dense)
    files = pull(reference) if args.verb == "pull" else check(reference)
    if args.json:
        print(
            dump(
                {
                    "model": reference.repo_id,
                    "revision": reference.revision,
                    "pooling": reference.pooling,
                    "query_prefix": reference.query_prefix,
                    "document_prefix": reference.document_prefix,
                    "files": {
                        name: {"path": str(path), "sha256": sha} for name, (path, sha) in files.items()
                    },
                }
            )
        )
        return 0
    print(f"{reference.repo_id} at {reference.revision}: every file verified")
    for name, (path, sha) in files.items():
        print(f"  {sha}  {name}  ({path})")
    return 0
