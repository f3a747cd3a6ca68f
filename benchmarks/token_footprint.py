"""Prompt cost of the three meta-tools versus the whole catalog, and of one page of discover_tools.

    python -m benchmarks.token_footprint [--catalog workspace] [--scale 1 10 100]

Counts cl100k_base tokens (bpe-openai ships the vocabulary, nothing is downloaded) of
the JSON of the Anthropic tool definitions. The baseline is what a host without the
gateway sends: every catalog tool, every turn. `--scale` repeats the catalog under new
names to show how each side grows.

Then the text the model reads for a page of 10 tools (`render` of a discover_tools answer) for a
few everyday requests, next to the same page in the earlier shape (every entry with its category,
action and flags list, and the longer next step): a page stays in the model's context for the rest
of the conversation.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

from bpe_openai import get_encoding

from gateway import Catalog, Gateway, Principal, ProviderOptions, ToolContext, load_provider, render, run_sync
from gateway.adapters import anthropic
from gateway.usage import SqliteUsageStore, Usage

REQUESTS = (
    "what's on my calendar tomorrow",
    "email Ana the agenda",
    "add a task to my list",
    "move my meeting to friday",
    "find unread email",
)
"""Everyday requests whose pages are counted (each a page of 10)."""
_EARLIER_NEXT_STEP = "Call get_tool_schema with the chosen tool_name before invoking it."


def count(encoding: object, payload: object) -> int:
    """Tokens of the JSON of `payload`; a list is counted item by item (the tokenizer caps input length)."""
    if isinstance(payload, list) and len(payload) > 20:
        return sum(count(encoding, item) for item in payload) + len(payload)  # + the ", " between items
    return len(encoding.encode(json.dumps(payload, ensure_ascii=False)))  # type: ignore[attr-defined]


def earlier_shape(page: dict[str, Any], catalog: Catalog) -> dict[str, Any]:
    """The same page as discover_tools gave it before pages were made lean: the baseline."""
    tools = []
    for hit in page["tools"]:
        d = catalog.by_name[hit["name"]]
        entry = {"name": d.name, "category": d.category, "action": d.action, "summary": d.summary}
        tools.append({**entry, "flags": list(d.flags)})
    earlier = {**page, "tools": tools}
    if "next_step" in earlier and page.get("total"):
        earlier["next_step"] = _EARLIER_NEXT_STEP
    return earlier


def with_companions(catalog: Catalog) -> Gateway:
    """A gateway whose history gives every tool two companions: the most a page of 10 carries.

    Each tool is paired in the history with the next one by name (and the last with the first),
    as if one earlier request had needed both; `min_principals` 1, as on a one-person gateway."""
    usage = Usage(SqliteUsageStore(), check_seconds=0.0, min_principals=1)
    names = sorted(d.name for d in catalog)
    lines = [
        json.dumps({"query": f"earlier request {i}", "tools": [name, names[(i + 1) % len(names)]]})
        for i, name in enumerate(names)
    ]
    usage.import_lines(lines, principal="local")
    gateway = Gateway(catalog, usage=usage, search_cache_dir=False)
    usage.learned(gateway.visible(Principal()), wait=True)
    return gateway


def pages(encoding: object, catalog: Catalog) -> None:
    """Tokens of a page of 10 for each of `REQUESTS`, in the earlier shape, as it is now, and with a
    companion named under every hit (`with_companions`)."""
    gateway = Gateway(catalog, search_cache_dir=False)
    companions = with_companions(catalog)
    print(f"\npage of 10 (the text the model reads), catalog of {len(catalog)} tools")
    print(f"{'request':<34} {'earlier shape (baseline)':>25} {'now':>6} {'saved':>7} {'with companions':>16}")
    for request in REQUESTS:
        result = run_sync(gateway.call("discover_tools", {"query": request, "limit": 10}, ToolContext()))
        now = len(encoding.encode(render(result)))  # type: ignore[attr-defined]
        earlier = earlier_shape(result.output, catalog)
        before = len(encoding.encode(json.dumps(earlier, ensure_ascii=False, separators=(",", ":"))))  # type: ignore[attr-defined]
        named = run_sync(
            companions.call("discover_tools", {"query": request, "limit": 10}, ToolContext(session_id="b"))
        )
        assert all("with" in t for t in named.output["tools"][:3]), named.output  # the first hits name theirs
        both = len(encoding.encode(render(named)))  # type: ignore[attr-defined]
        print(f"{request!r:<34} {before:>25} {now:>6} {1 - now / before:>6.0%} {both:>16}")


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
    pages(encoding, base)


if __name__ == "__main__":
    main()
