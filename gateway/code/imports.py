"""What a program may import: json, re, math and datetime, as run_code's description tells the model.

The sandbox's interpreter knows more modules (os, sys, pathlib and a few others import there, and
reach no file, environment or network), but a program is held to the words the model read: an
import outside the list is refused before the program starts, as Python refuses a module it does
not have, and nothing has run.
"""

from __future__ import annotations

import ast

ALLOWED = ("json", "re", "math", "datetime")
"""The modules a program may import; `text.DESCRIPTION` names the same four."""


def refused_import(code: str) -> tuple[int, str, str] | None:
    """(line, that line's text, module) of the program's first import outside `ALLOWED`, or None.

    `import x`, `from x import y`, relative imports and `__import__(...)` (any argument but an
    allowed module's name) all count. A program that does not parse is left to the sandbox, which
    says where.
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    refused: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            refused += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] not in ALLOWED]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if node.level or module.split(".")[0] not in ALLOWED:
                refused.append((node.lineno, module))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            first = node.args[0] if node.args else None
            name = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
            if name is None or name.split(".")[0] not in ALLOWED:
                refused.append((node.lineno, name or "a module named at run time"))
    if not refused:
        return None
    line, module = min(refused)
    lines = code.splitlines()
    return line, lines[line - 1].strip() if 0 < line <= len(lines) else "", module
