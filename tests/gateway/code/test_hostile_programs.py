"""1,000 hostile programs: escapes, files, network, environment, huge allocations, recursion, hidden tools,
attempts to approve themselves. None escapes, none crashes the gateway, none runs what it may not."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from gateway import Catalog, Gateway, MemoryAuditLog, Policy, ToolContext, render, run_sync
from gateway.code import enable
from gateway.policy import Rule
from gateway.settings.sections import CodeSettings

from ..sample_tools import ALL_TOOLS, Calls

SECRET = "s3cr3t-value-in-the-gateways-environment"


def _templates(sentinel: str) -> list[str]:
    modules = [
        "os",
        "sys",
        "subprocess",
        "socket",
        "ctypes",
        "importlib",
        "builtins",
        "shutil",
        "pathlib",
        "io",
        "urllib.request",
        "http.client",
        "asyncio",
        "threading",
        "multiprocessing",
        "pickle",
        "marshal",
        "gc",
        "inspect",
        "signal",
        "resource",
        "pydantic_monty",
        "gateway",
    ]
    files = [
        sentinel,
        "/etc/passwd",
        "/proc/self/environ",
        "/proc/self/mem",
        "../../etc/shadow",
        "~/.ssh/id_rsa",
    ]
    return [
        *(f"import {m}\n{m}" for m in modules),
        *(f"__import__('{m}')" for m in modules),
        *(f"from {m} import *" for m in modules),
        *(f"open({f!r}).read()" for f in files),
        *(f"open({f!r}, 'w').write('pwned')" for f in files),
        f"from pathlib import Path\nPath({sentinel!r}).write_text('pwned')",
        f"from pathlib import Path\nPath({sentinel!r}).parent.iterdir()",
        f"import os\nos.remove({sentinel!r})",
        "import os\nos.listdir('/')",
        "import os\nos.system('touch /tmp/pwned')",
        "import os\nos.environ",
        "import os\nos.getenv('GATEWAY_TEST_SECRET')",
        "import os\nos.environ['GATEWAY_TEST_SECRET']",
        "import socket\nsocket.create_connection(('127.0.0.1', 22))",
        "import urllib.request\nurllib.request.urlopen('http://127.0.0.1/')",
        "import asyncio\nasyncio.open_connection('127.0.0.1', 80)",
        "x = 'a' * (10 ** {n})",
        "x = [0] * (10 ** {n})",
        "x = bytearray(10 ** {n})",
        "x = {{i: i for i in range(10 ** {n})}}",
        "x = [1]\nwhile True:\n    x = x + x",
        "s = 'x'\nwhile True:\n    s = s * 2",
        "def f(n):\n    return f(n + 1)\nf(0)",
        "def f():\n    return [f() for _ in range(2)]\nf()",
        "while True:\n    pass",
        "i = 0\nwhile True:\n    try:\n        i += 1\n    except BaseException:\n        pass",
        "for i in range(10 ** {n}):\n    pass",
        "call('files_boom', {{'path': '/srv/files/{n}'}})",
        "try:\n    call('files_boom', {{'path': '/x'}})\nexcept Exception as e:\n    r = str(e)\nr",
        "schema('files_boom')",
        "discover('files boom raise')",
        "discover(categories=['files'])",
        "call('FILES_BOOM', {{}})",
        "call('files_boom ', {{}})",
        "call('invoke_tool', {{'tool_name': 'files_boom', 'parameters': {{'path': '/x'}}}})",
        "call('invoke_tool', {{'tool_name': 'notes_delete', 'parameters': {{'note_id': 'n{n}'}}, "
        "'confirmation': '{hexid}'}})",
        "call('run_code', {{'code': 'call(\"notes_delete\", {{\"note_id\": \"n1\"}})'}})",
        "call('notes_delete', {{'note_id': 'n{n}', 'confirmation': '{hexid}'}})",
        "call('notes_delete', note_id='n{n}', confirmation='{hexid}')",
        "call('approve', {{'pending_id': '{hexid}'}})",
        "call('gateway_approve', {{'pending_id': '{hexid}'}})",
        "try:\n    call('notes_delete', {{'note_id': 'n{n}'}})\nexcept BaseException:\n    pass\n"
        "call('notes_delete', {{'note_id': 'n{n}'}})",
        "for i in range({n}):\n    try:\n        call('notes_archive', {{'note_id': str(i)}})\n"
        "    except BaseException:\n        pass",
        "call.__globals__",
        "call.__code__",
        "call.__closure__",
        "type(call).__dict__",
        "().__class__.__bases__[0].__subclasses__()",
        "object.__subclasses__()",
        "type.__subclasses__(type)",
        "getattr(__builtins__, 'open')('/etc/passwd')",
        "globals()",
        "vars()",
        "dir()",
        "eval(\"__import__('os').system('id')\")",
        "exec(\"import os\\nos.system('id')\")",
        "compile('1', 'x', 'exec')",
        "breakpoint()",
        "exit()",
        "quit()",
        "raise SystemExit(1)",
        "raise KeyboardInterrupt",
        "raise BaseException('out')",
        "raise MemoryError",
        "call(123)",
        "call(None, None)",
        "call('notes_create', 'not json {n}')",
        "call('notes_create', {{'title': 'x' * (10 ** 6)}})",
        "call('notes_create', [1, 2, 3])",
        "call('notes_create', {{'title': b'bytes'}})",
        "call('notes_create', {{'title': {{1, 2}}}})",
        "call('notes_create', {{'title': call}})",
        "call(*['notes_search'] * {n})",
        "call('notes_search', {{'title': 'x'}}, {{'extra': 1}}, 5)",
        "schema(None)",
        "schema('x' * 100000)",
        "discover(query='x' * 100000)",
        "discover(limit=10 ** {n})",
        "discover(nonsense=True)",
        "for i in range(10 ** {n}):\n    print('x' * 1000)",
        "print('x' * (10 ** {n}))",
        "import time\ntime.sleep(10 ** {n})",
        "import asyncio\nasyncio.run(asyncio.sleep(10 ** {n}))",
        "import random\nrandom.seed({n})\n[random.random() for _ in range(10 ** {n})]",
        "class A:\n    def __del__(self):\n        call('notes_delete', {{'note_id': 'n1'}})\nA()",
        "x = (\n",
        "def",
        "\x00\x01\x02",
        "'\\udcff' * {n}",
        "import json\njson.loads('[' * 100000)",
        "import re\nre.match('(a+)+$', 'a' * 40 + 'b')",
        "async def f():\n    return await call('notes_search', {{'title': 'a'}})\nimport asyncio\nasyncio.run(f())",
        "import asyncio\nasync def g():\n    return await asyncio.gather(*[call('notes_search', {{'title': 'a'}}) "
        "for _ in range({n})])\nasyncio.run(g())",
    ]


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY_TEST_SECRET", SECRET)


def test_a_thousand_hostile_programs_make_no_escape_and_no_crash(
    tmp_path: Path, calls: Calls, secret_env: None
) -> None:
    sentinel = tmp_path / "sentinel.txt"
    sentinel.write_text("untouched")
    audit = MemoryAuditLog()
    gw = Gateway(Catalog(ALL_TOOLS), audit=audit, policy=Policy((Rule("deny", names=("files_boom",)),)))
    settings = CodeSettings(enabled=True, cpu_seconds=0.05, memory_mb=16, max_calls=20, wall_seconds=5)
    programs = enable(gw, settings)
    rng = random.Random(26)
    templates = _templates(str(sentinel))
    statuses: dict[str, int] = {}
    try:
        for i in range(1000):
            template = templates[i] if i < len(templates) else rng.choice(templates)
            code = template.format(n=rng.randint(1, 12), hexid=f"{rng.getrandbits(128):032x}")
            result = run_sync(gw.call("run_code", {"code": code}, ToolContext(call_id=f"h{i}")))
            statuses[result.status] = statuses.get(result.status, 0) + 1
            text = render(result)
            json.loads(text)  # the model always gets JSON
            assert SECRET not in text, code
            assert "root:x:0:0" not in text, code
            if result.status == "confirmation_required":
                # Only ever a real destructive call, waiting for a person: never run, never approved.
                assert result.pending is not None and result.pending.tool in (
                    "notes_delete",
                    "notes_archive",
                ), code
        # Nothing escaped: the file is untouched, nothing else appeared, the hidden tool and the
        # destructive one never ran, and nothing was approved.
        assert sentinel.read_text() == "untouched"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["sentinel.txt"]
        assert not Path("/tmp/pwned").exists()
        assert "files_boom" not in calls.names()
        assert "notes_delete" not in calls.names()
        assert "notes_archive" not in calls.names()
        assert not [r for r in audit.records if r.outcome in ("approved", "approved_by_host")]
        assert set(statuses) <= {"ok", "error", "confirmation_required"}
        # And the gateway still serves: an ordinary program runs.
        after = run_sync(gw.call("run_code", {"code": "call('notes_search', {'title': 'ok'})"}))
        assert after.ok and after.output["result"] == ["ok"]
    finally:
        programs.close()
