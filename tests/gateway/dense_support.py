"""What the dense layer's tests share: the tiny generated model, the published one, a loopback hub."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gateway.search import encoder as search_encoder
from gateway.search import models
from gateway.search.models import ModelReference
from tests import model_files, tiny_bert


@contextmanager
def model_in_use(reference: ModelReference) -> Iterator[ModelReference]:
    """`reference` is the process's dense model for the duration (the previous one after)."""
    before = search_encoder.current_model()
    search_encoder.use_model(reference)
    try:
        yield reference
    finally:
        search_encoder.use_model(before)


def published_model() -> ModelReference:
    """all-MiniLM-L6-v2 from the published files fetched as test data, or the test skips."""
    directory = model_files.model_dir()
    if directory is None:
        pytest.skip(f"the published model's files are not fetched: {model_files.FETCH_COMMAND}")
    return ModelReference(path=directory)


def config_for(reference: ModelReference, *, path: bool = True) -> str:
    """A `[search.dense]` table naming `reference` (its path too unless `path` is False)."""
    files = ", ".join(f'"{name}" = "{sha}"' for name, sha in reference.files.items())
    lines = [
        "[search.dense]",
        f'model = "{reference.repo_id}"',
        f'revision = "{reference.revision}"',
        f"files = {{ {files} }}",
    ]
    if path and reference.path is not None:
        lines.append(f'path = "{reference.path}"')
    return "\n".join(lines) + "\n"


class Hub:
    """A loopback HTTP server answering as the Hugging Face hub does for `hf_hub_download`:
    HEAD and GET of /{repo}/resolve/{revision}/{file}."""

    def __init__(self, repo_id: str, revision: str, files: Mapping[str, bytes]) -> None:
        self.repo_id, self.revision, self.files = repo_id, revision, dict(files)
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _answer(self, body: bool) -> None:
                hub.requests.append(f"{self.command} {self.path}")
                prefix = f"/{hub.repo_id}/resolve/{hub.revision}/"
                name = self.path[len(prefix) :] if self.path.startswith(prefix) else None
                content = hub.files.get(name) if name else None
                if content is None:
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("X-Repo-Commit", hub.revision)
                self.send_header("ETag", f'"{hashlib.sha256(content).hexdigest()}"')  # as for LFS files
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                if body:
                    self.wfile.write(content)

            def do_HEAD(self) -> None:
                self._answer(body=False)

            def do_GET(self) -> None:
                self._answer(body=True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Hub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()


def hub_serving(directory: Path, reference: ModelReference, **replaced: bytes) -> Hub:
    """A hub serving the model files in `directory` (some `replaced`, by name with '.' as '_')."""
    files = {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}
    for key, content in replaced.items():
        files[key.replace("_", ".")] = content
    return Hub(reference.repo_id, reference.revision, files)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny generated model's files (written once a test session)."""
    pytest.importorskip("numpy")
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors")
    directory = tmp_path_factory.mktemp("tiny-bert")
    tiny_bert.write(directory)
    return directory


@pytest.fixture
def verified_record(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A verified-files record of the test's own: the user's cache directory is never touched."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user-cache")))
    return models.record_path()


@pytest.fixture
def tiny_model(tiny_model_dir: Path, verified_record: Path) -> Iterator[ModelReference]:
    """The tiny generated model is the process's dense model for the test."""
    with model_in_use(tiny_bert.reference(tiny_model_dir)) as reference:
        yield reference


@pytest.fixture
def real_model(verified_record: Path) -> Iterator[ModelReference]:
    """all-MiniLM-L6-v2, from its published files, is the process's dense model (or the test skips)."""
    with model_in_use(published_model()) as reference:
        yield reference
