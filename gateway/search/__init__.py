"""The search engine behind `discover_tools`: ranking tools for a request.

Owns the index (`index`: exact name, name prefix, then weighted BM25F, filters, pages), its
postings (`postings`) and scoring (`ranking`), the analysis of text into words (`text`: splitting
identifiers, stop words, stemming, the verbs of a request), the semantic layer (`semantic`: static
word embeddings blended into lexical scores, with the `search` extra), the dense layer (`dense`: a
sentence encoder's similarity, `encoder`, with the `dense` extra), typo correction (`typos`) and the
on-disk cache of large indexes (`cache`). It may import `gateway.definition` and `gateway.actions` and nothing else of the
gateway: it ranks whatever tools it is given, and knows nothing of principals or policy.
"""

from __future__ import annotations

from .cache import default_cache_dir
from .dense import DENSE_WEIGHT, dense_available
from .index import CACHE_MIN_TOOLS, MAX_QUERY_TERMS, SearchIndex, numpy_available
from .ranking import MAX_QUERY_CHARS
from .semantic import SEMANTIC_CANDIDATES, SEMANTIC_EXACT_LIMIT, SEMANTIC_WEIGHT, semantic_available
from .text import stem, tokenize, words

__all__ = [
    "CACHE_MIN_TOOLS",
    "DENSE_WEIGHT",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "SEMANTIC_CANDIDATES",
    "SEMANTIC_EXACT_LIMIT",
    "SEMANTIC_WEIGHT",
    "SearchIndex",
    "default_cache_dir",
    "dense_available",
    "numpy_available",
    "semantic_available",
    "stem",
    "tokenize",
    "words",
]
