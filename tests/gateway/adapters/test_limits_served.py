"""Two real `gateway serve --transport http` replicas sharing one Redis limit, called by the real MCP client."""

from __future__ import annotations

from pathlib import Path

import anyio

from .mcp_server_support import audit_outcomes, http_client, http_server, redis_server, text_of, write_config

LIMITS = """
[limiter]
store = "redis"
redis_url = "{url}"

[[limits]]
name = "searches"
tools = ["notes_search"]
per = "all"
rate = 0.0001  # one more every 10,000 seconds: none while the test runs, and no window to cross
burst = 3
"""


def test_replicas_sharing_redis_admit_a_shared_quota_once_and_tell_the_model_when_to_retry(
    tmp_path: Path,
) -> None:
    call = {"tool_name": "notes_search", "parameters": {"title": "milk"}}
    with redis_server(tmp_path / "redis") as url:
        configs = [write_config(tmp_path / name, LIMITS.format(url=url)) for name in ("a", "b")]
        with http_server(configs[0]) as a, http_server(configs[1]) as b:

            async def scenario() -> list[object]:
                answers = []
                async with http_client(a.url) as on_a, http_client(b.url) as on_b:
                    for client in (on_a, on_b, on_a, on_b, on_a):
                        answers.append(text_of(await client.call_tool("invoke_tool", call)))
                return answers

            answers = anyio.run(scenario)
    refused = [x["error"] for x in answers if isinstance(x, dict) and "error" in x]
    assert len(answers) - len(refused) == 3 and len(refused) == 2
    assert {e["code"] for e in refused} == {"rate_limited"}
    assert all("'searches'" in e["message"] and 9000 < e["retry_after_seconds"] <= 10000 for e in refused)
    outcomes = audit_outcomes(tmp_path / "a", "notes_search") + audit_outcomes(tmp_path / "b", "notes_search")
    assert sorted(outcomes) == ["executed"] * 3 + ["limited"] * 2


def test_a_principals_budget_is_one_whether_it_calls_from_a_program_or_from_several_sessions(
    tmp_path: Path,
) -> None:
    config = write_config(
        tmp_path,
        '\n[code]\nenabled = true\n\n[[limits]]\nname = "searches"\ntools = ["notes_search"]\nquota = 3\n',
    )
    program = (
        "out = []\nfor n in range(3):\n    try:\n        call('notes_search', {'title': 'x'})\n"
        "        out.append('ran')\n    except ToolError as e:\n        out.append('limited' if 'rate_limited' in str(e) else str(e))\nout"
    )
    search = {"tool_name": "notes_search", "parameters": {"title": "x"}}

    async def scenario(url: str) -> None:
        async with http_client(url) as first, http_client(url) as second:
            assert not (await first.call_tool("invoke_tool", search)).is_error
            ran = await second.call_tool("run_code", {"code": program})
            assert ran.structured_content == {"result": ["ran", "ran", "limited"], "calls": 2}
            again = text_of(await first.call_tool("invoke_tool", search))
            assert again["error"]["code"] == "rate_limited"

    with http_server(config) as server:
        anyio.run(scenario, server.url)
    assert audit_outcomes(tmp_path, "notes_search") == [
        "executed",
        "executed",
        "executed",
        "limited",
        "limited",
    ]
