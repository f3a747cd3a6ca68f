"""What makes search fast at scale keeps its answers: numpy scoring, the index cache, the prefix shortlist."""

from __future__ import annotations

import dataclasses
import itertools
import logging
from array import array
from pathlib import Path
from typing import Any

import pytest

from gateway import (
    Catalog,
    Gateway,
    NoParams,
    Principal,
    ToolDefinition,
)
from gateway.search import SearchIndex, numpy_available, postings, semantic_available
from gateway.search import cache as search_cache
from gateway.search import semantic as search_semantic
from gateway.search.cache import MAX_CACHED_INDEXES, IndexParts, Vocabulary
from tests.discovery_answers import as_page

needs_numpy = pytest.mark.skipif(not numpy_available(), reason="numpy is not installed")
needs_semantic = pytest.mark.skipif(not semantic_available(), reason="the 'search' extra is not installed")

_NOUNS = ["event", "calendar", "message", "file", "folder", "invoice", "ticket", "user", "repo", "issue"]
_VERBS = [("create", "create"), ("delete", "delete"), ("list", "list"), ("get", "read"), ("send", "send")]
_SERVICES = ["acme", "globex", "initech", "umbrella", "hooli", "stark"]


def _catalog(copies: int = 1) -> list[ToolDefinition]:
    """A few hundred tools with overlapping words, so scores tie and postings are long."""
    tools = []
    for copy, service, noun, (verb, action) in itertools.product(range(copies), _SERVICES, _NOUNS, _VERBS):
        suffix = f"_{copy}" if copy else ""
        tools.append(
            ToolDefinition(
                name=f"{service}_{noun}_{verb}{suffix}",
                category=service,
                action=action,
                verb=verb,
                summary=f"{verb.capitalize()} a {noun} in {service.capitalize()}.",
                description=f"{verb.capitalize()} a {noun} in {service.capitalize()}; works on every {noun}.",
                params=NoParams,
                handler=lambda p: None,
            )
        )
    return tools


TOOLS = _catalog()
QUERIES = [
    "delete an event",
    "send a message to a user",
    "list files in a folder",
    "remove the invoice",
    "acme",
    "acme_event",
    "acme_event_get",
    "calender evnt",
    "what's on my calendar",
    "ticket issue repo user folder file message invoice calendar event",
    "nothing matches xylophone",
]


def _names(hits: list[tuple[ToolDefinition, float]]) -> list[str]:
    return [d.name for d, _ in hits]


@needs_numpy
@pytest.mark.parametrize("query", QUERIES)
def test_numpy_and_python_scoring_return_the_same_pages_scores_and_totals(query: str) -> None:
    python = SearchIndex(TOOLS, semantic=False, vectorized=False)
    vectorized = SearchIndex(TOOLS, semantic=False, vectorized=True)
    filters: tuple[dict[str, Any], ...] = (
        {},
        {"categories": {"acme", "hooli"}},
        {"actions": {"delete"}},
        {"allowed": {d.name for d in TOOLS[::3]}},
    )
    for kwargs in filters:
        for offset, limit in ((0, 10), (7, 5), (0, None)):
            assert python.page(query, offset=offset, limit=limit, **kwargs) == vectorized.page(
                query, offset=offset, limit=limit, **kwargs
            )


def test_without_numpy_the_index_builds_and_ranks_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    with_numpy = SearchIndex(TOOLS, semantic=False)
    monkeypatch.setattr(postings, "_NUMPY", [None])  # as on a core install
    without = SearchIndex(TOOLS, semantic=False)
    assert not numpy_available()
    for query in QUERIES:
        assert without.page(query, limit=10) == with_numpy.page(query, limit=10)
    with pytest.raises(ImportError, match="fast"):
        SearchIndex(TOOLS, semantic=False, vectorized=True)


def test_a_cached_index_ranks_like_a_built_one(tmp_path: Path) -> None:
    built = SearchIndex(TOOLS, semantic=False)
    first = SearchIndex.load_or_build(TOOLS, tmp_path, semantic=False, min_tools=0)
    files = list(tmp_path.iterdir())
    assert len(files) == 1
    loaded = SearchIndex.load_or_build(reversed(TOOLS), tmp_path, semantic=False, min_tools=0)
    assert list(tmp_path.iterdir()) == files
    for query in QUERIES:
        assert built.page(query, limit=10) == first.page(query, limit=10) == loaded.page(query, limit=10)


def test_any_change_to_a_tools_text_builds_a_new_index(tmp_path: Path) -> None:
    SearchIndex.load_or_build(TOOLS, tmp_path, semantic=False, min_tools=0)
    changed = [*TOOLS[:-1], dataclasses.replace(TOOLS[-1], description="Sing a song.")]
    index = SearchIndex.load_or_build(changed, tmp_path, semantic=False, min_tools=0)
    assert len(list(tmp_path.iterdir())) == 2
    assert _names(index.search("sing a song"))[0] == TOOLS[-1].name


def test_a_damaged_cache_file_is_rebuilt_quietly(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    SearchIndex.load_or_build(TOOLS, tmp_path, semantic=False, min_tools=0)
    (path,) = tmp_path.iterdir()
    data = path.read_bytes()
    for damaged in (b"", b"not an index", data[: len(data) // 2], data[:-40] + b"\xff" * 40):
        path.write_bytes(damaged)
        with caplog.at_level(logging.WARNING, logger="gateway.search.cache"):
            index = SearchIndex.load_or_build(TOOLS, tmp_path, semantic=False, min_tools=0)
        assert _names(index.search("delete an event", categories={"acme"}))[0] == "acme_event_delete"
    assert path.read_bytes() == data  # rebuilt and written again


def test_an_unwritable_cache_costs_a_build_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    index = SearchIndex.load_or_build(TOOLS, blocker / "cache", semantic=False, min_tools=0)
    assert _names(index.search("acme_event_get"))[0] == "acme_event_get"


def test_small_catalogs_are_not_cached_and_old_files_are_pruned(tmp_path: Path) -> None:
    SearchIndex.load_or_build(TOOLS, tmp_path, semantic=False)  # fewer than CACHE_MIN_TOOLS
    assert list(tmp_path.iterdir()) == []
    for n in range(MAX_CACHED_INDEXES + 2):
        SearchIndex.load_or_build(TOOLS[n:], tmp_path, semantic=False, min_tools=0)
    assert len(list(tmp_path.iterdir())) == MAX_CACHED_INDEXES


def test_the_gateway_caches_a_large_catalogs_index_where_it_is_told(tmp_path: Path) -> None:
    catalog = Catalog(_catalog(copies=7))  # 2,100 tools: over CACHE_MIN_TOOLS
    gateway = Gateway(catalog, search_cache_dir=tmp_path)
    out = as_page(gateway.discover(Principal(), query="delete an event", categories=["acme"], limit=3))
    assert out["tools"][0]["name"] == "acme_event_delete"
    # The tools that match the request's words, with or without the semantic layer.
    lexical = SearchIndex(catalog, semantic=False).page("delete an event", categories={"acme"}, limit=1)[1]
    assert out["total"] == lexical
    assert len(list(tmp_path.iterdir())) == 1
    again = Gateway(catalog, search_cache_dir=tmp_path).discover(
        Principal(), query="delete an event", categories=["acme"], limit=3
    )
    assert again == out
    uncached = Gateway(catalog, search_cache_dir=False)
    assert uncached.discover(Principal(), query="delete an event", categories=["acme"], limit=3) == out


@needs_semantic
def test_a_cached_hybrid_index_ranks_like_a_built_one(tmp_path: Path) -> None:
    built = SearchIndex(TOOLS, semantic=True)
    SearchIndex.load_or_build(TOOLS, tmp_path, semantic=True, min_tools=0)
    loaded = SearchIndex.load_or_build(TOOLS, tmp_path, semantic=True, min_tools=0)
    assert loaded.semantic and loaded._vectors is not None
    assert loaded._vectors.matrix.flags.aligned  # read in place, at an aligned offset of the file
    for query in QUERIES:
        assert _names(built.search(query, limit=10)) == _names(loaded.search(query, limit=10))


@needs_semantic
def test_a_cached_index_embeds_queries_in_its_own_words_without_the_tokenizer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    SearchIndex.load_or_build(TOOLS, tmp_path, semantic=True, min_tools=0)
    monkeypatch.setattr(search_semantic, "_EMBEDDER", [])  # a new process: nothing tokenised yet
    loaded = SearchIndex.load_or_build(TOOLS, tmp_path, semantic=True, min_tools=0)
    fresh = search_semantic.embedder()
    assert fresh is not None and loaded._vectors is not None and loaded._vectors.vocabulary is not None
    known = "delete every message in globex"  # words the catalog's texts use
    hits = loaded.search(known, limit=3)
    assert "tokenizer" not in vars(fresh) and _names(hits)[0] == "globex_message_delete"
    loaded.search("shred every message", limit=3)  # a word the catalog never uses
    assert "tokenizer" in vars(fresh)
    reference = search_semantic.Embedder()  # tokenises everything itself
    for text in (known, "shred every message", ""):
        assert (fresh.encode([text], loaded._vectors.vocabulary) == reference.encode([text])).all()


@needs_semantic
def test_a_text_vector_is_the_normalised_sum_of_its_token_vectors() -> None:
    embedder = search_semantic.Embedder()
    np = embedder.np
    text = "Create a calendar event  with attendees"
    ids = [i for word in text.split() for i in embedder.tokenizer.encode(word, add_special_tokens=False).ids]
    total = embedder.table.astype(np.float32)[ids].sum(axis=0)
    assert np.allclose(embedder.encode([text])[0], total / np.linalg.norm(total), atol=1e-6)


@needs_semantic
def test_the_prefix_shortlist_of_large_catalogs_keeps_names_filters_and_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exact = SearchIndex(TOOLS, semantic=True)
    monkeypatch.setattr(search_semantic, "SEMANTIC_EXACT_LIMIT", 10)
    shortlisted = SearchIndex(TOOLS, semantic=True)
    assert shortlisted._vectors is not None and shortlisted._vectors.prefix is not None
    for query in QUERIES:
        assert _names(shortlisted.search(query, limit=10)) == _names(exact.search(query, limit=10))
        hits, total = shortlisted.page(query, categories={"globex"}, actions={"delete"}, limit=5)
        assert {(d.category, d.action) for d, _ in hits} <= {("globex", "delete")}
        assert total == exact.page(query, categories={"globex"}, actions={"delete"}, limit=5)[1]
    assert _names(shortlisted.search("acme_event_get"))[0] == "acme_event_get"
    assert shortlisted.search("nothing matches xylophone") == []


@pytest.mark.parametrize("with_numpy", [True, False])
def test_inconsistent_cached_arrays_are_refused(monkeypatch: pytest.MonkeyPatch, with_numpy: bool) -> None:
    if not with_numpy:
        monkeypatch.setattr(search_cache, "_numpy", lambda: None)
    elif not numpy_available():
        pytest.skip("numpy is not installed")

    def parts(starts: list[int], ids: list[int], word_starts: tuple[int, ...] = (0, 1)) -> IndexParts:
        vocabulary = Vocabulary(["w"], array("I", word_starts), array("I", [7]))
        return IndexParts(
            ["a", "b"], array("q", starts), array("I", ids), array("f", [1.0] * len(ids)), None, vocabulary
        )

    assert parts([0, 1, 2], [0, 2]).check(tools=3)
    assert not parts([0, 1, 2], [0, 3]).check(tools=3)  # a tool that does not exist
    assert not parts([0, 2, 1], [0, 1]).check(tools=3)  # runs out of order
    assert not parts([0, 1, 2], [0, 1], word_starts=(1, 0)).check(tools=3)


@needs_semantic
def test_a_word_keeps_every_token_id_in_the_vocabulary() -> None:
    embedder = search_semantic.Embedder()
    long_word = "q7zx" * 300  # one word with no space, more tokens than a text's cut
    vocabulary = embedder.vocabulary([f"short {long_word}", "short"])
    ids = embedder.tokenizer.encode(long_word, add_special_tokens=False).ids
    assert len(ids) > search_semantic._EMBED_MAX_TOKENS
    assert vocabulary.words == sorted(["short", long_word]) and vocabulary.get(long_word) == ids


@needs_semantic
def test_cached_vectors_or_token_ids_of_another_model_are_not_used() -> None:
    embedder = search_semantic.Embedder()
    np = embedder.np
    vectors = np.zeros((2, embedder.dims), dtype=np.float32)
    words = Vocabulary(["w"], array("I", [0, 1]), array("I", [5]))
    assert embedder.fits(vectors, words)
    assert not embedder.fits(np.zeros((2, embedder.dims + 1), dtype=np.float32), words)
    assert not embedder.fits(
        vectors, Vocabulary(["w"], array("I", [0, 1]), array("I", [len(embedder.table)]))
    )
    assert not embedder.fits(None, words)


@needs_numpy
def test_rank_weights_rank_the_same_on_both_scoring_paths() -> None:
    weighted = [dataclasses.replace(d, rank_weight=0.75) if i % 3 == 0 else d for i, d in enumerate(TOOLS)]
    python = SearchIndex(weighted, semantic=False, vectorized=False)
    vectorized = SearchIndex(weighted, semantic=False, vectorized=True)
    plain = SearchIndex(TOOLS, semantic=False)
    for query in QUERIES:
        for limit in (1, 3, 10):
            assert python.page(query, limit=limit) == vectorized.page(query, limit=limit)
    hits = dict((d.name, s) for d, s in python.search("delete an event"))
    base = dict((d.name, s) for d, s in plain.search("delete an event"))
    scaled = [d.name for i, d in enumerate(TOOLS) if i % 3 == 0 and d.name in base]
    assert scaled and all(hits[name] == base[name] * 0.75 for name in scaled)
