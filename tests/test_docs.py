"""Documentation that quotes the code (model-facing text, a real session, limits, messages) quotes it as it is."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from benchmarks.datasets import WHERE_FROM
from gateway.errors import ErrorCode
from gateway.meta_tools import DiscoverParams
from gateway.search import MAX_QUERY_CHARS, MAX_QUERY_TERMS

from . import concepts_session

ROOT = Path(__file__).resolve().parents[1]


def test_every_error_example_in_the_docs_is_a_pinned_rendering() -> None:
    snapshots = (ROOT / "tests/gateway/__snapshots__/test_rendering.ambr").read_text()
    pinned = {
        value.replace("\\'", "'").replace("\\\\", "\\")
        for value in re.findall(r"^  '(.*)'$", snapshots, re.M)
    }
    examples = re.findall(r"```json\n(.*?)\n```", (ROOT / "docs/errors.md").read_text(), re.S)
    assert len(examples) >= 10
    assert [e for e in examples if e not in pinned] == []


def test_the_table_of_codes_names_every_code_the_model_can_read() -> None:
    text = (ROOT / "docs/errors.md").read_text()
    table = text[text.index("## Codes") : text.index("## Examples")]
    named = set(re.findall(r"^\| (.*?) \|", table, re.M)[1:])
    in_rows = {code for row in named for code in re.findall(r"`([a-z_]+)`", row)}
    assert set(typing.get_args(ErrorCode)) - in_rows == set()
    assert in_rows - set(typing.get_args(ErrorCode)) == set()


def test_the_readme_python_example_runs(capsys: object) -> None:
    source = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)[0]
    namespace: dict[str, object] = {}
    exec(compile(source, "README.md", "exec"), namespace)
    assert namespace["tools"] and len(namespace["tools"]) == 3  # type: ignore[arg-type]


def test_the_real_session_in_concepts_is_what_a_real_run_prints() -> None:
    # A changed summary, result, error text or step fails here; rewrite the page with
    # `python -m tests.concepts_session --write`.
    fresh = concepts_session.session()
    assert fresh.count("model -> ") == 6 and "confirmation_required" in fresh
    assert concepts_session.normalise(concepts_session.on_page()) == concepts_session.normalise(fresh)


def test_ids_are_numbered_by_first_appearance_so_a_changed_id_shape_still_fails() -> None:
    run = "id a1b2c3d4e5f60718 then 0123456789abcdef0123456789abcdef then a1b2c3d4e5f60718"
    assert concepts_session.normalise(run) == "id <id 1> then <id 2> then <id 1>"
    assert concepts_session.normalise("id a1b2c3d4e5f6") == "id a1b2c3d4e5f6"  # not an id of the run's shape


def test_discovery_states_both_query_limits_the_code_applies() -> None:
    page = " ".join((ROOT / "docs/discovery.md").read_text().split())
    schema = DiscoverParams.model_json_schema()["properties"]["query"]["anyOf"][0]
    assert f"accepts a query of at most {schema['maxLength']:,} characters" in page
    assert f"cuts its query at {MAX_QUERY_CHARS:,} characters" in page
    assert f"at most the {MAX_QUERY_TERMS} rarest" in page


@pytest.mark.parametrize(
    ("module", "args"),
    [("benchmarks.discovery", ["{missing}/metatool"]), ("benchmarks.speed", ["--eval-dir", "{missing}"])],
)
def test_a_benchmark_without_its_data_says_where_the_data_comes_from(
    module: str, args: list[str], tmp_path: Path
) -> None:
    argv = [a.format(missing=tmp_path / "eval") for a in args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", module, *argv],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"{module}: no dataset at {tmp_path / 'eval' / 'metatool'}: ")
    assert WHERE_FROM in done.stderr and "queries.jsonl" in WHERE_FROM and "tools.jsonl" in WHERE_FROM
