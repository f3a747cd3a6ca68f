"""`python -m benchmarks.workspace_requests`: everyday requests over the workspace tools, first answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.datasets import read_jsonl
from benchmarks.workspace_requests import CHECK, REQUESTS
from services.workspace import CATALOG
from tests.services.test_workspace_discovery import EVERYDAY

ROOT = Path(__file__).resolve().parents[1]


def test_the_request_sets_name_workspace_tools_and_borrow_no_example_or_test_request() -> None:
    names = {d.name for d in CATALOG}
    examples = {r.lower() for d in CATALOG for r in d.example_requests}
    main, check = read_jsonl(REQUESTS), read_jsonl(CHECK)
    assert len(main) >= 150 and len(check) >= 50
    for request in (*main, *check):
        assert request["gold"] and set(request["gold"]) <= names, request
        assert request["query"].lower() not in examples | {q.lower() for q in EVERYDAY}, request
    assert not {r["query"] for r in main} & {r["query"] for r in check}


def test_the_benchmark_prints_top_1_and_top_5_next_to_the_baseline(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps({"query": "cancel my 3pm", "gold": ["calendar_delete_event"]}) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.workspace_requests", "--requests-file", str(requests), "--quiet"],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "top-1   top-5" in result.stdout
    assert "BM25 baseline (bm25s), schema text" in result.stdout
    lexical = next(line for line in result.stdout.splitlines() if "ours, lexical" in line)
    assert lexical.split()[-3:-1] == ["100.0", "100.0"]
