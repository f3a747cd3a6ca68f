"""Plot discover latency against catalog size from `benchmarks.speed --json` rows.

python -m benchmarks.plot docs/discovery-speed.json docs/discovery-latency.png
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("rows", type=Path, help="JSON written by benchmarks.speed --json")
    parser.add_argument("out", type=Path, help="PNG to write")
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = json.loads(args.rows.read_text())
    rows = data["rows"] if isinstance(data, dict) else data  # older files hold the rows alone
    engines = list(dict.fromkeys(r["engine"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True)
    for ax, key, title in ((axes[0], "median_ms", "median"), (axes[1], "p99_ms", "p99")):
        for engine in engines:
            points = sorted((r["size"], r[key]) for r in rows if r["engine"] == engine)
            style = "-o" if engine.startswith("ours") else "--s"
            ax.plot([p[0] for p in points], [p[1] for p in points], style, label=engine, markersize=4)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("tools in the catalog")
        ax.set_ylabel(f"{title} latency per query (ms)")
        ax.set_title(f"discover latency, {title} (top 10)")
        if isinstance(data, dict):
            start, end = data["load_average"]["start"][0], data["load_average"]["end"][0]
            ax.text(
                0.99,
                0.02,
                f"load average {start:.1f} to {end:.1f}, {data['machine']['cores']} cores",
                transform=ax.transAxes,
                fontsize=7,
                ha="right",
                va="bottom",
                color="0.4",
            )
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
