"""The lexical index: BM25F postings of every tool, built once, stored as flat arrays.

Every tool is indexed over everything it says about itself (name split on '_', '.', '-' and
camelCase, category, action, summary, description, parameter names and descriptions, tags, the
example requests its author wrote), each field with its own weight (BM25F: weighted term
frequencies, one length normalisation). Each posting stores its impact (the term's whole BM25
contribution to that tool), so a query only adds numbers. The arrays are what `cache` writes to disk.
"""

from __future__ import annotations

import importlib
import math
from array import array
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..definition import ToolDefinition
from .cache import IndexParts
from .text import tokenize

FIELD_WEIGHTS = (3.0, 1.5, 1.0, 1.5, 1.0, 0.4, 1.5, 1.0)
"""Per field: name, category, action, summary, description, parameters, tags, example requests."""
ACTION_MARK = "!"
"""Prefix of action concept tokens: "!delete" cannot collide with a word."""
_ACTION_WEIGHT = 1.0  # the action concept token, like the action field
_K1 = 1.2
_B = 0.75

_NUMPY: list[Any] = []


def numpy_available() -> bool:
    """Whether numpy is installed (the `fast` or `search` extra): large queries are then vectorised."""
    return numpy_module() is not None


def numpy_module() -> Any:
    if not _NUMPY:
        try:
            _NUMPY.append(importlib.import_module("numpy"))
        except ImportError:
            _NUMPY.append(None)
    return _NUMPY[0]


def field_texts(d: ToolDefinition) -> tuple[str, ...]:
    """The tool's text per field, in the order of `FIELD_WEIGHTS`."""
    summary = d.summary if d.summary.strip() != d.description.strip() else ""
    return (
        d.name,
        d.category,
        f"{d.action} {d.verb}",
        summary,
        d.description,
        d.parameter_text(),
        " ".join(d.tags),
        "\n".join(d.example_requests),
    )


def postings(rows: Sequence[tuple[str, ...]], actions: Sequence[str]) -> IndexParts:
    """BM25F postings of every tool (in index order), as flat arrays grouped by term."""
    seen: dict[str, tuple[tuple[str, int], ...]] = {}  # catalogs repeat texts (parameters above all)
    term_ids: dict[str, int] = {}
    docs_of: list[list[int]] = []
    tfs_of: list[list[float]] = []
    lengths: list[float] = []
    for i, (row, action) in enumerate(zip(rows, actions, strict=True)):
        weighted: dict[str, float] = {}
        get = weighted.get
        for text, weight in zip(row, FIELD_WEIGHTS, strict=True):
            counts = seen.get(text)
            if counts is None:
                counts = seen[text] = tuple(Counter(tokenize(text)).items())
            for token, count in counts:
                weighted[token] = get(token, 0.0) + weight * count
        concept = ACTION_MARK + action
        weighted[concept] = get(concept, 0.0) + _ACTION_WEIGHT
        lengths.append(sum(weighted.values()))
        for token, tf in weighted.items():
            t = term_ids.get(token)
            if t is None:
                t = term_ids[token] = len(docs_of)
                docs_of.append([])
                tfs_of.append([])
            docs_of[t].append(i)
            tfs_of[t].append(tf)
    n = len(rows)
    avg = (sum(lengths) / n) if n else 1.0
    norms = [_K1 * (1 - _B + _B * length / avg) for length in lengths]
    starts, ids, tfs, idfs = array("q", [0]), array("I"), array("d"), array("d")
    for docs, term_tfs in zip(docs_of, tfs_of, strict=True):
        ids.extend(docs)
        tfs.extend(term_tfs)
        starts.append(len(ids))
        idfs.append(math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5)))
    impacts = array("f")
    np = numpy_module()
    if np is not None:  # the same operations, one array at a time
        tf = np.frombuffer(tfs, dtype=np.float64) if tfs else np.zeros(0)
        doc_norms = np.asarray(norms, dtype=np.float64)[np.frombuffer(ids, dtype=np.uint32)] if ids else tf
        idf = np.repeat(np.frombuffer(idfs, dtype=np.float64), np.diff(starts)) if idfs else tf
        impacts.frombytes((idf * (tf * (_K1 + 1) / (tf + doc_norms))).astype(np.float32).tobytes())
    else:
        for t, idf in enumerate(idfs):
            a, b = starts[t], starts[t + 1]
            impacts.extend(
                [idf * (tf * (_K1 + 1) / (tf + norms[d])) for d, tf in zip(ids[a:b], tfs[a:b], strict=True)]
            )
    return IndexParts(list(term_ids), starts, ids, impacts)
