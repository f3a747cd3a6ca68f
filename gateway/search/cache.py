"""A disk cache for search indexes: a large catalog is indexed once, then loaded in milliseconds.

A cached index is one file named by a fingerprint: a hash of everything the index reads from the
tools (names, categories, actions, summaries, descriptions, parameter text, tags, example
requests) plus `ENGINE_VERSION` and whether it holds embeddings, so a changed tool or a changed
engine is never served a stale index. The file holds flat arrays and a JSON header, not a pickle: a cache directory
someone else can write to cannot make the gateway run code, and a damaged file is rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
import tempfile
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from .objects import ToolObjects

ENGINE_VERSION = "search-9"
"""Changes whenever tokenisation, weights or the file layout change: old files are then ignored."""
MAX_CACHED_INDEXES = 8
"""Files kept in a cache directory; the least recently used are removed beyond this."""
_MAGIC = b"MTGSIDX\x01"
_SUFFIX = ".searchindex"
_log = logging.getLogger(__name__)


def default_cache_dir() -> Path:
    """Where indexes are cached unless told otherwise: the user's cache directory."""
    import platformdirs

    return platformdirs.user_cache_path("metatool-gateway") / "search-index"


def fingerprint(rows: Iterable[Sequence[str]], semantic: bool, model: str = "") -> str:
    """A hash of the searchable text of every tool (in index order), the engine, the layers and the
    embedding model."""
    h = hashlib.sha256(f"{ENGINE_VERSION}\x1f{semantic}\x1f{model}\x1e".encode())
    for row in rows:
        h.update("\x1f".join(row).encode("utf-8", "surrogatepass"))
        h.update(b"\x1e")
    return h.hexdigest()[:40]


@dataclass(frozen=True)
class Vocabulary:
    """Words with their token ids, sorted: `ids[starts[i]:starts[i + 1]]` are the ids of `words[i]`.

    An index keeps the vocabulary of its tools' texts (and the disk cache saves it), so a query
    made of words the catalog uses is embedded without loading the tokenizer.
    """

    words: list[str]
    starts: array[int]
    ids: array[int]
    counts: array[int] | None = None
    """How often each word occurs in the tools' texts: the catalog's word frequencies."""

    def get(self, word: str) -> list[int] | None:
        i = bisect_left(self.words, word)
        if i == len(self.words) or self.words[i] != word:
            return None
        return self.ids[self.starts[i] : self.starts[i + 1]].tolist()

    def check(self) -> bool:
        """Whether the arrays are consistent with each other."""
        return (
            len(self.starts) == len(self.words) + 1
            and (not self.starts or self.starts[0] == 0)
            and self.starts[-1] == len(self.ids)
            and ascending(self.starts)
            and (self.counts is None or len(self.counts) == len(self.words))
        )


@dataclass
class IndexParts:
    """What an index is made of, apart from the tools themselves: postings and optional vectors.

    The postings of term `terms[t]` are `ids[starts[t]:starts[t + 1]]` (tool positions, ascending)
    and their BM25 impacts `impacts[...]` (idf included).
    """

    terms: list[str]
    starts: array[int]
    ids: array[int]
    impacts: array[float]
    vectors: Any = None  # numpy float32 (tools x dims) when the semantic layer is on
    vocabulary: Vocabulary | None = None  # with the vectors: the token ids of the tools' words
    # What the tools' example requests teach (`ranking.Ranking`), read once when the index is built:
    agreeing: bool = False  # some tool has example requests
    example_verbs: dict[str, str] | None = None  # the verbs they open with, and their tools' action
    markers: dict[str, str] | None = None  # the words that mark one category
    objects: ToolObjects | None = None  # each tool's own object words (where `agreeing`)

    def check(self, tools: int) -> bool:
        """Whether the arrays are consistent with each other and with `tools` tools."""
        return (
            len(self.starts) == len(self.terms) + 1
            and (not self.starts or self.starts[0] == 0)
            and self.starts[-1] == len(self.ids) == len(self.impacts)
            and ascending(self.starts)
            and (not self.ids or largest(self.ids) < tools)
            and (self.vectors is None or (self.vectors.ndim == 2 and len(self.vectors) == tools))
            and (self.vocabulary is None or self.vocabulary.check())
            and (self.objects is None or _objects_fit(self.objects, tools))
        )


def _objects_fit(objects: ToolObjects, tools: int) -> bool:
    """Whether the tools' object words are consistent with each other and with `tools` tools."""
    starts, ids = objects.starts, objects.ids
    return (
        len(starts) == tools + 1
        and starts[0] == 0
        and starts[-1] == len(ids)
        and ascending(starts)
        and (not ids or largest(ids) < len(objects.words))
    )


def ascending(values: array[int]) -> bool:
    """Whether `values` never decrease (with numpy when it is installed: these arrays are long)."""
    np = _numpy()
    if np is not None:
        return bool((np.diff(np.asarray(values)) >= 0).all())
    return all(a <= b for a, b in pairwise(values))


def largest(values: array[int]) -> int:
    np = _numpy()
    return int(np.asarray(values).max()) if np is not None else max(values)


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _path(cache_dir: Path, key: str) -> Path:
    return cache_dir / f"{key}{_SUFFIX}"


def load(cache_dir: Path, key: str, tools: int) -> IndexParts | None:
    """The cached parts for `key`, or None if there are none (or they are unreadable or inconsistent)."""
    path = _path(cache_dir, key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        parts = _decode(data, key, tools)
    except (ValueError, KeyError, TypeError, IndexError, ImportError) as exc:
        _log.warning("ignoring the damaged search index cache %s: %s", path, exc)
        return None
    if parts is not None:
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: kept by the pruning
    return parts


def _decode(data: bytes, key: str, tools: int) -> IndexParts | None:
    if not data.startswith(_MAGIC):
        raise ValueError("not a search index file")
    size = int.from_bytes(data[len(_MAGIC) : len(_MAGIC) + 8], "little")
    body = len(_MAGIC) + 8 + size
    header = json.loads(data[len(_MAGIC) + 8 : body])
    if (header["version"], header["key"], header["tools"], header["byteorder"]) != (
        ENGINE_VERSION,
        key,
        tools,
        sys.byteorder,
    ):
        return None
    view = memoryview(data)
    if zlib.crc32(view[body:]) != header["crc32"]:
        raise ValueError("checksum mismatch")
    arrays: dict[str, array[Any]] = {}
    vectors = vocabulary = None
    for name, typecode, count in header["arrays"]:
        arr = array(typecode)
        end = body + count * arr.itemsize
        if end > len(data):
            raise ValueError("truncated")
        if name == "vectors":  # read in place: the file's bytes are not copied
            import numpy as np

            vectors = np.frombuffer(data, dtype=np.float32, count=count, offset=body)
            vectors = vectors.reshape(tools, header["dims"])
            if vectors.ctypes.data % 16:  # not where save() puts them: a copy keeps the pass fast
                vectors = vectors.copy()
        else:
            arr.frombytes(view[body:end])
            arrays[name] = arr
        body = end
    if "words" in arrays:
        words = arrays["words"].tobytes().decode("utf-8").split("\n") if arrays["words"] else []
        vocabulary = Vocabulary(words, arrays["word_starts"], arrays["word_ids"], arrays.get("word_counts"))
    objects = None
    if "object_ids" in arrays:
        objects = ToolObjects(list(header["object_words"]), arrays["object_starts"], arrays["object_ids"])
    parts = IndexParts(
        header["terms"],
        arrays["starts"],
        arrays["ids"],
        arrays["impacts"],
        vectors,
        vocabulary,
        agreeing=bool(header["agreeing"]),
        example_verbs=dict(header["example_verbs"]),
        markers=dict(header["markers"]),
        objects=objects,
    )
    if not parts.check(tools):
        raise ValueError("inconsistent arrays")
    return parts


def save(cache_dir: Path, key: str, tools: int, parts: IndexParts) -> None:
    """Write the parts for `key` (atomically), then keep only the most recently used files."""
    arrays: list[tuple[str, array[Any]]] = [
        ("starts", parts.starts),
        ("ids", parts.ids),
        ("impacts", parts.impacts),
    ]
    header: dict[str, Any] = {
        "version": ENGINE_VERSION,
        "key": key,
        "tools": tools,
        "byteorder": sys.byteorder,
        "terms": parts.terms,
        "agreeing": parts.agreeing,
        "example_verbs": parts.example_verbs or {},
        "markers": parts.markers or {},
    }
    if parts.vectors is not None:
        import numpy as np

        matrix = np.ascontiguousarray(parts.vectors, dtype=np.float32)
        vectors = array("f")
        vectors.frombytes(matrix.tobytes())
        arrays.insert(0, ("vectors", vectors))  # first, where the body starts aligned
        header["dims"] = int(matrix.shape[1])
    if parts.vocabulary is not None:  # words never hold whitespace: newlines separate them
        arrays.append(("words", array("B", "\n".join(parts.vocabulary.words).encode("utf-8"))))
        arrays.append(("word_starts", parts.vocabulary.starts))
        arrays.append(("word_ids", parts.vocabulary.ids))
        if parts.vocabulary.counts is not None:
            arrays.append(("word_counts", parts.vocabulary.counts))
    if parts.objects is not None:
        header["object_words"] = parts.objects.words
        arrays.append(("object_starts", parts.objects.starts))
        arrays.append(("object_ids", parts.objects.ids))
    header["arrays"] = [(name, arr.typecode, len(arr)) for name, arr in arrays]
    crc = 0
    for _, arr in arrays:
        crc = zlib.crc32(memoryview(arr).cast("B"), crc)
    header["crc32"] = crc
    head = json.dumps(header, ensure_ascii=False).encode()
    # Spaces after the JSON so that the arrays start at a multiple of 64 bytes: the vectors, read in
    # place, are then aligned in memory (unaligned float32 rows halve the similarity pass's speed).
    head += b" " * (-(len(_MAGIC) + 8 + len(head)) % 64)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + len(head).to_bytes(8, "little") + head)
                for _, arr in arrays:
                    arr.tofile(fh)
            os.replace(tmp, _path(cache_dir, key))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _prune(cache_dir)
    except OSError as exc:  # a read-only or full disk costs a rebuild next time, nothing more
        _log.warning("could not write the search index cache in %s: %s", cache_dir, exc)


def _prune(cache_dir: Path) -> None:
    files = sorted(cache_dir.glob(f"*{_SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in files[MAX_CACHED_INDEXES:]:
        with contextlib.suppress(OSError):
            old.unlink()
