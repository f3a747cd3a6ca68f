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
import logging
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .models import DEFAULT_MODEL, ModelMismatch, ModelReference, ModelUnavailable, verified

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
_BATCH = 32
_log = logging.getLogger(__name__)


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
        # Small matrix products are fastest on one BLAS thread, and a busy machine makes BLAS threads
        # wait on each other (measured once, both cores loaded: a request 19 ms on two threads, 9 on
        # one); a background encoding on one thread also leaves the other core to the searches.
        self._blas = importlib.import_module("threadpoolctl").ThreadpoolController()
        self.tokenizer = tokenizers.Tokenizer.from_file(str(files["tokenizer.json"]))
        self.tokenizer.enable_truncation(
            min(MAX_TOKENS, int(config.get("max_position_embeddings", MAX_TOKENS)))
        )
        self.tokenizer.no_padding()

    def _norm(self, x: Any, prefix: str) -> Any:
        np = self.np
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def _linear(self, x: Any, prefix: str) -> Any:
        return x @ self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def _forward(self, ids: Any, mask: Any) -> Any:
        np, w = self.np, self.w
        batch, length = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
        x = self._norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        size = self.dims // self.heads
        bias = np.where(mask[:, None, None, :], 0.0, -1e9).astype(np.float32)

        def split(t: Any) -> Any:
            return t.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        for n in range(self.layers):
            p = f"encoder.layer.{n}."
            q = split(self._linear(x, p + "attention.self.query"))
            k = split(self._linear(x, p + "attention.self.key"))
            v = split(self._linear(x, p + "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(size)) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.dims)
            x = self._norm(
                x + self._linear(context, p + "attention.output.dense"), p + "attention.output.LayerNorm"
            )
            h = _gelu(np, self._linear(x, p + "intermediate.dense"))
            x = self._norm(x + self._linear(h, p + "output.dense"), p + "output.LayerNorm")
        m = mask[:, :, None].astype(np.float32)
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def encode(self, texts: Sequence[str]) -> Any:
        """One float32 unit vector a text, in order (texts of like length are run together)."""
        np = self.np
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        with self._blas.limit(limits=1, user_api="blas"):
            self._batches(encodings, order, out)
        return out

    def _batches(self, encodings: Sequence[Any], order: Sequence[int], out: Any) -> None:
        np = self.np
        for start in range(0, len(order), _BATCH):
            chunk = order[start : start + _BATCH]
            length = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=bool)
            for row, i in enumerate(chunk):
                e = encodings[i].ids
                ids[row, : len(e)] = e
                mask[row, : len(e)] = True
            out[chunk] = self._forward(ids, mask)


def similarities(np: Any, matrix: Any, vector: Any) -> Any:
    """Each row's dot product with `vector` (float32). Not BLAS: OpenBLAS's threads wait on each other
    whenever the cores are busy (10 ms instead of 0.3 at 10,000 tools), and one core streams this
    fast enough."""
    vecdot = getattr(np, "vecdot", None)  # numpy 2; einsum's loop is about 1.5 times slower
    return vecdot(matrix, vector) if vecdot is not None else np.einsum("ij,j->i", matrix, vector)


def _gelu(np: Any, x: Any) -> Any:
    """BERT's GELU, x * Φ(x), with erf to within 1.5e-7 (Abramowitz and Stegun 7.1.26)."""
    z = np.abs(x) * np.float32(1 / np.sqrt(2))
    t = 1 / (1 + np.float32(0.3275911) * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = np.sign(x) * (1 - poly * np.exp(-z * z))
    return (x * (1 + erf) * 0.5).astype(np.float32)


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
