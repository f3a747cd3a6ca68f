"""A sentence encoder (all-MiniLM-L6-v2 by default) run with numpy: the `dense` extra's layer of search.

The static word vectors of `semantic` know what words mean one at a time; a transformer reads a
request as a whole ("book a meeting" is about a calendar event, "who can see this file" about
permissions). all-MiniLM-L6-v2 is a 6-layer BERT trained for sentence similarity (Apache-2.0); any
BERT-family sentence encoder with mean pooling can take its place (`[search.dense]`). The model is
named by reference and its files checked against pinned hashes before use (`models`); its tokenizer
is the `tokenizers` library's. The forward pass below is plain numpy (matrix products on the BLAS
numpy ships with, held to one thread by threadpoolctl): no deep-learning framework is installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .models import DEFAULT_MODEL, ModelMismatch, ModelReference, ModelUnavailable, verified

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
ENCODING_THREADS = min(2, os.cpu_count() or 1)
"""Threads that encode a catalog's texts (a request's text is one batch, encoded on one)."""
_BATCH_TOKENS = 4096  # tokens of one forward pass (texts x the longest): large products, little padding
_GELU_BLOCK = 1 << 15  # values GELU works on at a time (128 KB: stays in a core's cache)


class SentenceEncoder:
    """Unit vectors of texts: mean of the last layer's token states, normalised (as the model was trained)."""

    def __init__(self, files: Mapping[str, Path], model_id: str) -> None:
        """Load a model from its files, already verified (`models.verified`).

        Args:
            files: the path of each of `models.LOADED_FILES`.
            model_id: names the model and its files' hashes (the cached vectors are keyed by it).
        """
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
        # Small matrix products are fastest on one BLAS thread, and a busy machine makes BLAS threads
        # wait on each other (measured once, both cores loaded: a request 19 ms on two threads, 9 on
        # one); a catalog's batches run on `ENCODING_THREADS` threads of their own instead.
        self._blas = importlib.import_module("threadpoolctl").ThreadpoolController()
        self.tokenizer = tokenizers.Tokenizer.from_file(str(files["tokenizer.json"]))
        self.tokenizer.enable_truncation(
            min(MAX_TOKENS, int(config.get("max_position_embeddings", MAX_TOKENS)))
        )
        self.tokenizer.no_padding()

    def _layer(self, n: int) -> tuple[Any, ...]:
        """Layer `n`'s weights for `_forward`: query, key and value as one product, the query's
        1/sqrt(head size) folded into its weights."""
        np, w, p = self.np, self.w, f"encoder.layer.{n}."
        scale = np.float32(1 / np.sqrt(self.dims // self.heads))
        qkv = np.concatenate([w[p + f"attention.self.{t}.weight"] for t in ("query", "key", "value")], axis=1)
        qkv_bias = np.concatenate([w[p + f"attention.self.{t}.bias"] for t in ("query", "key", "value")])
        qkv[:, : self.dims] *= scale
        qkv_bias[: self.dims] *= scale
        names = ("attention.output.dense", "attention.output.LayerNorm", "intermediate.dense", "output.dense")
        rest = [w[p + name + suffix] for name in names for suffix in (".weight", ".bias")]
        return (
            np.ascontiguousarray(qkv),
            qkv_bias,
            *rest,
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )

    def _norm(self, x: Any, weight: Any, bias: Any) -> Any:
        """Layer normalisation of `x` (a temporary of the caller's: normalised in place)."""
        np = self.np
        x -= x.mean(-1, keepdims=True)
        x *= 1 / np.sqrt(np.square(x).mean(-1, keepdims=True) + np.float32(self.eps))
        x *= weight
        x += bias
        return x

    def _forward(self, ids: Any, mask: Any) -> Any:
        """The unit vectors of a batch: `ids` and `mask` are (texts, tokens), padded on the right."""
        np, w = self.np, self.w
        batch, length = ids.shape
        size = self.dims // self.heads
        x = w["embeddings.word_embeddings.weight"][ids]
        x += w["embeddings.position_embeddings.weight"][:length]
        x += w["embeddings.token_type_embeddings.weight"][0]
        x = self._norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = np.where(mask, np.float32(0), np.float32(-1e9))[:, None, None, :]
        for (
            qkv_w,
            qkv_b,
            out_w,
            out_b,
            norm1_w,
            norm1_b,
            up_w,
            up_b,
            down_w,
            down_b,
            norm2_w,
            norm2_b,
        ) in self._layers:
            qkv = x @ qkv_w
            qkv += qkv_b
            # (3, texts, heads, tokens, size), each contiguous: the batched products then run on BLAS.
            q, k, v = (
                np.ascontiguousarray(t)
                for t in qkv.reshape(batch, length, 3, self.heads, size).transpose(2, 0, 3, 1, 4)
            )
            scores = q @ k.transpose(0, 1, 3, 2)
            scores += bias
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            attended = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.dims) @ out_w
            attended += out_b
            attended += x
            x = self._norm(attended, norm1_w, norm1_b)
            h = x @ up_w
            h += up_b
            _gelu(np, h)
            out = h @ down_w
            out += down_b
            out += x
            x = self._norm(out, norm2_w, norm2_b)
        m = mask[:, :, None].astype(np.float32)
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def encode(self, texts: Sequence[str], threads: int | None = None) -> Any:
        """One float32 unit vector a text, in order.

        Texts are sorted by length and cut into batches of about `_BATCH_TOKENS` tokens, so a batch
        holds texts of like length (little padding) and its matrix products are large; the batches
        run on `threads` threads (default: `ENCODING_THREADS`), each on one BLAS thread.
        """
        np = self.np
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        encodings = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        batches = _batches(encodings)
        workers = min(threads or ENCODING_THREADS, len(batches))

        def run(batch: list[int]) -> None:
            length = len(encodings[batch[-1]])  # the longest: sorted by length
            ids = np.zeros((len(batch), length), dtype=np.int64)
            mask = np.zeros((len(batch), length), dtype=bool)
            for row, i in enumerate(batch):
                ids[row, : len(encodings[i])] = encodings[i]
                mask[row, : len(encodings[i])] = True
            out[batch] = self._forward(ids, mask)

        with self._blas.limit(limits=1, user_api="blas"):
            if workers <= 1:
                for batch in batches:
                    run(batch)
            else:  # numpy lets go of the GIL in its products and loops: the threads run at once
                with ThreadPoolExecutor(workers, thread_name_prefix="encode") as pool:
                    for _ in pool.map(run, batches):
                        pass
        return out


def _batches(encodings: Sequence[Sequence[int]]) -> list[list[int]]:
    """The texts' indexes sorted by length, cut into batches of at most `_BATCH_TOKENS` tokens
    (padded), the largest first so that threads end together."""
    order = sorted(range(len(encodings)), key=lambda i: len(encodings[i]))
    batches: list[list[int]] = []
    for i in order:
        if batches and (len(batches[-1]) + 1) * len(encodings[i]) <= _BATCH_TOKENS:
            batches[-1].append(i)
        else:
            batches.append([i])
    batches.reverse()
    return batches


def similarities(np: Any, matrix: Any, vector: Any) -> Any:
    """Each row's dot product with `vector` (float32). Not BLAS: OpenBLAS's threads wait on each other
    whenever the cores are busy (10 ms instead of 0.3 at 10,000 tools), and one core streams this
    fast enough."""
    vecdot = getattr(np, "vecdot", None)  # numpy 2; einsum's loop is about 1.5 times slower
    return vecdot(matrix, vector) if vecdot is not None else np.einsum("ij,j->i", matrix, vector)


def _gelu(np: Any, x: Any) -> None:
    """BERT's GELU, x * Φ(x), in place, with erf to within 1.5e-7 (Abramowitz and Stegun 7.1.26).

    With q = erfc(|x| / √2), GELU(x) = max(x, 0) - |x| q / 2. It runs a block at a time, so that its
    twenty passes stay in the core's cache instead of streaming the whole activation each time.
    """
    flat = x.reshape(-1)
    for start in range(0, flat.size, _GELU_BLOCK):
        v = flat[start : start + _GELU_BLOCK]
        a = np.abs(v)
        t = a * np.float32(0.3275911 / np.sqrt(2))
        t += 1
        np.reciprocal(t, out=t)
        q = t * np.float32(1.061405429)
        for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
            q += np.float32(c)
            q *= t
        e = np.square(v)
        e *= np.float32(-0.5)
        np.exp(e, out=e)
        q *= e
        q *= a
        q *= np.float32(0.5)
        np.maximum(v, 0, out=v)
        v -= q


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
            encoder = SentenceEncoder(files, f"{reference.name} {reference.fingerprint()}")
            _LOADED.clear()  # one model at a time: the previous one's weights are let go
            _LOADED[key] = encoder
        return encoder


def encoder_or_reason() -> tuple[SentenceEncoder | None, str | None]:
    """The encoder, or None and why not (one line; None when the extra is simply not installed)."""
    try:
        return sentence_encoder(), None
    except (ModelUnavailable, ModelMismatch) as exc:
        return None, str(exc)
