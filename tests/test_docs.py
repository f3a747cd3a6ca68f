"""Documentation that quotes model-facing text must quote the current text."""

from __future__ import annotations

import re
from pathlib import Path

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
