"""Encoding speed of the dense layer: today's encoder and the one before it, in one process.

    python -m benchmarks.encoder_speed [--texts N] [--threads T] [--rounds R]

The texts are an even sample of N (default 512) of the Google API catalog's 13,869 methods, as the
dense layer encodes them (`embedding_text`). Both encoders run on the same loaded weights of
all-MiniLM-L6-v2 (its published files: `python -m tests.model_files`, or `gateway model pull`),
alternately, R rounds each (default 1), best time kept: the baseline is the forward pass as it was
before (`benchmarks.encoder_baseline`: one thread, batches of 32 texts), then
`SentenceEncoder.encode` on one thread and on T threads (default: `ENCODING_THREADS`). It prints texts a second, the
speed-up, the smallest cosine between the two encoders' vectors of a text, and what the whole
catalog would take at each speed (scaled by its tokens). The machine's load is printed with the
figures: the second thread needs a second idle core; the CPU time a text takes (every thread's)
says what the forward pass itself gained, whatever the load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from gateway.search import encoder as search_encoder
from gateway.search.semantic import embedding_text
from services.google_apis.documents import documents_dir
from services.google_apis.index import build_index

from .encoder_baseline import TodaysEncoder
from .google_requests import catalog_of
from .models import use_published_model


def _timed(run: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall-clock seconds, CPU seconds of the process (every thread) and the result of `run`."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--texts", type=int, default=512, help="methods sampled evenly from the catalog")
    parser.add_argument("--threads", type=int, default=search_encoder.ENCODING_THREADS)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each encoder (best kept)")
    args = parser.parse_args(argv)
    use_published_model()
    encoder, reason = search_encoder.encoder_or_reason()
    if encoder is None:  # one line, naming the command that fetches the model
        why = reason or "the 'dense' extra is not installed"
        print(f"benchmarks.encoder_speed: {why}", file=sys.stderr)
        raise SystemExit(2)
    np = encoder.np
    tools = sorted(catalog_of(build_index(documents_dir(), "newest")), key=lambda d: d.name)
    every = [embedding_text(d) for d in tools]
    texts = every[:: max(1, len(every) // args.texts)][: args.texts]
    baseline = TodaysEncoder.__new__(TodaysEncoder)
    baseline.__dict__.update(encoder.__dict__)  # the same weights and tokenizer, loaded once
    tokens = sum(len(e.ids) for e in encoder.tokenizer.encode_batch(texts))
    catalog_tokens = sum(len(e.ids) for e in encoder.tokenizer.encode_batch(every))
    runs: dict[str, list[tuple[float, float]]] = {"before": [], "one": [], "now": []}
    load_before = os.getloadavg()[0]
    for _ in range(args.rounds):  # alternately, so that a change of the machine's load hits all
        wall, cpu, old = _timed(lambda: baseline.encode(texts))
        runs["before"].append((wall, cpu))
        wall, cpu, _ = _timed(lambda: encoder.encode(texts, threads=1))
        runs["one"].append((wall, cpu))
        wall, cpu, new = _timed(lambda: encoder.encode(texts, threads=args.threads))
        runs["now"].append((wall, cpu))
    cosine = float(np.min(np.sum(old * new, axis=1)))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\n{len(texts)} Google methods ({tokens:,} tokens) encoded by all-MiniLM-L6-v2 on {os.cpu_count()} "
        f"cores (load average {load_before:.1f} before, {load} after), best of {args.rounds}:"
    )
    best = {name: min(times) for name, times in runs.items()}
    labels = {
        "before": "before (one thread, batches of 32)",
        "one": "now, on one thread",
        "now": f"now ({args.threads} threads)",
    }
    for name, (wall, cpu) in best.items():
        whole = wall * catalog_tokens / tokens
        print(
            f"  {labels[name]:<36} {len(texts) / wall:7.1f} texts/s   {cpu / len(texts) * 1000:6.1f} ms of CPU a text"
            f"   whole catalog ~{whole / 60:5.1f} min"
        )
    before, after = best["before"][0], best["now"][0]
    print(f"  speed-up {before / after:.2f}x; smallest cosine between the two vectors of a text {cosine:.7f}")
    # What the forward pass gained whatever the load: CPU time a text, before against now on one thread.
    print(f"  CPU time a text {best['before'][1] / best['one'][1]:.2f}x less on one thread")


if __name__ == "__main__":
    main()
