"""The dense layer: a sentence encoder run with numpy, cached, built in the background.

How the layer works is tested with the tiny generated model (`tiny_model`); what it finds, with
all-MiniLM-L6-v2's published files (`real_model`: fetched as test data, else these tests skip).
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest

from gateway import Catalog, Gateway, Principal
from gateway.search import SearchIndex, semantic_available
from gateway.search import dense as search_dense
from gateway.search import encoder as search_encoder
from gateway.search.models import ModelReference
from gateway.search.semantic import embedding_text
from gateway.settings.loading import load_settings
from services.workspace import CATALOG
from tests import tiny_bert

from ..dense_support import model_in_use

pytestmark = pytest.mark.skipif(
    not (semantic_available() and search_encoder.packages_installed()),
    reason="the 'dense' extra is not installed",
)


def _names(index: SearchIndex, query: str, limit: int = 3) -> list[str]:
    return [d.name for d, _ in index.search(query, limit=limit)]


@pytest.mark.usefixtures("real_model")
def test_sentence_vectors_put_requests_near_what_they_mean() -> None:
    encoder = search_encoder.sentence_encoder()
    assert encoder is not None
    np = encoder.np
    request, event, delete = encoder.encode(
        ["book a meeting with Sam next Tuesday", "Create a calendar event", "Delete a file from storage"]
    )
    assert np.isclose(np.linalg.norm(request), 1.0, atol=1e-5)
    assert request @ event > request @ delete + 0.2
    # A batch gives each text the vector it gets alone (padding is masked out).
    alone = encoder.encode(["book a meeting with Sam next Tuesday"])[0]
    assert np.allclose(alone, request, atol=1e-5)


@pytest.mark.usefixtures("real_model")
def test_the_dense_layer_finds_what_the_words_do_not_say(tmp_path: Path) -> None:
    without = SearchIndex(CATALOG, semantic=True)  # the layer is asked for, never implied
    with_dense = SearchIndex(CATALOG, semantic=True, dense=True, dense_cache_dir=tmp_path)
    assert without.dense is None
    assert with_dense.dense is not None and with_dense.dense.ready  # a small catalog: encoded at once
    query = "have I heard back from the landlord"  # the hybrid finds it too since "have" asks to search
    assert _names(with_dense, query)[0] == "gmail_search_messages"
    assert _names(without, query)[0] == "gmail_search_messages"
    # Filters still hold for the tools the encoder adds.
    assert {d.category for d, _ in with_dense.search(query, categories={"tasks"}, limit=10)} == {"tasks"}


@pytest.mark.usefixtures("tiny_model")
def test_in_a_small_catalog_more_than_a_few_tools_gain_from_the_encoder(tmp_path: Path) -> None:
    # Nine in ten of 27 tools left two or three to gain, each by a lot: the encoder's own first
    # answer then outweighed everything else the request said.
    def gaining(size: int) -> int:
        layer = search_dense.DenseLayer(
            [f"tool number {i} does thing {i * 7}" for i in range(size)], tmp_path
        )
        np = layer.np
        ids = np.arange(size)
        _, scores, _ = layer.rescore(
            "does thing 21",
            ids,
            np.ones(size),
            np.zeros(size, dtype=np.int8),
            keep=None,
            extra=lambda new: new,
        )
        return int((scores > 1 - search_dense.DENSE_WEIGHT + 1e-9).sum())

    assert gaining(27) >= search_dense.MIN_GAINING - 1
    assert gaining(200) <= 200 // 10 + 1  # from 190 tools on, the closest tenth, as before


@pytest.mark.usefixtures("tiny_model")
def test_the_encoder_raises_only_the_tools_it_may_vote_for(tmp_path: Path) -> None:
    layer = search_dense.DenseLayer([f"tool number {i} does thing {i * 7}" for i in range(27)], tmp_path)
    np = layer.np
    ids = np.arange(27)
    voters = np.zeros(27, dtype=bool)
    voters[[3, 5]] = True
    _, scores, _ = layer.rescore(
        "does thing 21",
        ids,
        np.ones(27),
        np.zeros(27, dtype=np.int8),
        keep=None,
        extra=lambda new: new,
        voters=voters,
    )
    # Every other tool keeps its hybrid share alone, however close the encoder finds it.
    assert np.allclose(scores[~voters], 1 - search_dense.DENSE_WEIGHT)
    assert (scores[voters] > 1 - search_dense.DENSE_WEIGHT).any()


@pytest.mark.usefixtures("real_model")
def test_the_encoder_does_not_outvote_the_action_a_request_asks(tmp_path: Path) -> None:
    # The encoder finds this request nearest the quick-add tool, which makes a new event; the
    # words ask to change one.
    query = "can you move lunch with Ana to 1"
    with_dense = SearchIndex(CATALOG, semantic=True, dense=True, dense_cache_dir=tmp_path)
    assert _names(with_dense, query, 1) == ["calendar_update_event"]
    assert _names(SearchIndex(CATALOG, semantic=True), query, 1) == ["calendar_update_event"]


@pytest.mark.usefixtures("tiny_model")
def test_the_layer_needs_the_semantic_layer() -> None:
    with pytest.raises(ValueError, match="semantic=True"):
        SearchIndex(CATALOG, semantic=False, dense=True)


@pytest.mark.usefixtures("tiny_model")
def test_a_large_catalog_is_encoded_in_the_background_and_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = ("what do I have on tomorrow", "let my boss know I'm running late")
    monkeypatch.setattr(search_dense, "_READY", weakref.WeakSet())  # other tests' layers lend no rows
    monkeypatch.setattr(search_dense, "DENSE_SYNC_LIMIT", 2)
    built = SearchIndex(CATALOG, semantic=True, dense=True, dense_cache_dir=tmp_path)
    layer = built.dense
    assert layer is not None
    assert layer.wait(timeout=300)
    (cached,) = tmp_path.glob("dense-*.npy")
    background = {q: _names(built, q, 10) for q in queries}
    del built, layer
    gc.collect()  # no layer of these texts is left in the process: the next one reads the file
    # The next index of the same texts loads the vectors: ready at once, the same rankings.
    again = SearchIndex(CATALOG, semantic=True, dense=True, dense_cache_dir=tmp_path)
    assert again.dense is not None and again.dense.ready
    assert {q: _names(again, q, 10) for q in queries} == background
    del again
    gc.collect()
    monkeypatch.setattr(search_dense, "DENSE_SYNC_LIMIT", 256)
    sync = SearchIndex(CATALOG, semantic=True, dense=True)  # no cache, encoded before use
    assert sync.dense is not None and sync.dense.ready
    assert {q: _names(sync, q, 10) for q in queries} == background
    del sync
    gc.collect()
    # A damaged cache file costs an encoding, never an error.
    cached.write_bytes(b"damaged")
    rebuilt = SearchIndex(CATALOG, semantic=True, dense=True, dense_cache_dir=tmp_path)
    assert rebuilt.dense is not None and rebuilt.dense.ready
    assert {q: _names(rebuilt, q, 10) for q in queries} == background


@pytest.mark.usefixtures("tiny_model")
def test_a_subset_of_a_catalog_takes_its_vectors_from_the_catalogs_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = SearchIndex(CATALOG, semantic=True, dense=True)
    assert whole.dense is not None and whole.dense.ready
    encoder = whole.dense.encoder

    def no_encoding(texts: object) -> None:
        raise AssertionError("encoded again")

    calendar = [d for d in CATALOG if d.category == "calendar"]
    with monkeypatch.context() as patched:
        patched.setattr(encoder, "encode", no_encoding)
        subset = SearchIndex(calendar, semantic=True, dense=True, dense_cache_dir=tmp_path)
    assert subset.dense is not None and subset.dense.ready
    rows = [whole.dense._rows[embedding_text(d)] for d in sorted(calendar, key=lambda d: d.name)]
    assert (subset.dense.matrix == whole.dense.matrix[rows]).all()
    assert not list(tmp_path.iterdir())  # nothing encoded, nothing to cache


@pytest.mark.usefixtures("tiny_model")
def test_cached_vector_files_are_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_dense, "MAX_CACHED_MATRICES", 2)
    for category in ("calendar", "gmail", "tasks"):
        SearchIndex([d for d in CATALOG if d.category == category], semantic=True, dense=True)  # not cached
        search_dense.DenseLayer([f"{category} one", f"{category} two"], tmp_path)
    assert len(list(tmp_path.glob("dense-*.npy"))) == 2


@pytest.mark.usefixtures("tiny_model")
def test_an_encoding_whose_index_is_gone_stops_and_saves_nothing(tmp_path: Path) -> None:
    encoder = search_encoder.sentence_encoder()
    assert encoder is not None
    layer = search_dense.DenseLayer([], tmp_path)  # empty: ready at once, nothing to encode
    ref = weakref.ref(layer)
    del layer
    before = set(tmp_path.iterdir())
    search_dense._build(ref, encoder, [embedding_text(d) for d in CATALOG])
    assert set(tmp_path.iterdir()) == before


@pytest.mark.usefixtures("real_model")
def test_settings_turn_the_layer_on_and_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text('[search]\ndense = "off"\n')
    monkeypatch.delenv("GATEWAY_DENSE", raising=False)
    assert load_settings(config).search.dense.mode == "off"
    monkeypatch.setenv("GATEWAY_DENSE", "on")
    assert load_settings(config).search.dense.mode == "on"
    monkeypatch.delenv("GATEWAY_DENSE")
    config.write_text('[search]\ndense = "sometimes"\n')
    with pytest.raises(Exception, match="dense"):
        load_settings(config)
    auto = Gateway(Catalog(CATALOG), dense=None, search_cache_dir=False)
    assert auto.indexes.dense is None  # decided by the first search: the model is not loaded before
    assert auto.index(Principal()).dense is not None and auto.indexes.dense is True
    on = Gateway(Catalog(CATALOG), dense=True, search_cache_dir=False)
    off = Gateway(Catalog(CATALOG), search_cache_dir=False)  # a library Gateway: off unless asked
    assert on.index(Principal()).dense is not None
    assert off.index(Principal()).dense is None
    page = on.discover(Principal(), query="what do I have on tomorrow", limit=3)
    assert page["tools"][0]["name"] == "calendar_list_events"


def test_a_layer_of_another_model_lends_no_vectors(
    tiny_model: ModelReference, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = SearchIndex(CATALOG, semantic=True, dense=True)
    assert whole.dense is not None and whole.dense.ready
    other = tiny_bert.write(tmp_path / "other", seed=8)  # same shape, other weights
    calendar = [d for d in CATALOG if d.category == "calendar"]
    with model_in_use(other):
        subset = SearchIndex(calendar, semantic=True, dense=True)
    assert subset.dense is not None and subset.dense.encoder.model_id != whole.dense.encoder.model_id
    rows = [whole.dense._rows[embedding_text(d)] for d in sorted(calendar, key=lambda d: d.name)]
    assert not (subset.dense.matrix == whole.dense.matrix[rows]).all()


@pytest.mark.usefixtures("tiny_model")
def test_a_stopped_encoding_is_taken_up_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An encoding that ends early (here: its fourth chunk fails, as a killed process would stop)
    leaves its first three chunks in a partial file; the next encoding of the same texts encodes
    only the rest, and its vectors are those of an encoding in one go."""
    monkeypatch.setattr(search_dense, "_READY", weakref.WeakSet())
    monkeypatch.setattr(search_dense, "DENSE_SYNC_LIMIT", 2)
    monkeypatch.setattr(search_dense, "_CHUNK", 4)
    monkeypatch.setattr(search_dense, "PARTIAL_SECONDS", 0.0)
    texts = [embedding_text(d) for d in sorted(CATALOG, key=lambda d: d.name)]
    encoder = search_encoder.sentence_encoder()
    assert encoder is not None
    whole = encoder.encode(texts)
    original = encoder.encode
    encoded: list[int] = []

    def stops_after(chunks: int) -> Any:
        def encode(batch: Any, threads: int | None = None) -> Any:
            if len(encoded) == chunks:
                raise RuntimeError("stopped")
            encoded.append(len(batch))
            return original(batch, threads)

        return encode

    monkeypatch.setattr(encoder, "encode", stops_after(3))
    first = search_dense.DenseLayer(texts, tmp_path)
    assert not first.wait(timeout=300)  # it stopped: not ready
    assert [p.name.endswith(".partial.npy") for p in tmp_path.glob("dense-*")] == [True]
    del first
    gc.collect()
    encoded.clear()
    monkeypatch.setattr(encoder, "encode", stops_after(100))
    second = search_dense.DenseLayer(texts, tmp_path)
    assert second.wait(timeout=300)
    assert sum(encoded) == len(texts) - 12  # three chunks of four were done already
    assert encoder.np.allclose(second.matrix, whole, atol=1e-6)
    assert [p.name.endswith(".partial.npy") for p in tmp_path.glob("dense-*")] == [
        False
    ]  # the whole file only


def test_a_layer_encodes_tools_and_requests_with_their_prefixes_and_caches_each_shape_apart(
    tiny_model_dir: Path, verified_record: Path, tmp_path: Path
) -> None:
    """e5's way: "passage: " before each tool's text, "query: " before each request. A cache written
    under one pooling or prefix is never read under another."""
    import dataclasses

    texts = ["Create a calendar event", "Delete a file from storage", "Send an email"]
    plain = tiny_bert.reference(tiny_model_dir)
    e5_like = dataclasses.replace(plain, query_prefix="query: ", document_prefix="passage: ")
    with model_in_use(plain):
        encoder = search_encoder.sentence_encoder()
        assert encoder is not None
        expected_rows = encoder.encode([f"passage: {t}" for t in texts])
        expected_query = encoder.encode(["query: book a meeting"])[0]
        search_dense.DenseLayer(texts, tmp_path)
    with model_in_use(e5_like):
        layer = search_dense.DenseLayer(texts, tmp_path)
        assert layer.ready and layer.encoder.np.allclose(layer.matrix, expected_rows, atol=1e-6)
        assert layer.encoder.np.allclose(layer.query("book a meeting"), expected_query, atol=1e-6)
    with model_in_use(dataclasses.replace(plain, pooling="cls")):
        search_dense.DenseLayer(texts, tmp_path)
    assert len(list(tmp_path.glob("dense-*.npy"))) == 3
