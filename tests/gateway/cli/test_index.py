"""`gateway index`: the search index built ahead, every layer, and cached for the next start."""

from __future__ import annotations

import gc
import json
import os
import weakref
from pathlib import Path
from typing import Any

import pytest

from gateway.cli import main
from gateway.search import dense as search_dense
from gateway.search import encoder as search_encoder
from gateway.search import semantic_available
from tests import tiny_bert

from ..dense_support import config_for

needs_dense = pytest.mark.skipif(
    not (semantic_available() and search_encoder.packages_installed()),
    reason="the 'dense' extra is not installed",
)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's cache directory of these commands (the search index lives in it)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = tmp_path / "gateway.toml"  # the local workspace, in a directory of its own
    config.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    monkeypatch.setenv("GATEWAY_CONFIG", str(config))
    return tmp_path / "cache" / "metatool-gateway" / "search-index"


@pytest.fixture
def tiny_configured(cache: Path, tiny_model_dir: Path) -> None:
    """The configured dense model is the tiny generated one (in its own directory)."""
    config = Path(os.environ["GATEWAY_CONFIG"])
    config.write_text(config.read_text() + config_for(tiny_bert.reference(tiny_model_dir)))


def _index(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["index", "--json", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_index_reports_the_layers_it_built(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _index(capsys)  # the tests' gateways run with GATEWAY_DENSE=off
    report = json.loads(out)
    assert code == 0
    assert report["tools"] > 20
    assert report["layers"] == (["lexical", "semantic"] if semantic_available() else ["lexical"])
    assert report["cache_dir"] == str(cache)
    assert main(["index"]) == 0
    line = capsys.readouterr().out
    assert line.startswith(f"{report['tools']} tools indexed in ") and line.rstrip().endswith(
        f"(cached in {cache})"
    )


@needs_dense
@pytest.mark.usefixtures("tiny_configured")
def test_index_waits_for_a_background_encoding_and_caches_it(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_DENSE", "on")
    monkeypatch.setattr(search_dense, "_READY", weakref.WeakSet())  # other tests' layers lend no rows
    monkeypatch.setattr(search_dense, "DENSE_SYNC_LIMIT", 2)  # the workspace: encoded in the background
    # A one-shot search never starts an encoding it would not see end: it ranks without the layer,
    # says so, and encodes nothing.
    encoded: list[int] = []
    original = search_encoder.SentenceEncoder.encode

    def counting(self: search_encoder.SentenceEncoder, texts: Any, *args: Any, **kwargs: Any) -> Any:
        encoded.append(len(texts))
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(search_encoder.SentenceEncoder, "encode", counting)
    assert main(["discover", "what do I have on tomorrow", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["tools"]
    assert "has not encoded this catalog yet" in err and "'gateway index'" in err
    assert sum(encoded) <= 1  # the request alone, never a tool
    gc.collect()
    code, out, err = _index(capsys)
    assert code == 0 and json.loads(out)["layers"][-1] == "dense"
    assert "Encoding" in err  # progress, on stderr
    assert len(list(cache.glob("dense-*.npy"))) == 1
    # The next command loads the vectors: ready at once, so nothing to say.
    monkeypatch.setattr(search_dense, "_READY", weakref.WeakSet())
    assert main(["discover", "what do I have on tomorrow"]) == 0
    assert "has not encoded" not in capsys.readouterr().err


@needs_dense
@pytest.mark.usefixtures("tiny_configured")
def test_index_fails_when_the_encoding_does(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_DENSE", "on")
    monkeypatch.setattr(search_dense, "_READY", weakref.WeakSet())
    monkeypatch.setattr(search_dense, "DENSE_SYNC_LIMIT", 2)

    def broken(self: object, texts: object) -> None:
        raise MemoryError("no room for the vectors")

    monkeypatch.setattr(search_encoder.SentenceEncoder, "encode", broken)
    code, out, err = _index(capsys)
    assert code == 2 and not out
    assert "could not encode the catalog" in err and "no room for the vectors" in err
    assert not list(cache.glob("dense-*.npy"))
