"""The two answers of `Gateway.discover`, told apart for a type checker: a request or a filter gets a
`Page` of tools, no arguments the catalog's `Overview`. A test that knows which it asked for says so."""

from __future__ import annotations

from gateway.discovery import Overview, Page


def as_page(answer: Page | Overview) -> Page:
    """`answer` as the page of tools a request or a filter gets."""
    assert "tools" in answer, answer
    return answer
