"""A loopback HTTP server that replays scripted model turns, and builders for each API's replies.

The real SDK clients talk to it over HTTP; it records every request body so tests can assert
exactly what the SDK sent. Streamed replies are Server-Sent Events in each API's format.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON = dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """A scripted HTTP answer: a JSON body, or SSE events as (event name or None, data)."""

    body: JSON | None = None
    events: tuple[tuple[str | None, JSON | str], ...] = ()


@dataclass
class Recorded:
    path: str
    body: JSON


@dataclass
class Replay:
    replies: list[Reply] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    @property
    def bodies(self) -> list[JSON]:
        return [r.body for r in self.requests]


def _handler(replay: Replay) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("content-length", "0"))
            replay.requests.append(Recorded(self.path, json.loads(self.rfile.read(size))))
            if not replay.replies:
                # 400: an error the SDKs do not retry (a retry would wait between attempts).
                self._send_json(
                    400, {"error": {"type": "invalid_request_error", "message": "no scripted reply left"}}
                )
                return
            reply = replay.replies.pop(0)
            if reply.body is not None:
                self._send_json(200, reply.body)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for name, data in reply.events:
                if name:
                    self.wfile.write(f"event: {name}\n".encode())
                text = data if isinstance(data, str) else json.dumps(data)
                self.wfile.write(f"data: {text}\n\n".encode())

        def _send_json(self, status: int, body: JSON) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def serve() -> Iterator[Replay]:
    """Run a replay server for the duration of a fixture."""
    replay = Replay()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(replay))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    replay.url = f"http://127.0.0.1:{server.server_port}"
    try:
        yield replay
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _halves(text: str) -> list[str]:
    """A streamed value arrives in pieces; two is enough to prove the pieces are joined."""
    cut = len(text) // 2
    return [p for p in (text[:cut], text[cut:]) if p]


Call = tuple[str, str, str]
"""(call id, tool name, arguments as JSON text, possibly malformed)."""


# -- Anthropic Messages ---------------------------------------------------------------


def anthropic_blocks(text: str, calls: Sequence[Call]) -> list[JSON]:
    blocks: list[JSON] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": n, "input": json.loads(a)} for i, n, a in calls]
    return blocks


def anthropic_turn(
    text: str = "",
    calls: Sequence[Call] = (),
    *,
    stream: bool = True,
    blocks: Sequence[JSON] = (),
    stop: str | None = None,
) -> Reply:
    """A Messages reply: `blocks` (server tool blocks) come first, then the text, then the tool calls."""
    stop = stop or ("tool_use" if calls else "end_turn")
    usage = {"input_tokens": 10, "output_tokens": 5}
    message = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "stop_sequence": None,
        "usage": usage,
    }
    if not stream:
        content = [*blocks, *anthropic_blocks(text, calls)]
        return Reply(body={**message, "content": content, "stop_reason": stop})
    events: list[tuple[str | None, JSON | str]] = [
        (
            "message_start",
            {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}},
        )
    ]
    pieces: list[tuple[JSON, list[JSON]]] = []
    for block in blocks:
        if block["type"] == "server_tool_use":
            start = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p} for p in _halves(json.dumps(block["input"]))
            ]
            pieces.append((start, deltas))
        else:
            pieces.append((block, []))
    if text:
        pieces.append(
            ({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _halves(text)])
        )
    for call_id, name, args in calls:
        start = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        pieces.append((start, [{"type": "input_json_delta", "partial_json": p} for p in _halves(args)]))
    for index, (start, deltas) in enumerate(pieces):
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        )
        for delta in deltas:
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    end: JSON = {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": 5},
    }
    events += [("message_delta", end), ("message_stop", {"type": "message_stop"})]
    return Reply(events=tuple(events))


# -- OpenAI Chat Completions -----------------------------------------------------------


def chat_turn(text: str = "", calls: Sequence[Call] = (), *, stream: bool = True) -> Reply:
    finish = "tool_calls" if calls else "stop"
    base = {"id": "chatcmpl-test", "created": 0, "model": "gpt-test"}
    if not stream:
        message: JSON = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls
            ]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return Reply(body={**base, "object": "chat.completion", "choices": [choice]})

    def chunk(delta: JSON, finish_reason: str | None = None) -> JSON:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return {**base, "object": "chat.completion.chunk", "choices": [choice]}

    events: list[tuple[str | None, JSON | str]] = [(None, chunk({"role": "assistant", "content": ""}))]
    events += [(None, chunk({"content": p})) for p in _halves(text)]
    for index, (call_id, name, args) in enumerate(calls):
        parts = _halves(args) or [""]
        first = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": parts[0]},
        }
        events.append((None, chunk({"tool_calls": [first]})))
        events += [
            (None, chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})) for p in parts[1:]
        ]
    events += [(None, chunk({}, finish)), (None, "[DONE]")]
    return Reply(events=tuple(events))


# -- OpenAI Responses ------------------------------------------------------------------


def responses_items(
    text: str = "",
    calls: Sequence[Call] = (),
    *,
    searches: Sequence[tuple[str, JSON]] = (),
    namespaces: Mapping[str, str] | None = None,
) -> list[JSON]:
    items: list[JSON] = [
        {
            "type": "tool_search_call",
            "id": f"ts_{i}",
            "call_id": i,
            "execution": "client",
            "status": "completed",
            "arguments": a,
        }
        for i, a in searches
    ]
    if text:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        items.append(
            {
                "type": "message",
                "id": "msg_test",
                "role": "assistant",
                "status": "completed",
                "content": content,
            }
        )
    for call_id, name, args in calls:
        item = {
            "type": "function_call",
            "id": f"fc_{call_id}",
            "call_id": call_id,
            "name": name,
            "arguments": args,
            "status": "completed",
        }
        if namespaces and name in namespaces:
            item["namespace"] = namespaces[name]
        items.append(item)
    return items


def responses_turn(
    text: str = "",
    calls: Sequence[Call] = (),
    *,
    stream: bool = True,
    searches: Sequence[tuple[str, JSON]] = (),
    namespaces: Mapping[str, str] | None = None,
) -> Reply:
    output = responses_items(text, calls, searches=searches, namespaces=namespaces)
    response = {
        "id": "resp_test",
        "object": "response",
        "created_at": 0,
        "model": "gpt-test",
        "status": "completed",
        "output": output,
    }
    if not stream:
        return Reply(body=response)
    events: list[tuple[str | None, JSON | str]] = [
        (
            "response.created",
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": {**response, "status": "in_progress", "output": []},
            },
        )
    ]
    for n, piece in enumerate(_halves(text)):
        delta = {
            "type": "response.output_text.delta",
            "sequence_number": n + 1,
            "item_id": "msg_test",
            "output_index": 0,
            "content_index": 0,
            "delta": piece,
            "logprobs": [],
        }
        events.append(("response.output_text.delta", delta))
    events.append(
        ("response.completed", {"type": "response.completed", "sequence_number": 9, "response": response})
    )
    return Reply(events=tuple(events))
