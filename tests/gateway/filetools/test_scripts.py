"""Running script tools through invoke_tool: input, output, failures, limits and hostile parameters."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import textwrap
from pathlib import Path

import pytest

from gateway import MemoryAuditLog
from gateway.filetools import scripts
from gateway.filetools.scripts import environment, run_script

from ..filetools_support import PYTHON, TEXT_SCHEMA, dead, gateway_over, invoke, wait_until_dead, write_tool

HOSTILE = [
    "$(touch pwned_subst)",
    "`touch pwned_backtick`",
    "; touch pwned_semicolon",
    "&& touch pwned_and || reboot",
    "| touch pwned_pipe",
    "'; touch pwned_quote; echo '",
    'x"; touch pwned_dquote; echo "',
    "line one\ntouch pwned_newline",
    "${PATH} $HOME *",
    "-rf /",
]


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    return tmp_path / "tools"


def test_parameters_arrive_as_json_on_stdin_and_json_output_is_the_result(tools: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "A city."},
            "days": {"type": "integer", "description": "How many days."},
            "options": {"type": "object", "description": "Anything nested."},
        },
    }
    write_tool(tools, "echo_json", parameters=schema)
    gw, _ = gateway_over(tools)
    arguments = {"city": "Zürich", "days": 3, "options": {"units": ["C"]}}
    assert invoke(gw, "echo_json", arguments)["stdin"] == arguments


def test_flat_scalars_also_arrive_as_param_variables(tools: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "A city."},
            "days": {"type": "integer", "description": "How many days."},
            "exact": {"type": "boolean", "description": "A flag."},
            "nested": {"type": "object", "description": "Not flat: stdin only."},
        },
    }
    write_tool(tools, "echo_env", parameters=schema)
    gw, _ = gateway_over(tools)
    env = invoke(gw, "echo_env", {"city": "Oslo", "days": 2, "exact": False, "nested": {"a": 1}})["env"]
    assert {k: v for k, v in env.items() if k.startswith("PARAM_")} == {
        "PARAM_CITY": "Oslo",
        "PARAM_DAYS": "2",
        "PARAM_EXACT": "false",
    }


def test_text_output_is_returned_as_text(tools: Path) -> None:
    write_tool(tools, "say_hello", "#!/bin/sh\necho 'hello, world'\necho 'second line'\n", suffix=".sh")
    gw, _ = gateway_over(tools)
    assert invoke(gw, "say_hello", {}) == "hello, world\nsecond line"


def test_the_script_runs_in_the_tools_directory_with_a_clean_environment(
    tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_TEST_SECRET", "s3cret")
    monkeypatch.setenv("ALLOWED_SETTING", "passed on")
    write_tool(tools, "show_env", env=["ALLOWED_SETTING", "NOT_SET_ANYWHERE"])
    gw, _ = gateway_over(tools)
    out = invoke(gw, "show_env", {})
    assert out["cwd"] == str(tools)
    env = out["env"]
    env.pop("LC_CTYPE", None)  # the interpreter may add it for its own locale
    call_id = env.pop("GATEWAY_CALL_ID")
    assert len(call_id) == 12
    assert env == {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "ALLOWED_SETTING": "passed on",
        "GATEWAY_TOOL": "show_env",
        "GATEWAY_PRINCIPAL": "local",
    }


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_parameter_strings_arrive_as_inert_data(tmp_path: Path, tools: Path, text: str) -> None:
    write_tool(tools, "echo_py", parameters=TEXT_SCHEMA)
    # A shell script as a careless author writes it: unquoted as well as quoted.
    careless = '#!/bin/sh\nprintf "%s" "$PARAM_TEXT"\necho $PARAM_TEXT > /dev/null\n'
    write_tool(tools, "echo_sh", careless, suffix=".sh", parameters=TEXT_SCHEMA)
    gw, _ = gateway_over(tools)

    assert invoke(gw, "echo_py", {"text": text})["stdin"] == {"text": text}
    assert invoke(gw, "echo_py", {"text": text})["env"]["PARAM_TEXT"] == text
    assert invoke(gw, "echo_sh", {"text": text}) == text.rstrip("\n")
    assert sorted(p.name for p in tmp_path.rglob("pwned*")) == []


def test_a_non_zero_exit_is_a_failure_with_the_end_of_stderr(tools: Path) -> None:
    script = PYTHON + textwrap.dedent(
        """\
        import sys
        sys.stderr.write("x" * 100_000 + "\\nbackend refused the request")
        sys.exit(3)
        """
    )
    write_tool(tools, "failing", script)
    gw, _ = gateway_over(tools)
    error = invoke(gw, "failing", {})["error"]
    assert error["code"] == "internal"
    assert error["message"].startswith("failing exited with status 3: ...xxx")
    assert error["message"].endswith("xxx backend refused the request") and len(error["message"]) < 400
    assert error["next_step"] == "The tool failed unexpectedly; do not retry unchanged, tell the user."


def test_a_script_may_report_its_own_failure_code(tools: Path) -> None:
    script = (
        "#!/bin/sh\n"
        'echo \'{"error": {"code": "not_found", "message": "No city called Atlantis."}}\'\n'
        "exit 1\n"
    )
    write_tool(tools, "lookup_city", script, suffix=".sh")
    gw, _ = gateway_over(tools)
    assert invoke(gw, "lookup_city", {}) == {
        "error": {
            "code": "not_found",
            "message": "No city called Atlantis.",
            "next_step": "Check the id: search or list to find the right item, then call again with it.",
        }
    }


def test_a_script_killed_by_a_signal_says_so(tools: Path) -> None:
    write_tool(tools, "self_kill", "#!/bin/sh\nkill -9 $$\n", suffix=".sh")
    gw, _ = gateway_over(tools)
    assert invoke(gw, "self_kill", {})["error"]["message"] == "self_kill was killed by signal 9."


def test_a_script_that_cannot_start_is_an_internal_failure(tools: Path) -> None:
    write_tool(tools, "no_shebang", "echo this has no interpreter line\n", suffix=".sh")
    gw, _ = gateway_over(tools)
    error = invoke(gw, "no_shebang", {})["error"]
    assert error["code"] == "internal"
    assert error["message"] == "no_shebang could not be started (Exec format error)."


def test_invalid_parameters_are_refused_before_the_script_runs(tools: Path) -> None:
    write_tool(tools, "touch_marker", "#!/bin/sh\ntouch ran\n", suffix=".sh", parameters=TEXT_SCHEMA)
    gw, _ = gateway_over(tools)
    assert invoke(gw, "touch_marker", {"text": 5, "colour": "red"}) == {
        "error": {
            "code": "invalid_arguments",
            "message": "The parameters for touch_marker are invalid.",
            "problems": [
                {"loc": "colour", "msg": "Unknown parameter; allowed parameters: text"},
                {"loc": "text", "msg": "Must be of type string"},
            ],
            "next_step": "Fix the listed problems and call invoke_tool again; call get_tool_schema "
            "with tool_name 'touch_marker' to see every parameter.",
        }
    }
    assert not (tools / "ran").exists()


def test_a_hung_script_is_killed_with_its_children_at_its_timeout(tools: Path) -> None:
    script = "#!/bin/sh\nsleep 300 &\necho $! > child.pid\nsleep 300\n"
    write_tool(tools, "hangs", script, suffix=".sh", timeout=1)
    audit = MemoryAuditLog()
    gw, _ = gateway_over(tools, audit=audit)

    assert invoke(gw, "hangs", {}) == {
        "error": {
            "code": "timeout",
            "message": "hangs did not finish within 1 seconds.",
            "next_step": "The tool took too long; narrow the request or tell the user it timed out.",
        }
    }
    assert wait_until_dead(int((tools / "child.pid").read_text()))
    assert [(r.tool, r.outcome, r.error_code) for r in audit.records] == [("hangs", "failed", "timeout")]


def test_children_left_behind_by_a_finished_script_are_killed(tools: Path) -> None:
    # The background child keeps stdout open; the call must not wait for it.
    script = "#!/bin/sh\nsleep 300 &\necho $! > child.pid\necho done\n"
    write_tool(tools, "leaves_child", script, suffix=".sh", timeout=60)
    gw, _ = gateway_over(tools)
    assert invoke(gw, "leaves_child", {}) == "done"
    assert wait_until_dead(int((tools / "child.pid").read_text()))


# Double-forks a child into a session of its own (out of the script's process group), which holds
# stdout and stderr open; the script reports its pid once it runs, then exits or hangs.
ESCAPES = PYTHON + textwrap.dedent(
    """\
    import json, os, sys
    read_end, write_end = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(write_end, str(os.getpid()).encode())
            os.execv("/bin/sleep", ["sleep", "300"])
        os._exit(0)
    os.close(write_end)
    escaped = int(os.read(read_end, 32))
    os.wait()
    print(json.dumps({"escaped": escaped}), flush=True)
    with open("escaped.pid", "w") as f:
        f.write(str(escaped))
    if os.environ.get("PARAM_HANG") == "true":
        os.kill(os.getpid(), 19)  # SIGSTOP: still there at its timeout
    """
)


def test_a_child_that_left_the_session_neither_holds_the_call_nor_outlives_it(tools: Path) -> None:
    write_tool(tools, "escapes", ESCAPES, timeout=30)
    gw, _ = gateway_over(tools)
    result = invoke(gw, "escapes", {})
    escaped = int((tools / "escaped.pid").read_text())
    assert result == {"escaped": escaped}  # the script's own result, not a timeout
    assert dead(escaped)  # already gone when the call returned


def test_without_the_reaper_a_child_holding_the_output_does_not_hold_the_result(
    tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where there is no child subreaper (not Linux), the escaped child lives on; the call still
    # ends with the script, after a short grace for the pipes, not at the timeout.
    monkeypatch.setattr(scripts, "REAPER", False)
    write_tool(tools, "escapes", ESCAPES, timeout=30)
    gw, _ = gateway_over(tools)
    try:
        assert invoke(gw, "escapes", {}) == {"escaped": int((tools / "escaped.pid").read_text())}
    finally:
        os.kill(int((tools / "escaped.pid").read_text()), signal.SIGKILL)


def test_a_child_that_left_the_session_is_killed_at_the_scripts_timeout(tools: Path) -> None:
    schema = {"type": "object", "properties": {"hang": {"type": "boolean", "description": "Hang."}}}
    write_tool(tools, "escapes_and_hangs", ESCAPES, timeout=1, parameters=schema)
    gw, _ = gateway_over(tools)
    assert invoke(gw, "escapes_and_hangs", {"hang": True})["error"]["code"] == "timeout"
    assert dead(int((tools / "escaped.pid").read_text()))


def test_a_configured_secret_a_script_prints_never_reaches_the_model_or_the_logs(
    tools: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "tk-5e2f0c9a7b41d3"
    monkeypatch.setenv("TICKETS_TOKEN", secret)
    monkeypatch.setenv("TICKETS_HOST", "tickets.example")
    to_stderr = PYTHON + textwrap.dedent(
        """\
        import os, sys
        sys.stderr.write(f"auth failed for token {os.environ['TICKETS_TOKEN']}\\n")
        sys.exit(2)
        """
    )
    to_stdout = PYTHON + textwrap.dedent(
        """\
        import json, os
        token, host = os.environ["TICKETS_TOKEN"], os.environ["TICKETS_HOST"]
        print(json.dumps({"host": host, "url": f"https://{host}/?key={token}", token: [token]}))
        """
    )
    env = ["TICKETS_TOKEN", "TICKETS_HOST"]
    write_tool(tools, "leaks_to_stderr", to_stderr, env=env)
    write_tool(tools, "leaks_to_stdout", to_stdout, env=env)
    audit = MemoryAuditLog()
    gw, _ = gateway_over(tools, audit=audit)
    caplog.set_level(logging.DEBUG)

    failed = invoke(gw, "leaks_to_stderr", {})
    answered = invoke(gw, "leaks_to_stdout", {})

    assert (
        failed["error"]["message"] == "leaks_to_stderr exited with status 2: auth failed for token [redacted]"
    )
    assert answered == {
        "host": "tickets.example",  # not a secret by its name: left as it is
        "url": "https://tickets.example/?key=[redacted]",
        "[redacted]": ["[redacted]"],
    }
    assert secret not in caplog.text + repr(audit.records)


def test_an_output_flood_is_stopped(tools: Path) -> None:
    write_tool(tools, "floods", "#!/bin/sh\nexec yes flooding\n", suffix=".sh", timeout=60)
    gw, _ = gateway_over(tools)
    assert invoke(gw, "floods", {}) == {
        "error": {
            "code": "invalid",
            "message": "floods produced too much output and was stopped; ask for less.",
            "next_step": "Change the request as the message says; retrying it unchanged will fail again.",
        }
    }


def test_a_stderr_flood_is_trimmed_not_fatal(tools: Path) -> None:
    script = PYTHON + textwrap.dedent(
        """\
        import sys
        for _ in range(200):
            sys.stderr.write("noise " * 2000)
        print('{"ok": true}')
        """
    )
    write_tool(tools, "noisy", script)
    gw, _ = gateway_over(tools)
    assert invoke(gw, "noisy", {}) == {"ok": True}


def test_a_cancelled_call_kills_the_script_and_its_children(tmp_path: Path) -> None:
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    script = tmp_path / "waits.sh"
    script.write_text('#!/bin/sh\nsleep 300 &\necho "$$ $!" > "$FIFO"\nsleep 300\n')
    script.chmod(0o755)

    async def cancel_once_started() -> list[int]:
        env = environment(fixed={"FIFO": str(fifo)})
        task = asyncio.ensure_future(run_script(script, b"{}", env=env, cwd=tmp_path, timeout=600))
        pids = [int(p) for p in (await asyncio.to_thread(fifo.read_text)).split()]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pids

    for pid in asyncio.run(cancel_once_started()):
        assert wait_until_dead(pid)
