"""The `dense` layer of search: a sentence encoder's similarity blended into the hybrid score.

With the `dense` extra installed and the model pulled (`gateway model pull`), each tool's embedding
text is also encoded by a sentence encoder (`encoder`, all-MiniLM-L6-v2 by default), and a query's
blended score becomes

    (1 - DENSE_WEIGHT) * hybrid / best hybrid + DENSE_WEIGHT * (sim - low) / (high - low)

over the hybrid's candidates and the `DENSE_CANDIDATES` tools closest to the query, with `high` the
greatest similarity over the catalog and `low` the `LOW_QUANTILE` of an even sample: only the tools
closer than nine in ten of the catalog gain anything (a looser scale cost requests made of several
asks, whose sentence vector is near many tools at once).

Encoding costs about 45 ms of CPU a tool (on two threads), so a catalog of more than
`DENSE_SYNC_LIMIT` tools is encoded in the background: searches rank without the layer until its
vectors are ready.
The vectors are cached on disk by a hash of the texts and the model, so a restart loads them. An
encoding that is stopped (Ctrl-C in `gateway index`, a server restarted) leaves what it had done in
a partial file beside them, written whole every `PARTIAL_SECONDS` at most; the next encoding of the
same texts starts where it stopped.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..files import keep_newest, write_atomic
from .encoder import SentenceEncoder, encoder_or_reason, sentence_encoder, similarities

DENSE_WEIGHT = 0.3
"""Share of the sentence encoder's similarity in a blended score."""
DENSE_CANDIDATES = 100
"""Tools closest to the query by the encoder that join the candidates."""
DENSE_SYNC_LIMIT = 256
"""Catalogs up to this many tools are encoded before the index is used; larger ones in the background."""
_LOW_SAMPLE = 2048
LOW_QUANTILE = 0.9
"""Where the similarity scale starts, as a quantile of the catalog's similarities to the query."""
MIN_GAINING = 19
"""... but at least this many of the closest tools gain something (catalogs of fewer than 190 tools)."""
MAX_CACHED_MATRICES = 8
"""Cached vector files kept in a cache directory; the least recently written are removed beyond it."""
_MAX_CACHED_QUERIES = 64
_CHUNK = 512  # texts encoded between checks that the index is still wanted (two threads share them)
PARTIAL_SECONDS = 20.0
"""How often at most an encoding under way saves what it has done (`_Partial`)."""
_BUILDING = threading.Lock()  # one catalog encoded at a time
_log = logging.getLogger(__name__)


def dense_available() -> bool:
    """Whether the dense layer can run: the `dense` extra installed, the model's files on this machine
    and verified (a missing or changed file is logged, one line naming the command to run)."""
    encoder, reason = encoder_or_reason()
    if reason is not None:
        _log.warning("the dense layer is off: %s", reason)
    return encoder is not None


class DenseLayer:
    """The tools' sentence vectors (once ready) and how they re-score a page's candidates."""

    def __init__(
        self, texts: Sequence[str], cache_dir: Path | None = None, *, background: bool = True
    ) -> None:
        """`background`: encode a large catalog in the background when its vectors are not cached
        (False: never; the layer stays off until `gateway index` or a server encodes them)."""
        encoder = sentence_encoder()  # a missing or changed model file: its one-line error
        if encoder is None:
            raise ImportError(
                "the dense layer needs the 'dense' extra: pip install 'metatool-gateway[dense]'"
            )
        self.encoder: SentenceEncoder = encoder
        self.np: Any = encoder.np
        self.matrix: Any = None
        # In a small catalog the scale still starts below the `MIN_GAINING` closest tools: nine in
        # ten of 27 tools would leave two or three to gain anything, each by a lot.
        self._low_quantile = min(LOW_QUANTILE, max(0.0, 1.0 - MIN_GAINING / len(texts))) if texts else 0.0
        self._ready = threading.Event()
        self._finished = threading.Event()  # ready, or the encoding failed
        self._queries: dict[str, Any] = {}
        self._lock = threading.Lock()
        key = hashlib.sha256(encoder.model_id.encode())
        for text in texts:
            key.update(text.encode("utf-8", "surrogatepass") + b"\x1e")
        self._path = None if cache_dir is None else cache_dir / f"dense-{key.hexdigest()[:40]}.npy"
        self._rows: dict[str, int] = {}
        cached = _rows_of(texts, encoder.model_id) if texts else None
        if cached is None:
            cached = self._load(len(texts))
        if cached is not None:
            self._attach(cached, texts)
        elif len(texts) <= DENSE_SYNC_LIMIT:
            matrix = encoder.encode(texts)
            self._save(matrix)
            self._attach(matrix, texts)
        elif background:
            args = (weakref.ref(self), encoder, list(texts))
            threading.Thread(target=_build, args=args, name="dense-index", daemon=True).start()
        else:
            self._finished.set()  # not ready, and nothing under way

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the vectors are ready or their encoding failed; whether they are ready."""
        self._finished.wait(timeout)
        return self.ready

    def _attach(self, matrix: Any, texts: Sequence[str]) -> None:
        np = self.np
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self._rows = {text: i for i, text in enumerate(texts)}
        self._ready.set()
        self._finished.set()
        with _READY_LOCK:
            _READY.add(self)

    def _load(self, rows: int) -> Any:
        if self._path is None:
            return None
        try:
            matrix = self.np.load(self._path, allow_pickle=False)
        except (OSError, ValueError):
            return None
        if matrix.ndim != 2 or matrix.shape != (rows, self.encoder.dims):
            return None
        return matrix

    def _save(self, matrix: Any) -> None:
        if self._path is None or not len(matrix):
            return
        try:
            write_atomic(self._path, lambda handle: self.np.save(handle, matrix, allow_pickle=False))
            keep_newest(self._path.parent, "dense-*.npy", MAX_CACHED_MATRICES)
        except OSError as exc:
            _log.warning("could not cache the dense vectors in %s: %s", self._path.parent, exc)

    def query(self, text: str) -> Any:
        """A request's unit vector (the last requests' are remembered)."""
        with self._lock:
            vector = self._queries.get(text)
        if vector is None:
            vector = self.encoder.encode([text], kind="query")[0]
            with self._lock:
                if len(self._queries) >= _MAX_CACHED_QUERIES:
                    self._queries.clear()
                self._queries[text] = vector
        return vector

    def rescore(
        self,
        query: str,
        ids: Any,
        fused: Any,
        tier: Any,
        *,
        keep: Any,
        extra: Callable[[Any], Any],
        voters: Any = None,
    ) -> tuple[Any, Any, Any]:
        """The candidates with the encoder's closest added, their blended scores and their tiers.

        `ids` (sorted), `fused` and `tier` are the hybrid's candidates, scores and tiers; `keep` (a
        mask, or None) says which tools may be returned; `extra(new_ids)` gives the hybrid's scores
        of the tools added (which are scored exactly: tier 0). `voters` (a mask, or None: every
        tool) says which tools the similarity may raise: where a request's words ask an action,
        the tools of that action. The encoder reads well what a request is about and poorly what
        it asks done ("cross it off my list" is nearest a new task), so elsewhere its vote would
        override the words' clearest evidence.
        """
        np = self.np
        sim = similarities(np, self.matrix, self.query(query))
        low, high = (
            float(np.quantile(sim[:: max(1, len(sim) // _LOW_SAMPLE)], self._low_quantile)),
            float(sim.max()),
        )
        closest = sim if keep is None else np.where(keep, sim, -np.inf)
        k = min(DENSE_CANDIDATES, len(sim))
        near = np.argpartition(-closest, k - 1)[:k]
        near = near[np.isfinite(closest[near])]
        seen = np.zeros(len(sim), dtype=bool)
        seen[ids] = True
        new = np.sort(near[~seen[near]])
        all_ids = np.concatenate([ids, new])
        hybrid = np.concatenate([fused, extra(new)]) if len(new) else fused
        best = float(hybrid.max()) if len(hybrid) else 1.0
        closeness = np.clip((sim[all_ids] - low) / ((high - low) or 1.0), 0.0, None)
        if voters is not None:
            closeness = np.where(voters[all_ids], closeness, 0.0)
        scores = (1 - DENSE_WEIGHT) * hybrid / (best or 1.0) + DENSE_WEIGHT * closeness
        tiers = np.concatenate([tier, np.zeros(len(new), dtype=tier.dtype)])
        order = np.argsort(all_ids, kind="stable")
        return all_ids[order], scores[order], tiers[order]


_READY: weakref.WeakSet[DenseLayer] = weakref.WeakSet()
"""The process's layers whose vectors are ready: a subset of a catalog (the tools one principal may
see) takes its rows from the whole catalog's layer instead of encoding them again."""
_READY_LOCK = threading.Lock()  # layers become ready in the background thread


def _rows_of(texts: Sequence[str], model_id: str) -> Any:
    """The vectors of `texts` from a ready layer of the same model that holds every one of them, or None."""
    with _READY_LOCK:
        layers = [layer for layer in _READY if layer.encoder.model_id == model_id]
    for layer in layers:
        rows = [layer._rows.get(text) for text in texts]
        if None not in rows:
            return layer.matrix[rows]
    return None


def _build(ref: weakref.ref[DenseLayer], encoder: SentenceEncoder, texts: list[str]) -> None:
    """Encode in the background (see `_encode`); however it ends, a layer still wanted stops waiting."""
    try:
        _encode(ref, encoder, texts)
    except Exception:  # a failed build leaves search as it was, without the layer
        _log.exception("the dense layer could not encode the catalog")
    finally:
        layer = ref()
        if layer is not None:
            layer._finished.set()


def _encode(ref: weakref.ref[DenseLayer], encoder: SentenceEncoder, texts: list[str]) -> None:
    """Encode a chunk at a time, one catalog at a time (the process's cores are the searches' too);
    a layer dropped meanwhile (its catalog changed) stops its encoding. What an earlier encoding of
    the same texts had done is taken up where it stopped (`_Partial`)."""
    np = encoder.np
    layer = ref()
    partial = _Partial(None if layer is None or layer._path is None else layer._path, np)
    del layer
    matrix, begin = partial.load(len(texts), encoder.dims)
    if begin:
        _log.info(
            "Encoding %s tools for the dense layer in the background, from %s where the last one stopped...",
            f"{len(texts):,}",
            f"{begin:,}",
        )
    else:
        _log.info("Encoding %s tools for the dense layer in the background...", f"{len(texts):,}")
    with _BUILDING:
        for start in range(begin, len(texts), _CHUNK):
            if ref() is None:
                return
            matrix[start : start + _CHUNK] = encoder.encode(texts[start : start + _CHUNK])
            done = min(start + _CHUNK, len(texts))
            partial.progress(matrix, done)
            if done * 10 // len(texts) != start * 10 // len(texts):
                _log.info("Dense layer: %s of %s tools encoded", f"{done:,}", f"{len(texts):,}")
    layer = ref()
    if layer is not None:
        layer._save(matrix)
        partial.remove()  # before the layer is ready: whoever waits for it finds the whole file only
        layer._attach(matrix, texts)
        _log.info("The dense layer is ready (%s tools).", f"{len(texts):,}")


class _Partial:
    """What an encoding under way has done, beside the vectors' file: `dense-KEY.partial.npy`, the rows
    encoded so far then their count in a last row (written whole, at most every `PARTIAL_SECONDS`)."""

    def __init__(self, final: Path | None, np: Any) -> None:
        self.path = None if final is None else final.with_name(final.stem + ".partial.npy")
        self.np = np
        self._saved = time.monotonic()

    def load(self, rows: int, dims: int) -> tuple[Any, int]:
        """The matrix to fill and the first row not yet encoded (0: nothing to take up)."""
        matrix = self.np.zeros((rows, dims), dtype=self.np.float32)
        if self.path is None:
            return matrix, 0
        try:
            saved = self.np.load(self.path, allow_pickle=False)
        except (OSError, ValueError):
            return matrix, 0
        done = int(saved[-1, 0]) if saved.ndim == 2 and saved.shape == (rows + 1, dims) else 0
        if not 0 < done <= rows:
            return matrix, 0
        matrix[:done] = saved[:done]
        return matrix, done

    def progress(self, matrix: Any, done: int) -> None:
        if self.path is None or done >= len(matrix) or time.monotonic() - self._saved < PARTIAL_SECONDS:
            return
        count = self.np.zeros((1, matrix.shape[1]), dtype=self.np.float32)
        count[0, 0] = done  # exact in float32 up to 16 million rows
        out = self.np.concatenate(
            [
                matrix[:done],
                self.np.zeros((len(matrix) - done, matrix.shape[1]), dtype=self.np.float32),
                count,
            ]
        )
        try:
            write_atomic(self.path, lambda handle: self.np.save(handle, out, allow_pickle=False))
        except OSError as exc:
            _log.warning("could not save the dense layer's progress in %s: %s", self.path.parent, exc)
        self._saved = time.monotonic()

    def remove(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
