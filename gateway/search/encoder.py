"""A sentence encoder (all-MiniLM-L6-v2 by default) run with numpy: the `dense` extra's layer of search.

The static word vectors of `semantic` know what words mean one at a time; a transformer reads a
request as a whole ("book a meeting" is about a calendar event, "who can see this file" about
permissions). all-MiniLM-L6-v2 is a 6-layer BERT trained for sentence similarity (Apache-2.0); any
BERT-family sentence encoder can take its place (`[search.dense]`: its pooling, mean or CLS, and
the prefixes of requests and tools are part of its reference). The model is
named by reference and its files checked against pinned hashes before use (`models`); its tokenizer
is the `tokenizers` library's. The forward pass below is plain numpy (matrix products on the BLAS
numpy ships with, held to one thread by threadpoolctl): no deep-learning framework is installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from .models import DEFAULT_MODEL, ModelMismatch, ModelReference, ModelUnavailable, Pooling, verified

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
ENCODING_THREADS = min(2, os.cpu_count() or 1)
"""Threads that encode a catalog's texts (a request's text is one pack, encoded on one)."""
_PACK_TOKENS = 2048  # tokens of one forward pass: texts of like length laid end to end, no padding
_SCORES_BYTES = 1 << 21  # attention scores computed at a time (texts of one length): within a core's cache
_GELU_BLOCK = 1 << 15  # values GELU works on at a time (128 KB: stays in a core's cache)


class SentenceEncoder:
    """Unit vectors of texts: the last layer's token states pooled (their mean, or the first one's)
    and normalised, as the model was trained; a request's text and a tool's each with its prefix."""

    def __init__(
        self,
        files: Mapping[str, Path],
        model_id: str,
        *,
        pooling: Pooling = "mean",
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        """Load a model from its files, already verified (`models.verified`).

        Args:
            files: the path of each of `models.LOADED_FILES`.
            model_id: names the model, its files' hashes, its pooling and prefixes (the cached
                vectors are keyed by it).
            pooling, query_prefix, document_prefix: as `models.ModelReference` names them.
        """
        self.pooling = pooling
        self.prefixes = {"query": query_prefix, "document": document_prefix}
        self.np: Any = importlib.import_module("numpy")
        safetensors: Any = importlib.import_module("safetensors")
        tokenizers: Any = importlib.import_module("tokenizers")
        config = json.loads(files["config.json"].read_text())
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.dims = int(config["hidden_size"])
        self.model_id = model_id
        with safetensors.safe_open(str(files["model.safetensors"]), framework="np") as f:
            self.w = {k: f.get_tensor(k) for k in f.keys() if k != "embeddings.position_ids"}  # noqa: SIM118
        # Linear layers as (in, out) once, so that each is one `x @ w + b`.
        for k in [
            k
            for k in self.w
            if k.endswith("dense.weight") or k.endswith(("query.weight", "key.weight", "value.weight"))
        ]:
            self.w[k] = self.np.ascontiguousarray(self.w[k].T)
        self._layers = [self._layer(n) for n in range(self.layers)]
        self._mean = self.np.full(self.dims, 1 / self.dims, dtype=self.np.float32)
        # Small matrix products are fastest on one BLAS thread, and a busy machine makes BLAS threads
        # wait on each other (measured once, both cores loaded: a request 19 ms on two threads, 9 on
        # one); a catalog's packs run on `ENCODING_THREADS` threads of their own instead.
        self._blas = importlib.import_module("threadpoolctl").ThreadpoolController()
        self.tokenizer = tokenizers.Tokenizer.from_file(str(files["tokenizer.json"]))
        self.tokenizer.enable_truncation(
            min(MAX_TOKENS, int(config.get("max_position_embeddings", MAX_TOKENS)))
        )
        self.tokenizer.no_padding()

    def _layer(self, n: int) -> tuple[Any, ...]:
        """Layer `n`'s weights for `_forward`. Query, key and value are one product, the query's
        1/sqrt(head size) folded into its weights; a linear layer whose input has a last column of
        ones (`_forward` keeps one) has its bias as a last row, so its product adds it."""
        np, w, p = self.np, self.w, f"encoder.layer.{n}."
        scale = np.float32(1 / np.sqrt(self.dims // self.heads))

        def with_bias(weight: Any, bias: Any) -> Any:
            return np.ascontiguousarray(np.vstack([weight, bias[None, :]]))

        attention = [
            (p + f"attention.self.{t}.weight", p + f"attention.self.{t}.bias")
            for t in ("query", "key", "value")
        ]
        qkv = with_bias(
            np.concatenate([w[weight] for weight, _ in attention], axis=1),
            np.concatenate([w[bias] for _, bias in attention]),
        )
        qkv[:, : self.dims] *= scale
        return (
            qkv,
            with_bias(w[p + "attention.output.dense.weight"], w[p + "attention.output.dense.bias"]),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
            with_bias(w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"]),
            w[p + "output.dense.weight"],
            w[p + "output.dense.bias"],
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )

    def _norm(self, x: Any, weight: Any, bias: Any, out: Any) -> None:
        """Layer normalisation of `x` (a temporary of the caller's: changed) into `out`."""
        np = self.np
        x -= (x @ self._mean)[:, None]
        scale = np.einsum("ij,ij->i", x, x)  # no temporary of x's size
        scale *= np.float32(1 / self.dims)
        scale += np.float32(self.eps)
        np.sqrt(scale, out=scale)
        np.divide(1, scale, out=scale)
        x *= scale[:, None]
        x *= weight
        np.add(x, bias, out=out)

    def _forward(self, ids: Any, lengths: Sequence[int]) -> Any:
        """The unit vectors of a pack: `ids` are its texts' tokens end to end, `lengths` how many
        each text has (shortest first). The linear layers run over every token at once, attention
        over each text's own tokens: no padding, no mask."""
        np, w, d = self.np, self.w, self.dims
        tokens = len(ids)
        # The hidden state and the attention's result, each with a last column of ones: the linear
        # layers' biases are the last rows of their weights (`_layer`).
        x = np.empty((tokens, d + 1), dtype=np.float32)
        attended = np.empty((tokens, d + 1), dtype=np.float32)
        x[:, d] = attended[:, d] = 1
        state, context = x[:, :d], attended[:, :d]
        embedded = w["embeddings.word_embeddings.weight"][ids]
        embedded += w["embeddings.position_embeddings.weight"][
            np.concatenate([np.arange(n) for n in lengths])
        ]
        embedded += w["embeddings.token_type_embeddings.weight"][0]
        self._norm(embedded, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], state)
        for qkv_w, out_w, norm1_w, norm1_b, up_w, down_w, down_b, norm2_w, norm2_b in self._layers:
            self._attend(x @ qkv_w, context, lengths)
            y = attended @ out_w
            y += state
            self._norm(y, norm1_w, norm1_b, state)
            hidden = x @ up_w
            _gelu(np, hidden)
            y = hidden @ down_w
            y += down_b
            y += state
            self._norm(y, norm2_w, norm2_b, state)
        starts = np.cumsum([0, *lengths[:-1]])
        if self.pooling == "cls":  # the state of each text's first token, [CLS]
            pooled = state[starts]
        else:
            pooled = np.add.reduceat(state, starts, axis=0) / np.asarray(lengths, dtype=np.float32)[:, None]
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def _attend(self, qkv: Any, context: Any, lengths: Sequence[int]) -> None:
        """Each text's attention over its own tokens, written into `context`: texts of one length
        together, as one batched product per head, a few at a time so their scores stay in cache."""
        np = self.np
        heads, size = self.heads, self.dims // self.heads
        start = 0
        for length, count in _runs(lengths):
            ones = np.ones(length, dtype=np.float32)
            at_once = max(1, _SCORES_BYTES // (4 * heads * length * length))
            for first in range(0, count, at_once):
                texts = min(at_once, count - first)
                rows = slice(start + first * length, start + (first + texts) * length)
                q, k, v = qkv[rows].reshape(texts, length, 3, heads, size).transpose(2, 0, 3, 1, 4)
                scores = q @ k.transpose(0, 1, 3, 2)
                # Softmax without subtracting each row's maximum first (one pass less): exp(score)
                # neither overflows nor vanishes at the scores a model gives; where it would, the
                # maximum is subtracted after all.
                with np.errstate(over="ignore", invalid="ignore"):
                    np.exp(scores, out=scores)
                    sums = scores @ ones
                if not (sums.min() > 1e-20 and sums.max() < 1e38):
                    scores = q @ k.transpose(0, 1, 3, 2)
                    scores -= scores.max(-1, keepdims=True)
                    np.exp(scores, out=scores)
                    sums = scores @ ones
                out = context[rows].reshape(texts, length, heads, size).transpose(0, 2, 1, 3)
                np.matmul(scores, v, out=out)
                out /= sums[..., None]
            start += length * count

    def encode(
        self,
        texts: Sequence[str],
        threads: int | None = None,
        *,
        kind: Literal["document", "query"] = "document",
    ) -> Any:
        """One float32 unit vector a text, in order; `kind` says whose prefix each text is given (a
        tool's, or a request's).

        Texts are sorted by length and laid end to end in packs of about `_PACK_TOKENS` tokens, so
        a pack's matrix products are large and nothing is padding; the packs run on `threads`
        threads (default: `ENCODING_THREADS`), each on one BLAS thread.
        """
        np = self.np
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        prefix = self.prefixes[kind]
        encodings = [
            e.ids for e in self.tokenizer.encode_batch([prefix + t for t in texts] if prefix else list(texts))
        ]
        packs = _packs([len(e) for e in encodings])
        workers = min(threads or ENCODING_THREADS, len(packs))

        def run(pack: list[int]) -> None:
            ids = np.fromiter((t for i in pack for t in encodings[i]), dtype=np.int64)
            out[pack] = self._forward(ids, [len(encodings[i]) for i in pack])

        with self._blas.limit(limits=1, user_api="blas"):
            if workers <= 1:
                for pack in packs:
                    run(pack)
            else:  # numpy lets go of the GIL in its products and loops: the threads run at once
                with ThreadPoolExecutor(workers, thread_name_prefix="encode") as pool:
                    for _ in pool.map(run, packs):
                        pass
        return out


def _packs(lengths: Sequence[int]) -> list[list[int]]:
    """The texts' indexes sorted by length, cut into packs of at most `_PACK_TOKENS` tokens (or one
    text), the longest first so that threads end together. A text without tokens is in none (its
    vector stays zero)."""
    packs: list[list[int]] = []
    tokens = 0
    for i in sorted((i for i in range(len(lengths)) if lengths[i]), key=lambda i: lengths[i]):
        if packs and tokens + lengths[i] <= _PACK_TOKENS:
            packs[-1].append(i)
            tokens += lengths[i]
        else:
            packs.append([i])
            tokens = lengths[i]
    packs.reverse()
    return packs


def _runs(lengths: Sequence[int]) -> list[tuple[int, int]]:
    """(length, how many texts in a row have it) of sorted `lengths`."""
    runs: list[tuple[int, int]] = []
    for length in lengths:
        if runs and runs[-1][0] == length:
            runs[-1] = (length, runs[-1][1] + 1)
        else:
            runs.append((length, 1))
    return runs


def similarities(np: Any, matrix: Any, vector: Any) -> Any:
    """Each row's dot product with `vector` (float32). Not BLAS: OpenBLAS's threads wait on each other
    whenever the cores are busy (10 ms instead of 0.3 at 10,000 tools), and one core streams this
    fast enough."""
    vecdot = getattr(np, "vecdot", None)  # numpy 2; einsum's loop is about 1.5 times slower
    return vecdot(matrix, vector) if vecdot is not None else np.einsum("ij,j->i", matrix, vector)


def _gelu(np: Any, x: Any) -> None:
    """BERT's GELU, x * Φ(x), in place, with erf to within 1.5e-7 (Abramowitz and Stegun 7.1.26).

    With q = erfc(|x| / √2), GELU(x) = max(x, 0) - |x| q / 2, and A&S's
    q = t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-x² / 2), t = 1 / (1 + p |x| / √2).
    Scaling t to u = λ / (k + |x|) makes the polynomial's last coefficient 1 and absorbs the 1/2
    (`_GELU_CONSTANTS`): eighteen passes. It runs a block at a time, so that they stay in the core's
    cache instead of streaming the whole activation each time.
    """
    k, lam, d1, d2, d3, d4 = (np.float32(c) for c in _GELU_CONSTANTS)
    flat = x.reshape(-1)
    size = min(_GELU_BLOCK, flat.size)
    a, u, q = (np.empty(size, dtype=np.float32) for _ in range(3))
    for start in range(0, flat.size, _GELU_BLOCK):
        v = flat[start : start + _GELU_BLOCK]
        n = len(v)
        np.abs(v, out=a[:n])
        np.add(a[:n], k, out=u[:n])
        np.divide(lam, u[:n], out=u[:n])
        np.add(u[:n], d4, out=q[:n])
        for c in (d3, d2, d1):
            q[:n] *= u[:n]
            q[:n] += c
        q[:n] *= u[:n]
        q[:n] *= a[:n]
        np.square(v, out=a[:n])
        a[:n] *= np.float32(-0.5)
        np.exp(a[:n], out=a[:n])
        q[:n] *= a[:n]
        np.maximum(v, 0, out=v)
        v -= q[:n]


def _gelu_constants() -> tuple[float, ...]:
    """k, λ and d1..d4 of `_gelu`: t = r u with r = k / λ, r⁵ a5 / 2 = 1 and d_i = a_i rⁱ / 2."""
    p, a = 0.3275911, (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
    k = math.sqrt(2) / p
    r = (2 / a[4]) ** 0.2
    return (k, k / r, *(a[i] * r ** (i + 1) / 2 for i in range(4)))


_GELU_CONSTANTS = _gelu_constants()


_MODEL: list[ModelReference] = [DEFAULT_MODEL]
_LOADED: dict[tuple[str, str, Path | None], SentenceEncoder] = {}
_LOADING = threading.Lock()


def use_model(reference: ModelReference) -> None:
    """The model this process's dense layer uses from now on (`gateway.runtime` sets the configured one)."""
    _MODEL[0] = reference


def current_model() -> ModelReference:
    return _MODEL[0]


def packages_installed() -> bool:
    """Whether the `dense` extra's packages are installed (found, not imported: cheap)."""
    names = ("numpy", "tokenizers", "safetensors", "threadpoolctl", "huggingface_hub")
    return all(importlib.util.find_spec(name) is not None for name in names)


def sentence_encoder() -> SentenceEncoder | None:
    """The process's encoder of the current model, or None when the `dense` extra is not installed.

    Raises:
        ModelUnavailable: the model's files are not on this machine.
        ModelMismatch: a file is not the one the model's reference pins.
    """
    reference = _MODEL[0]
    key = (reference.name, reference.fingerprint(), reference.path)
    with _LOADING:
        encoder = _LOADED.get(key)
        if encoder is None:
            if not packages_installed():
                return None
            files = verified(reference)
            encoder = SentenceEncoder(
                files,
                f"{reference.name} {reference.fingerprint()}",
                pooling=reference.pooling,
                query_prefix=reference.query_prefix,
                document_prefix=reference.document_prefix,
            )
            _LOADED.clear()  # one model at a time: the previous one's weights are let go
            _LOADED[key] = encoder
        return encoder


def encoder_or_reason() -> tuple[SentenceEncoder | None, str | None]:
    """The encoder, or None and why not (one line; None when the extra is simply not installed)."""
    try:
        return sentence_encoder(), None
    except (ModelUnavailable, ModelMismatch) as exc:
        return None, str(exc)
