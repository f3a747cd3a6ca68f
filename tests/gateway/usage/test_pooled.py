"""Learning from use at scale: a search asks only the votes its page reads, and its answers do not change."""

from __future__ import annotations

import json

from gateway import Catalog, Gateway, Principal
from gateway import discovery as discovery_module
from gateway.definition import NoParams, ToolDefinition
from gateway.usage import SqliteUsageStore, Usage
from tests.discovery_answers import as_page

ANA = Principal("ana")
SUBJECTS = [
    "invoice",
    "ticket",
    "order",
    "shipment",
    "payment",
    "refund",
    "contract",
    "lead",
    "survey",
    "badge",
]
KINDS = ["monthly", "weekly", "yearly", "regional", "team", "audit", "summary", "export", "draft", "public"]


def _nothing(params: NoParams) -> None:
    return None


def _tools() -> list[ToolDefinition]:
    """A hundred report tools, one per subject and kind, all of them asked for in like words."""
    return [
        ToolDefinition(
            name=f"{subject}_{kind}_report",
            category=subject,
            action="read",
            summary=f"Read the {kind} {subject} report.",
            description=f"The {kind} report of every {subject}.",
            params=NoParams,
            handler=_nothing,
            read_only=True,
        )
        for subject in SUBJECTS
        for kind in KINDS
    ]


def _history() -> list[str]:
    """Past requests for every tool, several each, so that every tool's pool votes for a report."""
    lines = []
    for subject in SUBJECTS:
        for n, kind in enumerate(KINDS):
            for words in ("show the {k} {s} report", "{k} report of {s}s", "get me the {s} numbers, {k}")[
                : 1 + n % 3
            ]:
                query = words.format(k=kind, s=subject)
                lines.append(json.dumps({"query": query, "tools": [f"{subject}_{kind}_report"]}))
    return lines


def test_a_search_reads_only_the_votes_its_page_holds_and_answers_as_with_all_of_them() -> None:
    tools = _tools()
    usage = Usage(SqliteUsageStore(":memory:"), check_seconds=0.0)
    usage.import_lines(_history())
    gw = Gateway(Catalog(tools), search_cache_dir=False, usage=usage)
    visible, index = gw.visible(ANA), gw.index(ANA)

    def every_vote(query: str, categories: object, actions: object, depth: int) -> dict[str, float]:
        return dict(usage.votes(visible, query, principal=ANA.id))  # all of them, whatever the depth

    for query in ("the monthly report", "report of payments", "weekly numbers please", "audit"):
        votes = usage.votes(visible, query, principal=ANA.id)
        strongest = dict(sorted(votes.items(), key=lambda item: (-item[1], item[0]))[:50])
        assert usage.votes(visible, query, principal=ANA.id, limit=50) == strongest
        for limit in (5, 10, 50):
            page = gw.discover(ANA, query=query, limit=limit)
            assert page == discovery_module.discover(
                visible, index, query=query, limit=limit, votes=every_vote
            )
            if "next_cursor" in page:  # the next page too
                cursor = page["next_cursor"]
                assert gw.discover(ANA, query=query, limit=limit, cursor=cursor) == discovery_module.discover(
                    visible, index, query=query, limit=limit, cursor=cursor, votes=every_vote
                )
    # More tools have a vote than a page of 50 holds: the cut was made.
    assert len(usage.votes(visible, "the monthly report", principal=ANA.id)) > 50


HOME_TOOLS = {
    "water_garden": "Water the garden plants on a schedule, by zone and soil moisture.",
    "book_flight": "Book a flight between two airports on a given date.",
    "translate_text": "Translate a text into another language.",
    "convert_currency": "Convert an amount of money from one currency to another.",
    "track_parcel": "Track a parcel by its carrier and tracking number.",
    "find_recipe": "Find a cooking recipe by its ingredients.",
    "check_weather": "The weather forecast for a city.",
    "tune_guitar": "Tune a guitar string by string.",
    "rent_bicycle": "Rent a bicycle at a nearby station.",
    "order_pizza": "Order a pizza for delivery.",
    "count_calories": "Count the calories of a meal.",
    "plan_workout": "Plan a workout for the gym.",
}
LANGUAGES = [
    "french",
    "spanish",
    "german",
    "italian",
    "dutch",
    "polish",
    "greek",
    "turkish",
    "czech",
    "danish",
]
PAPERS = ["letter", "notes", "email", "menu", "poem", "contract", "recipe card", "sign", "speech", "toast"]
CITIES = ["lisbon", "oslo", "rome", "vienna", "prague", "dublin", "madrid", "athens", "berlin", "paris"]
PIZZAS = ["margherita", "pepperoni", "veggie", "hawaiian", "four cheese", "marinara", "calzone", "diavola"]


def _few_pools_history() -> list[str]:
    """Many past requests of three of the twelve tools; the translations are asked for with one everyday
    word each ("quickly", "tonight" or "kindly"), so that no single past request is close to a request
    holding all three, but their pool holds every one of them."""
    lines = set()
    for i in range(10):
        for j in range(10):
            paper, language = PAPERS[(i + j) % 10], LANGUAGES[j]
            everyday = [
                f"quickly translate this {paper} to {language}",
                f"translate this {paper} to {language} tonight",
                f"kindly translate this {paper} to {language}",
            ][j % 3]
            lines.add(json.dumps({"query": everyday, "tools": ["translate_text"]}))
            city, pizza = CITIES[(3 * i + j) % 10], PIZZAS[(i + 2 * j) % 8]
            lines.add(
                json.dumps({"query": f"a flight to {city} this weekend, {paper}", "tools": ["book_flight"]})
            )
            lines.add(
                json.dumps({"query": f"a {pizza} pizza for the kids, {paper}", "tools": ["order_pizza"]})
            )
    return sorted(lines)


def test_a_pool_sharing_only_everyday_words_with_a_request_does_not_outvote_the_texts_clear_match() -> None:
    # Three pools for twelve tools: among the pools alone, a word one of them holds looks as rare as
    # "roses"; in the tools' texts and all past requests it is everyday.
    tools = [
        ToolDefinition(
            name=name,
            category="home",
            action="read",
            summary=text,
            description=text,
            params=NoParams,
            handler=_nothing,
            read_only=True,
        )
        for name, text in HOME_TOOLS.items()
    ]
    usage = Usage(SqliteUsageStore(":memory:"), check_seconds=0.0)
    usage.import_lines(_few_pools_history())
    learning = Gateway(Catalog(tools), search_cache_dir=False, usage=usage)
    text_only = Gateway(Catalog(tools), search_cache_dir=False)
    query = "kindly water the roses quickly tonight"
    assert as_page(text_only.discover(ANA, query=query, limit=5))["tools"][0]["name"] == "water_garden"
    found = [t["name"] for t in as_page(learning.discover(ANA, query=query, limit=5))["tools"]]
    assert found[0] == "water_garden"
    # The pool still votes: its tool is lifted among the others.
    assert found.index("translate_text") < [
        t["name"] for t in as_page(text_only.discover(ANA, query=query, limit=12))["tools"]
    ].index("translate_text")
    # A request in the pool's distinctive words is still led by it.
    assert (
        as_page(learning.discover(ANA, query="kindly put this letter into greek", limit=5))["tools"][0][
            "name"
        ]
        == "translate_text"
    )
