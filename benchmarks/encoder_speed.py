"""Encoding speed of the dense layer: today's encoder and the one before it, in one process.

    python -m benchmarks.encoder_speed [--texts N] [--threads T] [--rounds R]

The texts are an even sample of N (default 512) of the Google API catalog's 13,869 methods, as the
dense layer encodes them (`embedding_text`). Both encoders run on the same loaded weights of
all-MiniLM-L6-v2 (its published files: `python -m tests.model_files`, or `gateway model pull`),
alternately, R rounds each (default 1), best time kept: the baseline is the forward pass as it was
before (`benchmarks.encoder_baseline`: one thread, batches of 32 texts), the other
`SentenceEncoder.encode` on T threads (default: `ENCODING_THREADS`). It prints texts a second, the
speed-up, the smallest cosine between the two encoders' vectors of a text, and what the whole
catalog would take at each speed (scaled by its tokens). The machine's load is printed with the
figures: the second thread needs a second idle core.
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


def _best(run: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(rounds):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


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
    before, after = float("inf"), float("inf")
    for _ in range(args.rounds):  # alternately, so that a change of the machine's load hits both
        seconds, old = _best(lambda: baseline.encode(texts), 1)
        before = min(before, seconds)
        seconds, new = _best(lambda: encoder.encode(texts, threads=args.threads), 1)
        after = min(after, seconds)
    cosine = float(np.min(np.sum(old * new, axis=1)))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\n{len(texts)} Google methods ({tokens:,} tokens) encoded by all-MiniLM-L6-v2 on {os.cpu_count()} "
        f"cores (load average {load}), best of {args.rounds}:"
    )
    for label, seconds in (
        ("before (one thread, batches of 32)", before),
        (f"now ({args.threads} threads)", after),
    ):
        whole = seconds * catalog_tokens / tokens
        print(f"  {label:<36} {len(texts) / seconds:7.1f} texts/s   whole catalog ~{whole / 60:5.1f} min")
    print(f"  speed-up {before / after:.2f}x; smallest cosine between the two vectors of a text {cosine:.7f}")


if __name__ == "__main__":
    main()
