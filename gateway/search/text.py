"""Words for search: splitting identifiers, stop words, Porter's stemmer.

Shared by the index (`gateway.search`) and its tests; pure Python, no dependency.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import filterfalse

# Words, with camelCase and acronyms split: "getHTTPResponse" -> get, HTTP, Response.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "lets",
        "like",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "need",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "us",
        "very",
        "want",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
    ]
)
# -- words -------------------------------------------------------------------------------------------

_VOWELS = frozenset("aeiou")


def _consonant(word: str, i: int) -> bool:
    if word[i] in _VOWELS:
        return False
    if word[i] == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in `stem`."""
    m, vowel_seen = 0, False
    for i in range(len(stem)):
        if not _consonant(stem, i):
            vowel_seen = True
        elif vowel_seen:
            m, vowel_seen = m + 1, False
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _cvc(stem: str) -> bool:
    n = len(stem)
    return (
        n >= 3
        and _consonant(stem, n - 1)
        and not _consonant(stem, n - 2)
        and _consonant(stem, n - 3)
        and stem[-1] not in "wxy"
    )


def _double(stem: str) -> bool:
    return len(stem) >= 2 and stem[-1] == stem[-2] and _consonant(stem, len(stem) - 1)


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
    ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
    ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
    ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)  # fmt: skip
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism",
    "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _replace(word: str, rules: Sequence[tuple[str, str]], min_measure: int) -> str:
    for suffix, repl in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + repl if _measure(stem) > min_measure else word
    return word


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Porter's stemmer (1980): 'scheduling', 'schedules', 'scheduled' -> 'schedul'.

    Not PyStemmer's 'porter': on the 66,073 distinct words of 400 Google discovery documents the two
    agree on every word but those of two letters (PyStemmer turns 'is' into 'i', 'vs' into 'v'; here
    they stay), so rankings would match with a guard, but a compiled dependency of every install for
    a function memoised per word (a cached index stems nothing) is not worth it: measured once by hand,
    not by a benchmark, stemming those words took 392 ms here against PyStemmer's 144 ms.
    """
    if len(word) <= 2 or not word.isalpha():
        return word
    # 1a: plurals
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    # 1b: -eed, -ed, -ing
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
                word = word[: -len(suffix)]
                if word.endswith(("at", "bl", "iz")):
                    word += "e"
                elif _double(word) and word[-1] not in "lsz":
                    word = word[:-1]
                elif _measure(word) == 1 and _cvc(word):
                    word += "e"
                break
    # 1c: -y
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _replace(word, _STEP2, 0)
    word = _replace(word, _STEP3, 0)
    for suffix in _STEP4:
        if word.endswith(suffix):
            stem_ = word[: -len(suffix)]
            if _measure(stem_) > 1 and (suffix != "ion" or stem_.endswith(("s", "t"))):
                word = stem_
            break
    # 5: final -e and -ll
    if word.endswith("e"):
        stem_ = word[:-1]
        if _measure(stem_) > 1 or (_measure(stem_) == 1 and not _cvc(stem_)):
            word = stem_
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


# Contractions and possessives: what follows the apostrophe is not a word of its own ("org's",
# "Dependabot's", "don't", "we've" would otherwise leave "s", "t", "ve" to match each other).
_CONTRACTION = re.compile(r"(?i)(?:\b(ca)|\b(wo)|(?<=[a-z]))n['’]t\b|['’](?:s|ll|re|ve|d|m)\b")


def _expand(match: re.Match[str]) -> str:
    if match[1]:
        return "can not"
    if match[2]:
        return "will not"
    return " not" if match[0][-1] in "tT" else ""


# Two stop words joined by a hyphen are one word that means something ("to-do"), not two dropped ones.
# Only a word of two parts: "up-to-date" and "out-of-stock" are read part by part, as before.
_COMPOUND = re.compile(r"(?<![\w-])([A-Za-z]+)-([A-Za-z]+)(?![\w-])")


def _compound(match: re.Match[str]) -> str:
    first, second = match[1].lower(), match[2].lower()
    return first + second if first in STOP_WORDS and second in STOP_WORDS else match[0]


def words(text: str) -> list[str]:
    """Lowercase words of `text`, split on punctuation, '_', '.', '-' and camelCase; stop words kept.

    Two stop words joined by a hyphen are read as one word ("to-do": todo)."""
    if "'" in text or "’" in text:
        text = _CONTRACTION.sub(_expand, text)
    if "-" in text:
        text = _COMPOUND.sub(_compound, text)
    # One lower() over the joined words, not one per word: the index build calls this a lot.
    return " ".join(_WORD.findall(text)).lower().split()


def tokenize(text: str) -> list[str]:
    """Stemmed words of `text` without stop words: what the index holds."""
    return list(map(stem, filterfalse(STOP_WORDS.__contains__, words(text))))


def deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}
