"""Tools defined as files: a Markdown definition (YAML front matter, a JSON schema) and a script.

    weather_lookup.md     front matter + the description the model reads + a ```json schema block
    weather_lookup.sh     the implementation: any executable (a shebang script or a binary)

`load_definition` turns one such pair into a `FileToolDefinition` or into problems, each
with its file and line; `directories` loads whole directories into a catalog. The format and
the security model are described in docs/file-tools.md.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..actions import ACTIONS, normalize_action
from ..audit import scrub, secret_name
from ..context import ToolContext
from ..definition import MAX_SUMMARY_LENGTH, ToolDefinition, definition_problems
from ..errors import ToolFailed
from ..names import NAME_PATTERN, name_problem
from ..policy import Audience
from ..schema_params import (
    SchemaParams,
    arguments_check,
    lazy_schema_params,
    params_model_name,
    required_properties,
    schema_problems,
)
from .scripts import OutputTooLarge, ScriptTimeout, environment, run_script

DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 3600.0
MAX_DEFINITION_BYTES = 256 * 1024
_STDERR_IN_MESSAGE = 300
# The gateway's own limit only backs up the script runner's, which reports the timeout itself.
_BACKSTOP_SECONDS = 10.0
# The failures a script may report itself (docs/file-tools.md); "declined" belongs to the confirmation gate.
_FAILURE_CODES = {
    "not_found",
    "conflict",
    "invalid",
    "permission_denied",
    "unavailable",
    "timeout",
    "internal",
}
_FENCE = re.compile(r"^(`{3,}|~{3,})[ \t]*json[ \t]+schema[ \t]*\n(.*?)^\1[ \t]*$\n?", re.M | re.S)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class DefinitionProblem:
    """Why a definition file was skipped, and where."""

    path: Path
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"


@dataclass(frozen=True, eq=False)
class FileToolDefinition(ToolDefinition):
    """A tool loaded from a definition file; `audience` is checked by the policy before anything else."""

    audience: Audience = field(default_factory=Audience)
    source: Path = Path()
    script: Path = Path()


class FrontMatter(BaseModel):
    """The keys a definition's front matter may set."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str | None = None
    category: str
    action: str
    summary: str
    read_only: bool = False
    destructive: bool | None = None
    concurrency_safe: bool = False
    roles: list[str] = []
    agents: list[str] = []
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0, le=MAX_TIMEOUT)
    env: list[str] = []
    script: str | None = None
    tags: list[str] = []
    examples: list[Any] = []  # requests (strings) and calls (mappings): the shared checks say which is wrong
    parameters: dict[str, Any] | None = None
    prompt: str | None = None


class _Problems:
    """Collects problems of one file; `at(key)` finds the line a front-matter key is on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.found: list[DefinitionProblem] = []
        self.lines: dict[str, int] = {}
        self.start = 1

    def add(self, message: str, line: int | None = None) -> None:
        self.found.append(DefinitionProblem(self.path, line, message))

    def at(self, key: str | int | None) -> int:
        return self.lines.get(str(key), self.start) if key is not None else self.start


def load_definition(path: Path) -> tuple[FileToolDefinition | None, list[DefinitionProblem]]:
    """Read one definition file and find its script; the definition, or every problem with its line."""
    problems = _Problems(path)
    try:
        if path.stat().st_size > MAX_DEFINITION_BYTES:
            problems.add(f"larger than {MAX_DEFINITION_BYTES:,} bytes")
            return None, problems.found
        text = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError) as exc:
        problems.add(f"cannot be read: {exc}")
        return None, problems.found
    split = _split(text, problems)
    if split is None:
        return None, problems.found
    raw, body, body_line = split
    try:
        meta = FrontMatter.model_validate(raw)
    except ValidationError as exc:
        for error in exc.errors(include_url=False, include_input=False):
            key = error["loc"][0] if error["loc"] else None
            where = ".".join(str(p) for p in error["loc"]) or "front matter"
            msg = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
            problems.add(f"{where}: {msg}", problems.at(key))
        return None, problems.found
    definition = _build(path, meta, body, body_line, problems)
    return (None if problems.found else definition), problems.found


def _split(text: str, problems: _Problems) -> tuple[dict[str, Any], str, int] | None:
    """The front matter (parsed, with each key's line) and the Markdown body with its first line."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        problems.add("must start with a front-matter block: a line '---', YAML keys, then '---'", 1)
        return None
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        problems.add("the front-matter block is not closed by a line '---'", 1)
        return None
    source = "".join(lines[1:end])
    try:
        node = yaml.compose(source, Loader=yaml.SafeLoader)
        raw = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problems.add(
            f"front matter is not valid YAML: {getattr(exc, 'problem', None) or exc}",
            mark.line + 2 if mark is not None else 2,
        )
        return None
    if not isinstance(raw, dict) or not isinstance(node, yaml.MappingNode):
        problems.add("front matter must be a mapping of keys to values", 2)
        return None
    problems.start = 2
    problems.lines = {}
    for key, _ in node.value:
        if str(key.value) in problems.lines:
            problems.add(f"{key.value}: set twice", key.start_mark.line + 2)
        problems.lines[str(key.value)] = key.start_mark.line + 2
    if problems.found:
        return None
    return raw, "".join(lines[end + 1 :]), end + 2


def _build(
    path: Path, meta: FrontMatter, body: str, body_line: int, problems: _Problems
) -> FileToolDefinition | None:
    name = meta.name if meta.name is not None else path.stem
    if (p := name_problem(name)) is not None:
        problems.add(p, problems.at("name"))
    elif name != path.stem:
        problems.add(f"name {name!r} must match the file name ({path.name})", problems.at("name"))
    if not NAME_PATTERN.match(meta.category):
        problems.add(f"category {meta.category!r} must match [a-z0-9_]+", problems.at("category"))
    action = normalize_action(meta.action)
    if action is None:
        problems.add(
            f"action {meta.action!r} is not a known verb; use one of {', '.join(ACTIONS)}",
            problems.at("action"),
        )
    summary = meta.summary.strip()
    if not summary or "\n" in summary or len(summary) > MAX_SUMMARY_LENGTH:
        problems.add(
            f"summary must be one line of 1 to {MAX_SUMMARY_LENGTH} characters", problems.at("summary")
        )
    if meta.read_only and meta.destructive:
        problems.add("cannot be both read_only and destructive", problems.at("destructive"))
    for key, values in (("roles", meta.roles), ("agents", meta.agents), ("tags", meta.tags)):
        if any(not v.strip() for v in values):
            problems.add(f"{key} must not contain empty names", problems.at(key))
    for name_ in meta.env:
        if not _ENV_NAME.match(name_):
            problems.add(f"env: {name_!r} is not a variable name", problems.at("env"))
    schema, description = _schema(meta, body, body_line, problems)
    if not description.strip():
        problems.add("the Markdown body (the description the model reads) is empty", body_line)
    script = _script(path, meta.script, problems)
    if problems.found or schema is None or script is None or action is None:
        return None
    definition = FileToolDefinition(
        name=name,
        category=meta.category,
        action=action,
        verb=meta.action,
        summary=summary,
        description=description.strip(),
        # The schema was checked above; its model is made on first use, so a directory of
        # thousands of definitions costs one check each as it is read, not a model each.
        params=lazy_schema_params(params_model_name(name), schema),
        required_params=required_properties(schema),
        handler=_handler(name, script.absolute(), path.parent.absolute(), meta),
        read_only=meta.read_only,
        destructive=meta.destructive,
        concurrency_safe=meta.concurrency_safe,
        tags=tuple(meta.tags),
        examples=tuple(meta.examples),
        timeout=meta.timeout + _BACKSTOP_SECONDS,
        prompt=meta.prompt,
        audience=Audience(frozenset(meta.roles), frozenset(meta.agents)),
        source=path,
        script=script,
    )
    # The shared checks (examples against the schema, among others) catch what is left.
    for p in definition_problems(definition, check_call=arguments_check(params_model_name(name), schema)):
        problems.add(p.removeprefix(f"{name}: "), problems.at("examples" if "example" in p else None))
    return definition


def _schema(
    meta: FrontMatter, body: str, body_line: int, problems: _Problems
) -> tuple[dict[str, Any] | None, str]:
    """The parameters' schema (front matter `parameters`, or one ```json schema block) and the rest of the body."""
    blocks = list(_FENCE.finditer(body))
    line = body_line + body.count("\n", 0, blocks[0].start()) if blocks else problems.at("parameters")
    description = _FENCE.sub("", body)
    if len(blocks) > 1 or (blocks and meta.parameters is not None):
        problems.add("give the parameters once: one ```json schema block or the `parameters` key", line)
        return None, description
    schema: Any
    if blocks:
        try:
            schema = json.loads(blocks[0].group(2))
        except json.JSONDecodeError as exc:
            problems.add(f"the json schema block is not valid JSON: {exc.msg}", line + exc.lineno)
            return None, description
    else:
        schema = meta.parameters if meta.parameters is not None else {"type": "object", "properties": {}}
    for msg in _schema_shape(schema):
        problems.add(f"parameters: {msg}", line)
    return (None if problems.found else dict(schema)), description


def _schema_shape(schema: Any) -> list[str]:
    found = schema_problems(schema)
    if found:
        return found
    # As for Pydantic tools: unknown parameters are errors, and every parameter is described.
    extra = schema.setdefault("additionalProperties", False)
    if extra is not False:
        found.append("additionalProperties must be false (or left out): unknown parameters are errors")
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        return [*found, "properties must be an object"]
    for key, sub in properties.items():
        if not (isinstance(sub, Mapping) and str(sub.get("description") or "").strip()):
            found.append(f"parameter {key!r} has no description (the model reads it)")
    return found


def _script(path: Path, named: str | None, problems: _Problems) -> Path | None:
    """The executable that implements the tool: `script:` or the one sibling with the same stem."""
    folder = path.parent
    if named is not None:
        relative = Path(named)
        if relative.is_absolute() or ".." in relative.parts:
            problems.add("script must be a path inside the definition's directory", problems.at("script"))
            return None
        candidates = [folder / relative]
    else:
        candidates = sorted(
            p
            for p in folder.iterdir()
            if (p.name == path.stem or (p.stem == path.stem and p.suffix != ".md"))
            and not p.name.endswith("~")
            and p.is_file()
        )
    where = problems.at("script") if named is not None else problems.start
    if not candidates or not candidates[0].is_file():
        problems.add(
            f"no script: put an executable {path.stem}.sh (or {path.stem}, {path.stem}.py, ...) next to it, "
            "or name one with `script:`",
            where,
        )
        return None
    if len(candidates) > 1:
        names = ", ".join(p.name for p in candidates)
        problems.add(f"more than one script could be meant ({names}); name one with `script:`", where)
        return None
    if not os.access(candidates[0], os.X_OK):
        problems.add(f"script {candidates[0].name} is not executable (chmod +x it)", where)
        return None
    return candidates[0]


def _handler(name: str, script: Path, cwd: Path, meta: FrontMatter) -> Any:
    async def run(params: SchemaParams, ctx: ToolContext) -> Any:
        arguments = params.arguments
        fixed = {"GATEWAY_TOOL": name, "GATEWAY_CALL_ID": ctx.call_id, "GATEWAY_PRINCIPAL": ctx.principal.id}
        if ctx.principal.agent:
            fixed["GATEWAY_AGENT"] = ctx.principal.agent
        env = environment(passthrough=meta.env, fixed=fixed, arguments=arguments)
        stdin = json.dumps(arguments, ensure_ascii=False).encode()
        try:
            done = await run_script(script, stdin, env=env, cwd=cwd, timeout=meta.timeout)
        except ScriptTimeout:
            raise ToolFailed("timeout", f"{name} did not finish within {meta.timeout:g} seconds.") from None
        except OutputTooLarge:
            raise ToolFailed(
                "invalid", f"{name} produced too much output and was stopped; ask for less."
            ) from None
        except OSError as exc:
            raise ToolFailed("internal", f"{name} could not be started ({exc.strerror}).") from None
        # What the script was given as a secret never comes back from it, to the model or a log.
        secrets = [env[n] for n in meta.env if n in env and secret_name(n)]
        return _result(name, done.returncode, done.stdout, done.stderr_tail, secrets)

    run.__name__ = name
    return run


def _result(name: str, returncode: int, stdout: bytes, stderr: bytes, secrets: list[str]) -> Any:
    """Stdout as JSON when it parses, else as text; a non-zero exit as a structured failure.

    `secrets` are replaced by `[redacted]` in both (in JSON, after parsing: escapes cannot hide one).
    """
    text = stdout.decode("utf-8", errors="replace")
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = text.rstrip("\n")
    value = scrub(value, secrets)
    if returncode == 0:
        return value
    error = value.get("error") if isinstance(value, dict) else None
    if (
        isinstance(error, dict)
        and error.get("code") in _FAILURE_CODES
        and isinstance(error.get("message"), str)
    ):
        raise ToolFailed(error["code"], error["message"])
    how = f"was killed by signal {-returncode}" if returncode < 0 else f"exited with status {returncode}"
    # Scrubbed before it is cut, so no part of a secret is left at the cut.
    tail = " ".join(
        scrub(stderr.decode("utf-8", errors="replace"), secrets).split()
    )  # one line: the model sees it
    if len(tail) > _STDERR_IN_MESSAGE:
        tail = "..." + tail[-_STDERR_IN_MESSAGE:]
    raise ToolFailed("internal", f"{name} {how}" + (f": {tail}" if tail else "."))
