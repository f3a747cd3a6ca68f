"""The learned index's cheap parts: the nearest past requests by their words' overlap, and the pools'
meaning weighed only where the request's words reach."""

from __future__ import annotations

import math
import random

import numpy as np

from gateway.usage.nearest import WordNeighbours
from gateway.usage.pooled import PooledEvidence

STEMS = [f"w{i}" for i in range(40)]


def _past(rng: random.Random, n: int) -> list[frozenset[str]]:
    return [frozenset(rng.sample(STEMS, rng.randint(1, 6))) for _ in range(n)]


def test_the_nearest_past_requests_are_those_whose_words_overlap_most_best_first_ties_by_number() -> None:
    rng = random.Random(4)
    words = _past(rng, 300) + [frozenset({"w1", "w2"})] * 3  # ties
    frequency: dict[str, int] = {}
    for stems in words:
        for stem in stems:
            frequency[stem] = frequency.get(stem, 0) + 1
    rarity = {w: math.log(1 + len(words) / (f + 1)) for w, f in frequency.items()}
    mass = [sum(rarity[w] for w in stems) for stems in words]
    neighbours = WordNeighbours(np, words, rarity, mass)
    for request in (frozenset({"w1", "w2"}), frozenset({"w3", "w7", "w30", "unknown"}), frozenset({"w39"})):
        whole = sum(rarity.get(w, 1.0) for w in request)
        expected = []
        for i, stems in enumerate(words):
            shared = sum(rarity[w] for w in request & stems)
            if shared:
                expected.append((-shared / (whole + mass[i] - shared), i))
        expected.sort()
        found, overlap = neighbours.nearest(request, whole, 20)
        assert found == [i for _, i in expected[:20]]
        assert np.allclose(overlap, [-o for o, _ in expected[:20]])
    assert neighbours.nearest(frozenset({"nothing", "shared"}), 2.0, 20) == ([], [])


def test_a_pool_that_shares_no_word_with_the_request_gets_no_vote_however_close_its_meaning() -> None:
    # Two tools, each with five past requests; the request's embedding is the first pool's mean
    # exactly, but its words are only the second pool's.
    requests: list[tuple[frozenset[str], frozenset[str], list[tuple[str, float]]]]
    requests = [(frozenset({"forecast", "rain"}), frozenset(), [("weather", 1.0)])] * 5
    requests += [(frozenset({"invoice", "send"}), frozenset(), [("billing", 1.0)])] * 5
    vectors = np.array([[1.0, 0.0, 0.0]] * 5 + [[0.0, 1.0, 0.0]] * 5, dtype=np.float32)
    pools = PooledEvidence(requests, {"weather": "read", "billing": "send"}, vectors)
    same_meaning = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    votes = pools.votes(frozenset({"invoice"}), frozenset(), same_meaning)
    assert set(votes) == {"billing"}
    # Its words reach the first pool too: then its meaning counts there, in full.
    both = pools.votes(frozenset({"invoice", "rain"}), frozenset(), same_meaning)
    words_only = pools.votes(frozenset({"invoice", "rain"}), frozenset(), None)
    assert both["weather"] > words_only["weather"]
    assert both["billing"] == words_only["billing"]
