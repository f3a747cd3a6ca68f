"""The optional semantic layer of search: static word embeddings blended into the lexical score.

Installed with the `search` extra (wordllama, numpy, tokenizers, safetensors). WordLlama's weights and
tokenizer are files inside its wheel and are opened directly, so nothing is ever downloaded. A text's
vector is the normalised sum of its token vectors, each weighed down by how often the catalog uses it
(`Embedder.token_weights`); a query's similarity to every tool is one
matrix-vector product over a contiguous float32 matrix. Above `SEMANTIC_EXACT_LIMIT` tools, a
64-dimension prefix of the vectors (WordLlama is trained so that prefixes are embeddings too)
shortlists the tools worth an exact 256-dimension score.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
from array import array
from collections import ChainMap, Counter
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Any

from ..definition import ToolDefinition
from .cache import Vocabulary, largest
from .dense import DenseLayer
from .encoder import similarities
from .models import unlike_pins
from .text import words

SEMANTIC_WEIGHT = 0.6
"""Share of the embedding similarity in a hybrid score (the rest is the lexical score)."""
SEMANTIC_CANDIDATES = 100
"""Tools closest in meaning that join the lexical matches when the semantic layer is on."""
SIF_A = 0.01
"""A token's weight in a text's vector is `SIF_A / (SIF_A + p)`, p its frequency in the catalog's texts."""
SEMANTIC_EXACT_LIMIT = 20_000
"""Up to this many tools every similarity is exact; above it a 64-dimension prefix shortlists."""
_PREFIX_DIMS = 64
_POOL = 4 * SEMANTIC_CANDIDATES  # prefix-closest tools scored exactly for the semantic candidates
_SHORTLIST = 200  # lexical matches scored exactly (at least; more for deep pages)
_LOW_SAMPLE = 2048  # an even sample of at most this many tools sets the low end of the scale
_EMBED_MAX_TOKENS = 512
_EMBED_CHUNK_TOKENS = 1 << 14  # 16 MiB of gathered rows, reused: no page faults
_MAX_CACHED_WORDS = 200_000
_MAX_CACHED_QUERIES = 16  # requests whose token rows are remembered (at most 512 KiB each)

WORDLLAMA_FILES = {
    "tokenizers/l2_supercat_tokenizer_config.json": "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68",
    "weights/l2_supercat_256.safetensors": "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5",
}
"""sha256 of the two files of the wordllama wheel the embedder reads, as wordllama 0.4.0.post1 ships
them (its wheel pinned by hash in requirements-dev.lock): a release with other vectors, or an edited
file, is refused rather than silently changing every ranking and cached index."""

_log = logging.getLogger("gateway")


class Embedder:
    """Static word embeddings (WordLlama l2_supercat, 256 dimensions) from inside the wordllama wheel.

    Texts are tokenised word by word (the tokenizer never merges across a space), and each distinct
    word only once: a catalog repeats its words, and tokenising whole texts costs seconds.
    """

    def __init__(self) -> None:
        self.np: Any = importlib.import_module("numpy")
        self._tokenizers: Any = importlib.import_module("tokenizers")
        safetensors: Any = importlib.import_module("safetensors")
        root = _package_dir("wordllama")
        files = {root / name: digest for name, digest in WORDLLAMA_FILES.items()}
        missing = [str(path) for path in files if not path.is_file()]
        if missing:
            raise OSError(f"{', '.join(missing)} missing")
        unlike = unlike_pins(files)
        if unlike:
            raise OSError(f"wordllama's files are not the pinned ones: {'; '.join(unlike)}")
        self._tokenizer_file = root / "tokenizers" / "l2_supercat_tokenizer_config.json"
        weights = root / "weights" / "l2_supercat_256.safetensors"
        with safetensors.safe_open(str(weights), framework="np") as f:
            # Kept as stored (float16): rows are widened to float32 as they are summed.
            self.table = f.get_tensor("embedding.weight")
        self.model_id = f"wordllama l2_supercat {self.table.shape[0]}x{self.dims} {weights.stat().st_size}"
        """Names the vectors this embedder makes: part of a cached index's key."""
        self._ids: dict[str, list[int]] = {}
        self._queries: dict[str, tuple[Any, Any]] = {}  # request -> its token ids and float32 rows

    @property
    def dims(self) -> int:
        return int(self.table.shape[1])

    def fits(self, vectors: Any, vocabulary: Vocabulary | None) -> bool:
        """Whether cached vectors and token ids can be this embedder's (else the index is rebuilt)."""
        return (
            vectors is not None
            and vectors.shape[1] == self.dims
            and (vocabulary is None or not vocabulary.ids or largest(vocabulary.ids) < len(self.table))
        )

    @cached_property
    def tokenizer(self) -> Any:
        """Loaded on the first word no vocabulary knows: parsing it is most of the embedder's start-up."""
        tokenizer = self._tokenizers.Tokenizer.from_file(str(self._tokenizer_file))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        return tokenizer

    def _lookup(self, words: Iterable[str], vocabulary: Vocabulary | None) -> Callable[[str], list[int]]:
        """Token ids by word for at least `words`: each new word is tokenised once, and not at all when
        `vocabulary` knows it."""
        known = self._ids
        lookup = known.__getitem__
        new = sorted({w for w in words if w not in known})
        if new and vocabulary is not None:
            for word in new:
                found = vocabulary.get(word)
                if found is not None:
                    known[word] = found
            new = [w for w in new if w not in known]
        if new:
            encoded = self.tokenizer.encode_batch(new, add_special_tokens=False)
            fresh = dict(zip(new, (e.ids for e in encoded), strict=True))
            if len(known) + len(fresh) <= _MAX_CACHED_WORDS:
                known.update(fresh)
            else:  # a stream of unseen words (hostile queries) must not grow memory without bound
                lookup = ChainMap(fresh, known).__getitem__
        return lookup

    def _token_ids(self, texts: Sequence[str], vocabulary: Vocabulary | None = None) -> tuple[Any, Any]:
        """Token ids of every text (at most `_EMBED_MAX_TOKENS` each), flat, and where each text starts."""
        np = self.np
        split = [t.split() for t in texts]
        lookup = self._lookup(chain.from_iterable(split), vocabulary)
        flat: list[int] = []
        bounds = [0]
        for ws in split:
            ids = list(chain.from_iterable(map(lookup, ws)))
            flat.extend(ids[:_EMBED_MAX_TOKENS])
            bounds.append(len(flat))
        return np.asarray(flat, dtype=np.intp), np.asarray(bounds, dtype=np.intp)

    def vocabulary(self, texts: Sequence[str]) -> Vocabulary:
        """The token ids of every word of `texts` and how often it occurs, to save beside their vectors."""
        counted = Counter(w for t in texts for w in t.split())
        words = sorted(counted)
        lookup = self._lookup(words, None)
        starts, ids = array("I", [0]), array("I")
        for word in words:  # every id of a word, however long it is (texts are cut, words are not)
            ids.extend(lookup(word))
            starts.append(len(ids))
        return Vocabulary(words, starts, ids, array("I", (counted[w] for w in words)))

    def token_weights(self, vocabulary: Vocabulary | None) -> Any:
        """Each token's weight, `SIF_A / (SIF_A + p)` with p its share of the catalog's tokens (None:
        no word counts to take it from, every token weighs the same).

        A plain mean of token vectors is pulled towards the words every tool of a catalog says
        ("repository", "list", "get"); weighing each token down by its frequency in the catalog (the
        smooth inverse frequency of Arora et al., 2017) keeps what tells tools apart, and keeps a
        request's several asks from averaging out into the catalog's common words.
        """
        if vocabulary is None or vocabulary.counts is None:
            return None
        np = self.np
        starts = np.asarray(vocabulary.starts, dtype=np.intp)
        per_token = np.repeat(np.asarray(vocabulary.counts, dtype=np.float64), np.diff(starts))
        ids = np.asarray(vocabulary.ids, dtype=np.intp)
        frequency = np.bincount(ids, weights=per_token, minlength=len(self.table))
        share = frequency / max(float(frequency.sum()), 1.0)
        return (SIF_A / (SIF_A + share)).astype(np.float32)

    def encode(self, texts: Sequence[str], vocabulary: Vocabulary | None = None, weights: Any = None) -> Any:
        """Unit vectors (float32, one row per text); an empty text gets the zero vector.

        Words `vocabulary` knows are not tokenised again (a query needs no tokenizer then). With
        `weights` (from `token_weights`), a text's vector is the weighted sum of its token vectors.
        """
        np = self.np
        flat, bounds = self._token_ids(texts, vocabulary)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        # Gather token vectors a chunk of texts at a time (all at once would hold gigabytes), then
        # sum each text's contiguous rows: faster than np.add.reduceat along the first axis.
        ends = bounds[1:].tolist()
        buffer = np.empty(
            (min(max(_EMBED_CHUNK_TOKENS, _EMBED_MAX_TOKENS), len(flat)), self.dims), self.table.dtype
        )
        first = 0
        while first < len(texts):
            base = bounds[first]
            last = int(np.searchsorted(bounds, base + _EMBED_CHUNK_TOKENS, side="right")) - 1
            last = min(max(last, first + 1), len(texts))
            rows = buffer[: bounds[last] - base]
            np.take(self.table, flat[base : bounds[last]], axis=0, out=rows)
            if weights is not None:
                rows = rows * weights[flat[base : bounds[last]], None]
            start = 0
            for i in range(first, last):
                end = ends[i] - base
                if end > start:
                    out[i] = rows[start:end].sum(axis=0, dtype=np.float32)
                start = end
            first = last
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)

    def encode_query(self, text: str, vocabulary: Vocabulary | None = None, weights: Any = None) -> Any:
        """One request's unit vector: `encode([text], vocabulary, weights)[0]`, with less overhead.

        The last requests' token rows are remembered, already widened to float32 (most of the cost):
        a discover with learning encodes the same request for the catalog's index (weighted) and for
        the learned index of past requests (not). A word's ids are the model's whichever vocabulary
        supplied them.
        """
        np = self.np
        cached = self._queries.get(text)
        if cached is None:
            ids = self._token_ids([text], vocabulary)[0]
            cached = (ids, self.table[ids].astype(np.float32))
            if len(self._queries) >= _MAX_CACHED_QUERIES:
                self._queries.clear()
            self._queries[text] = cached
        ids, rows = cached
        if weights is not None:
            rows = rows * weights[ids, None]
        # The same values summed in the same order as `encode`, so the vector is the same to the bit.
        out = rows.sum(axis=0)[None, :]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms > 0, norms, 1.0))[0]


def _package_dir(name: str) -> Path:
    """Where an installed package's files are, without importing it.

    Importing wordllama would load its training and download code (requests among it) and set the
    root logger to INFO: a tenth of a second and a side effect, for two data files.
    """
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"{name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


_EMBEDDER: list[Embedder | None] = []


def embedder() -> Embedder | None:
    """The shared embedder, or None when the `search` extra is not installed."""
    if not _EMBEDDER:
        try:
            _EMBEDDER.append(Embedder())
        except ImportError:
            _EMBEDDER.append(None)
        except OSError as exc:  # installed but unusable: said once, and search stays lexical
            _log.warning("search: the semantic layer is off: %s", exc)
            _EMBEDDER.append(None)
    return _EMBEDDER[0]


def semantic_available() -> bool:
    """Whether the `search` extra (the embedding layer) is installed."""
    return embedder() is not None


def param_names(d: ToolDefinition) -> str:
    """Parameter names for the embedding; a lazy params model is not built (its search text stands in)."""
    return d.search_text if d.is_lazy else " ".join(d.model.model_fields)


def embedding_text(d: ToolDefinition) -> str:
    """What a tool's vector is made of: name, category, example requests, description, parameter names.

    The requests come before the description, which may be long: a text is cut at 512 tokens.
    """
    return " ".join(
        [*words(d.name), ".", *words(d.category), ".", *d.example_requests, d.description, param_names(d)]
    )


def dense_layer(
    tools: Sequence[ToolDefinition],
    vectors: Any,
    dense: bool,
    cache_dir: Path | None,
    *,
    background: bool = True,
) -> DenseLayer | None:
    """The dense layer of an index of `tools` (None when not asked for); it blends into `vectors`.
    `background`: as for `DenseLayer`."""
    if not dense:
        return None
    if vectors is None:
        raise ValueError("the dense layer blends into the semantic layer's score: it needs semantic=True")
    return DenseLayer([embedding_text(d) for d in tools], cache_dir, background=background)


class Vectors:
    """The tools' unit vectors, and how a query's similarity is blended with its lexical scores."""

    def __init__(
        self, matrix: Any, vocabulary: Vocabulary | None = None, dense: DenseLayer | None = None
    ) -> None:
        e = embedder()
        assert e is not None
        self.embedder = e
        np = e.np
        self.matrix = matrix
        self.vocabulary = vocabulary
        self.dense = dense
        """The sentence encoder's layer (`dense`), when the index has one."""
        self.weights = e.token_weights(vocabulary)
        n = len(matrix)
        self.prefix: Any = None
        # `low`, the bottom of the similarity scale, is the least similarity over an even sample of
        # the catalog (all of it up to _LOW_SAMPLE tools): the same on the exact and shortlist paths.
        self.stride = -(-n // _LOW_SAMPLE)
        self.sample: Any = None
        if n > SEMANTIC_EXACT_LIMIT:
            self.sample = np.ascontiguousarray(matrix[:: self.stride])
            prefix = np.ascontiguousarray(matrix[:, :_PREFIX_DIMS])
            norms = np.linalg.norm(prefix, axis=1, keepdims=True)
            self.prefix = prefix / np.where(norms > 0, norms, 1.0)

    def blend(
        self, query: str, lexical: Any, keep: Any, depth: int | None, voters: Any = None
    ) -> tuple[Any, Any, Any]:
        """Candidates, their blended scores, and their tiers (0: exact; 1: ranked on the prefix only).

        Candidates are the lexical matches (`lexical` > 0, dense over all tools) and the
        `SEMANTIC_CANDIDATES` tools closest in meaning among those `keep` allows. A score is
        `(1 - w) * lexical / best lexical + w * (similarity - low) / (high - low)`, with high the
        greatest similarity over the catalog and low the least over an even sample of at most
        `_LOW_SAMPLE` tools (every tool in smaller catalogs). `voters` (a mask, or None: all) says
        which tools the dense layer's similarity may raise (`DenseLayer.rescore`).
        """
        np = self.embedder.np
        q = self.embedder.encode_query(query, self.vocabulary, self.weights)
        lex_ids = np.flatnonzero(lexical > 0)  # scores are positive; a boolean mask is found faster
        lex_part = lexical[lex_ids] * ((1 - SEMANTIC_WEIGHT) / lexical[lex_ids].max())
        k = min(SEMANTIC_CANDIDATES, len(self.matrix))
        if self.prefix is None:
            sim = similarities(np, self.matrix, q)
            low, high = float(sim[:: self.stride].min()), float(sim.max())
            closest = sim if keep is None else np.where(keep, sim, -np.inf)
            ids = _union(np, len(sim), lex_ids, np.argpartition(closest, len(sim) - k)[len(sim) - k :])
            tier = np.zeros(len(ids), dtype=np.int8)
            sim = sim[ids].astype(np.float64)
        else:
            ids, sim, tier, low, high = self._shortlist(q, lex_ids, lex_part, keep, depth)
        scale = SEMANTIC_WEIGHT / ((high - low) or 1.0)
        fused = (sim - low) * scale
        fused[np.searchsorted(ids, lex_ids)] += lex_part
        dense = self.dense
        if dense is not None and dense.ready:
            # Tools the encoder adds are no lexical match: their hybrid score is their similarity's.
            def extra(new: Any) -> Any:
                return (similarities(np, self.matrix[new], q).astype(np.float64) - low) * scale

            return dense.rescore(query, ids, fused, tier, keep=keep, extra=extra, voters=voters)
        return ids, fused, tier

    def _shortlist(
        self, q: Any, lex_ids: Any, lex_part: Any, keep: Any, depth: int | None
    ) -> tuple[Any, Any, Any, float, float]:
        """Large catalogs: candidates, their similarities (exact where the tier is 0), low and high.

        The 64-dimension prefix ranks every tool; the `_POOL` closest (that `keep` allows) are
        scored exactly and give the semantic candidates and `high`. Lexical matches are ranked with
        the prefix similarity and the best `_SHORTLIST` (at least four times the page depth) are
        scored exactly; the rest keep the prefix score and rank after them.
        """
        np = self.embedder.np
        head = q[:_PREFIX_DIMS]
        approx = similarities(np, self.prefix, head / (np.linalg.norm(head) or 1.0))
        ranked = approx if keep is None else np.where(keep, approx, -np.inf)
        pool = np.argpartition(-ranked, min(_POOL, len(ranked)) - 1)[:_POOL]
        pool_sim = similarities(np, self.matrix[pool], q)
        allowed_sim = pool_sim if keep is None else np.where(keep[pool], pool_sim, -np.inf)
        near = pool[np.argsort(-allowed_sim, kind="stable")[:SEMANTIC_CANDIDATES]]
        low = float(similarities(np, self.sample, q).min())
        high = float(pool_sim.max())
        ids = _union(np, len(approx), lex_ids, near)
        exact = lex_ids
        size = len(lex_ids) if depth is None else max(_SHORTLIST, 4 * depth)
        if size < len(lex_ids):
            rough = lex_part + (approx[lex_ids] - low) * (SEMANTIC_WEIGHT / ((high - low) or 1.0))
            exact = lex_ids[np.argpartition(-rough, size - 1)[:size]]
        exact = _union(np, len(approx), exact, near)
        sim = approx[ids].astype(np.float64)
        tier = np.ones(len(ids), dtype=np.int8)
        at = np.searchsorted(ids, exact)
        tier[at] = 0
        sim[at] = similarities(np, self.matrix[exact], q)
        return ids, sim, tier, low, high


def _union(np: Any, n: int, a: Any, b: Any) -> Any:
    """Sorted distinct ids of `a` and `b` (a mask over `n` costs less than np.union1d's hashing)."""
    seen = np.zeros(n, dtype=bool)
    seen[a] = True
    seen[b] = True
    return np.flatnonzero(seen)
