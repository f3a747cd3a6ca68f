"""Prompt cost of the three meta-tools versus emitting the whole catalog as tool definitions.

    python -m benchmarks.token_footprint [--catalog workspace] [--scale 1 10 100]

Counts cl100k_base tokens (bpe-openai ships the vocabulary, nothing is downloaded) of
the JSON of the Anthropic tool definitions. The baseline is what a host without the
gateway sends: every catalog tool, every turn. `--scale` repeats the catalog under new
names to show how each side grows.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
from pathlib import Path

from bpe_openai import get_encoding

from gateway import Catalog, Gateway, ProviderOptions, load_provider
from gateway.adapters import anthropic


def count(encoding: object, payload: object) -> int:
    """Tokens of the JSON of `payload`; a list is counted item by item (the tokenizer caps input length)."""
    if isinstance(payload, list) and len(payload) > 20:
        return sum(count(encoding, item) for item in payload) + len(payload)  # + the ", " between items
    return len(encoding.encode(json.dumps(payload, ensure_ascii=False)))  # type: ignore[attr-defined]


def scaled(catalog: Catalog, times: int) -> Catalog:
    if times == 1:
        return catalog
    copies = [dataclasses.replace(d, name=f"{d.name[:58]}_c{i}") for i in range(times) for d in catalog]
    return Catalog(copies)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--catalog", default="workspace", help="catalog provider (entry point or module:function)"
    )
    parser.add_argument("--scale", type=int, nargs="*", default=[1, 10, 100])
    args = parser.parse_args()
    encoding = get_encoding("cl100k_base")
    with tempfile.TemporaryDirectory() as tmp:
        toolset = load_provider(args.catalog)(ProviderOptions(data_dir=Path(tmp), seed_demo=False))
        base = toolset.catalog
        if toolset.close:
            toolset.close()
    print(f"catalog {args.catalog!r}: {len(base)} tools; tokenizer cl100k_base (bpe-openai)")
    print(f"{'tools':>8} {'whole catalog (baseline)':>26} {'three meta-tools':>18} {'ratio':>8}")
    for times in args.scale:
        catalog = scaled(base, times)
        whole = count(encoding, anthropic.tools(catalog))
        meta = count(encoding, anthropic.tools(Gateway(catalog).meta))
        print(f"{len(catalog):>8} {whole:>26,} {meta:>18,} {whole / meta:>7.1f}x")
    per_tool = {d.name: count(encoding, anthropic.tool_param(d)) for d in base}
    print(
        f"per tool in {args.catalog!r}: median {sorted(per_tool.values())[len(per_tool) // 2]} tokens, "
        f"largest {max(per_tool, key=per_tool.__getitem__)} ({max(per_tool.values())})"
    )


if __name__ == "__main__":
    main()
