"""The encoder's forward pass: texts laid end to end in packs, attention per text, softmax kept exact.

These tests use the tiny generated BERT (tests/tiny_bert.py): a text's vector must not depend on the
texts encoded with it, on how they are packed, or on the threads that encode them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.search import encoder as search_encoder
from gateway.search.models import ModelReference
from tests import tiny_bert

from ..dense_support import model_in_use

np = pytest.importorskip("numpy")
pytest.importorskip("tokenizers")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

# Lengths that repeat (attended together) and differ (packed end to end), one at the model's limit.
TEXTS = [
    "book a meeting with Sam next Tuesday",
    "delete a file",
    "x",
    "send a reply",
    "read my mail",
    "list every task due next week and move the late ones to Friday",
    "who can see this file",
    "create a new calendar for the team",
    " ".join(["meeting"] * 200),
    "y",
]


def _alone(encoder: search_encoder.SentenceEncoder) -> list[object]:
    return [encoder.encode([text])[0] for text in TEXTS]


def test_a_texts_vector_does_not_depend_on_the_texts_packed_with_it(tiny_model: ModelReference) -> None:
    encoder = search_encoder.sentence_encoder()
    assert encoder is not None
    together = encoder.encode(TEXTS)
    for i, vector in enumerate(_alone(encoder)):
        assert np.allclose(together[i], vector, atol=1e-6)


def test_many_small_packs_on_two_threads_give_the_same_vectors_in_order(
    tiny_model: ModelReference, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = search_encoder.sentence_encoder()
    assert encoder is not None
    alone = _alone(encoder)
    monkeypatch.setattr(search_encoder, "_PACK_TOKENS", 12)  # a pack is a text or two
    monkeypatch.setattr(search_encoder, "_SCORES_BYTES", 1)  # and its texts attend one at a time
    vectors = encoder.encode(TEXTS * 3, threads=2)
    for i, vector in enumerate(vectors):
        assert np.allclose(vector, alone[i % len(TEXTS)], atol=1e-6)


def test_attention_scores_too_large_or_small_for_exp_change_no_vector(
    tiny_model: ModelReference, tmp_path: Path
) -> None:
    """A key bias adds the same q·b to every score of a query's row: the softmax, and so the vectors,
    do not change; scores of ±hundreds overflow exp or vanish under it unless the row's maximum is
    subtracted first."""
    encoder = search_encoder.sentence_encoder()
    assert encoder is not None
    alone = _alone(encoder)
    directory = tmp_path / "shifted"
    tiny_bert.write(directory)
    tensors = safetensors_numpy.load_file(str(directory / "model.safetensors"))
    for n in range(tiny_bert.LAYERS):
        bias = f"encoder.layer.{n}.attention.self.key.bias"
        tensors[bias] = (tensors[bias] * 2000).astype(np.float32)
    safetensors_numpy.save_file(tensors, str(directory / "model.safetensors"), metadata={"format": "pt"})
    with model_in_use(tiny_bert.reference(directory)):
        shifted = search_encoder.sentence_encoder()
        assert shifted is not None
        vectors = shifted.encode(TEXTS)
    for i, vector in enumerate(vectors):
        assert np.allclose(vector, alone[i], atol=1e-4)
