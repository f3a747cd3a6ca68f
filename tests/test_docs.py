"""Documentation that quotes model-facing text must quote the current text."""

from __future__ import annotations

import re
from pathlib import Path

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
