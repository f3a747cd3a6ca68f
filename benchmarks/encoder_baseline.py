"""Today's forward pass of the sentence encoder, kept verbatim as the baseline of `encoder_speed`.

This is `gateway.search.encoder.SentenceEncoder`'s forward pass as it was before encoding was made
faster (one thread, batches of 32 texts, GELU over whole arrays), run on the same loaded weights:
`benchmarks.encoder_speed` times both in one process and compares their vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gateway.search.encoder import SentenceEncoder

_BATCH = 32


class TodaysEncoder(SentenceEncoder):
    """The encoder with the forward pass and batching it had before (same weights, same tokenizer)."""

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
            h = _todays_gelu(np, self._linear(x, p + "intermediate.dense"))
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


def _todays_gelu(np: Any, x: Any) -> Any:
    """BERT's GELU, x * Φ(x), with erf to within 1.5e-7 (Abramowitz and Stegun 7.1.26)."""
    z = np.abs(x) * np.float32(1 / np.sqrt(2))
    t = 1 / (1 + np.float32(0.3275911) * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = np.sign(x) * (1 - poly * np.exp(-z * z))
    return (x * (1 + erf) * 0.5).astype(np.float32)
