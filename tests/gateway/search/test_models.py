"""The dense layer's model by reference: found without a network, verified, pulled on purpose only.

These tests use a tiny BERT the suite generates (tests/tiny_bert.py); `gateway model pull` fetches
it from a loopback server answering as the Hugging Face hub, never the real hub.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.errors import ConfigError
from gateway.runtime import dense_model
from gateway.search import encoder as search_encoder
from gateway.search import models
from gateway.search.models import DEFAULT_MODEL, ModelMismatch, ModelReference
from gateway.settings.loading import load_settings
from tests import tiny_bert

from ..dense_support import config_for, hub_serving, model_in_use

np = pytest.importorskip("numpy")
pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")
pytest.importorskip("huggingface_hub")

ROOT = Path(__file__).resolve().parents[3]
TEXTS = ["book a meeting with Sam next Tuesday", "delete a file", "x"]
# The tiny model's vectors (first six dimensions), computed once with the encoder of the published
# figures: any change to tokenizing, masking, layers, pooling or normalising moves them.
REFERENCE = [
    [-0.175343, -0.137751, 0.03233, 0.159829, 0.074184, 0.185183],
    [-0.272428, -0.160816, 0.032332, 0.15555, 0.084959, 0.147848],
    [0.027823, -0.170637, -0.004048, -0.01401, 0.128643, 0.159067],
]


def _copy(source: Path, target: Path) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for name in models.LOADED_FILES:
        (target / name).write_bytes((source / name).read_bytes())
    return target


def test_the_default_model_is_pinned_by_revision_and_the_hash_of_every_file_it_reads() -> None:
    assert DEFAULT_MODEL.repo_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert len(DEFAULT_MODEL.revision) == 40
    assert sorted(DEFAULT_MODEL.files) == sorted(models.LOADED_FILES)
    assert all(len(sha) == 64 for sha in DEFAULT_MODEL.files.values())


def test_the_tiny_model_gives_the_reference_vectors(tiny_model: ModelReference) -> None:
    encoder = search_encoder.sentence_encoder()
    assert encoder is not None
    vectors = encoder.encode(TEXTS)
    assert np.allclose(vectors[:, :6], REFERENCE, atol=2e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_padding_is_masked_so_a_batch_gives_each_text_its_vector_alone(tiny_model: ModelReference) -> None:
    encoder = search_encoder.sentence_encoder()
    assert encoder is not None
    batch = encoder.encode([*TEXTS, "a much longer request to list every task due next week"])
    for i, text in enumerate(TEXTS):
        assert np.allclose(encoder.encode([text])[0], batch[i], atol=1e-6)


def test_pooling_is_the_mean_of_the_token_states_truncated_to_the_models_positions(
    tiny_model: ModelReference,
) -> None:
    encoder = search_encoder.sentence_encoder()
    assert encoder is not None
    long = " ".join(["meeting"] * 200)
    limit = tiny_bert.POSITIONS
    assert len(encoder.tokenizer.encode(long).ids) == limit
    cut = " ".join(["meeting"] * (limit - 2))  # [CLS] and [SEP] take two positions
    assert np.allclose(encoder.encode([long])[0], encoder.encode([cut])[0], atol=1e-6)


def test_the_encoder_is_loaded_once_per_model(tiny_model: ModelReference) -> None:
    assert search_encoder.sentence_encoder() is search_encoder.sentence_encoder()


@pytest.mark.parametrize("name", models.LOADED_FILES)
def test_any_changed_file_is_refused_naming_the_command_to_run(
    name: str, tiny_model_dir: Path, tmp_path: Path, verified_record: Path
) -> None:
    directory = _copy(tiny_model_dir, tmp_path / "model")
    reference = tiny_bert.reference(tiny_model_dir)
    reference = ModelReference(reference.repo_id, reference.revision, reference.files, directory)
    target = directory / name
    if name == "config.json":  # six layers to one is the kind of edit that loads silently
        config = json.loads(target.read_text())
        config["num_hidden_layers"] = 1
        target.write_text(json.dumps(config))
    else:
        target.write_bytes(target.read_bytes()[:-1] + b" ")
    with (
        pytest.raises(ModelMismatch, match=rf"{name} of tests/tiny-bert.*gateway model pull"),
        model_in_use(reference),
    ):
        search_encoder.sentence_encoder()


def test_a_missing_model_is_one_line_naming_the_command(tmp_path: Path, verified_record: Path) -> None:
    reference = ModelReference(path=tmp_path)  # an empty directory, and nothing in the hub's cache
    with model_in_use(reference):
        encoder, reason = search_encoder.encoder_or_reason()
    assert encoder is None and reason is not None
    assert "\n" not in reason and reason.endswith("run `gateway model pull`")


def test_a_verified_file_is_not_hashed_again_until_it_changes(
    tiny_model_dir: Path, tmp_path: Path, verified_record: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = _copy(tiny_model_dir, tmp_path / "model")
    reference = tiny_bert.reference(directory)
    models.verified(reference)
    assert verified_record.is_file()
    hashed: list[Path] = []
    real = models.sha256_of

    def hashing(path: Path) -> str:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(models, "sha256_of", hashing)
    models.verified(reference)
    assert hashed == []  # a new process start costs no hashing
    weights = directory / "model.safetensors"
    content = bytearray(weights.read_bytes())
    content[-1] ^= 1  # same size, same name: a changed identity all the same
    weights.write_bytes(bytes(content))
    with pytest.raises(ModelMismatch):
        models.verified(reference)
    assert hashed == [weights.resolve()]


def test_dense_settings_name_a_model_by_reference(tmp_path: Path, tiny_model_dir: Path) -> None:
    config = tmp_path / "gateway.toml"
    reference = tiny_bert.reference(tiny_model_dir)
    config.write_text(config_for(reference) + 'mode = "on"\n')
    settings = load_settings(config, environ={})
    assert dense_model(settings.search.dense) == reference
    # The variable sets the mode and keeps the model.
    settings = load_settings(config, environ={"GATEWAY_DENSE": "off"})
    assert settings.search.dense.mode == "off" and dense_model(settings.search.dense) == reference
    # The short form still reads, and means the default model.
    config.write_text('[search]\ndense = "off"\n')
    settings = load_settings(config, environ={"GATEWAY_DENSE_MODEL_PATH": str(tiny_model_dir)})
    assert settings.search.dense.mode == "off"
    assert dense_model(settings.search.dense) == ModelReference(path=tiny_model_dir)


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('model = "someone/encoder"\nrevision = "' + "a" * 40 + '"\n', "revision and files"),
        ('model = "someone/encoder"\nrevision = "main"\nfiles = {}\n', "revision"),
        ('files = { "config.json" = "' + "0" * 64 + '" }\n', "exactly config.json"),
    ],
)
def test_another_model_without_its_pins_is_a_config_error(tmp_path: Path, table: str, problem: str) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text("[search.dense]\n" + table)
    with pytest.raises(ConfigError, match=problem):
        load_settings(config, environ={})


def _gateway(
    *args: str,
    config: Path,
    home: Path,
    endpoint: str,
    check: bool = False,
    extra: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "GATEWAY_CONFIG": str(config),
        "GATEWAY_DENSE": "on",
        "HF_HOME": str(home / "hf"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "HF_ENDPOINT": endpoint,
        "NO_PROXY": "127.0.0.1",
        "no_proxy": "127.0.0.1",
    }
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("HF_HUB_CACHE", None)
    env.update(extra or {})
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=check,
    )


def test_model_pull_downloads_verifies_and_prints_the_hashes_and_a_search_then_finds_it(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    reference = tiny_bert.reference(tiny_model_dir)
    config = tmp_path / "gateway.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\n' + config_for(reference, path=False))
    with hub_serving(tiny_model_dir, reference) as hub:
        # A search does not download: the model missing is one line naming the command.
        found = _gateway("discover", "book a meeting", config=config, home=tmp_path, endpoint=hub.url)
        assert found.returncode == 2
        assert found.stderr.strip().splitlines()[-1].endswith("run `gateway model pull`")
        assert hub.requests == []
        pulled = _gateway("model", "pull", config=config, home=tmp_path, endpoint=hub.url, check=True)
        assert {r.split()[0] for r in hub.requests} == {"HEAD", "GET"}
        for name, sha in reference.files.items():
            assert f"{sha}  {name}" in pulled.stdout
        served = len(hub.requests)
        checked = _gateway(
            "model", "check", "--json", config=config, home=tmp_path, endpoint=hub.url, check=True
        )
        files = json.loads(checked.stdout)["files"]
        assert {name: f["sha256"] for name, f in files.items()} == reference.files
        assert all(str(tmp_path / "hf") in f["path"] for f in files.values())  # the hub's cache
        search = _gateway(
            "discover", "book a meeting", "--json", config=config, home=tmp_path, endpoint=hub.url
        )
        assert search.returncode == 0, search.stderr
        assert len(hub.requests) == served  # found in the cache, nothing asked of the hub


def test_model_pull_refuses_a_file_the_hub_serves_changed(tiny_model_dir: Path, tmp_path: Path) -> None:
    reference = tiny_bert.reference(tiny_model_dir)
    config = tmp_path / "gateway.toml"
    config.write_text(config_for(reference, path=False))
    with hub_serving(tiny_model_dir, reference, tokenizer_json=b"{}") as hub:
        pulled = _gateway("model", "pull", config=config, home=tmp_path, endpoint=hub.url)
    assert pulled.returncode == 2
    (line,) = pulled.stderr.strip().splitlines()
    assert "tokenizer.json of tests/tiny-bert" in line and "refusing to load it" in line


def test_two_threads_give_the_vectors_one_gives(tiny_model: ModelReference) -> None:
    encoder = search_encoder.sentence_encoder()
    assert encoder is not None
    texts = [f"{' '.join(['list'] * n)} my tasks" for n in range(1, 60)] * 3  # many batches
    assert np.array_equal(encoder.encode(texts, threads=2), encoder.encode(texts, threads=1))


def test_model_pull_offline_is_one_line_saying_so(tiny_model_dir: Path, tmp_path: Path) -> None:
    reference = tiny_bert.reference(tiny_model_dir)
    config = tmp_path / "gateway.toml"
    config.write_text(config_for(reference, path=False))
    with hub_serving(tiny_model_dir, reference) as hub:
        pulled = _gateway(
            "model", "pull", config=config, home=tmp_path, endpoint=hub.url, extra={"HF_HUB_OFFLINE": "1"}
        )
        assert hub.requests == []  # HF_HUB_OFFLINE honoured
    assert pulled.returncode == 2
    (line,) = pulled.stderr.strip().splitlines()
    assert line.startswith("gateway: could not download config.json of tests/tiny-bert@")


@pytest.mark.parametrize(
    "variables",
    [
        {},
        {"XDG_CACHE_HOME": "/x/cache"},
        {"HF_HOME": "~/hf"},
        {"HF_HOME": "/h", "HF_HUB_CACHE": "/hub/cache"},
    ],
)
def test_the_hub_cache_is_where_huggingface_hub_puts_it(variables: dict[str, str]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "XDG_CACHE"))}
    env.update(variables, PYTHONPATH=str(ROOT))
    code = "from gateway.search.models import hub_cache; from huggingface_hub import constants; "
    code += "print(hub_cache()); print(constants.HF_HUB_CACHE)"
    ours, theirs = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert ours == theirs


def test_model_pull_with_no_network_is_one_line_at_once(tiny_model_dir: Path, tmp_path: Path) -> None:
    """A hub nobody answers for (here: a loopback port with nothing listening) is said in one line
    after one try, not after huggingface_hub's retries and their lines."""
    reference = tiny_bert.reference(tiny_model_dir)
    config = tmp_path / "gateway.toml"
    config.write_text(config_for(reference, path=False))
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    pulled = _gateway("model", "pull", config=config, home=tmp_path, endpoint=f"http://127.0.0.1:{port}")
    assert pulled.returncode == 2
    (line,) = pulled.stderr.strip().splitlines()
    assert line.startswith(f"gateway: could not download tests/tiny-bert@{reference.revision[:12]}: ")
    assert f"http://127.0.0.1:{port} is not reachable (Connection refused)" in line
    assert "HF_ENDPOINT" in line


def _plain_bert(directory: Path, texts: list[str], pooling: str) -> Any:
    """The tiny model's sentence vectors computed the plain way, independently of the encoder: one
    text at a time, every weight as PyTorch stores it, exact erf, softmax with its maximum taken off."""
    import math

    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    w = load_file(str(directory / "model.safetensors"))
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.enable_truncation(tiny_bert.POSITIONS)
    erf = np.vectorize(math.erf)

    def norm(x: Any, name: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    def linear(x: Any, name: str) -> Any:
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    out = []
    for text in texts:
        ids = tokenizer.encode(text).ids
        x = w["embeddings.word_embeddings.weight"][ids].astype(np.float64)
        x = x + w["embeddings.position_embeddings.weight"][: len(ids)]
        x = norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        size = tiny_bert.HIDDEN // tiny_bert.HEADS
        for n in range(tiny_bert.LAYERS):
            p = f"encoder.layer.{n}."
            q, k, v = (
                linear(x, p + f"attention.self.{t}")
                .reshape(len(ids), tiny_bert.HEADS, size)
                .transpose(1, 0, 2)
                for t in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
            weights = np.exp(scores - scores.max(-1, keepdims=True))
            weights /= weights.sum(-1, keepdims=True)
            context = (weights @ v).transpose(1, 0, 2).reshape(len(ids), tiny_bert.HIDDEN)
            x = norm(linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            hidden = linear(x, p + "intermediate.dense")
            hidden = hidden * 0.5 * (1 + erf(hidden / math.sqrt(2)))
            x = norm(linear(hidden, p + "output.dense") + x, p + "output.LayerNorm")
        pooled = x[0] if pooling == "cls" else x.mean(0)
        out.append(pooled / np.linalg.norm(pooled))
    return np.asarray(out)


@pytest.mark.parametrize("pooling", models.POOLINGS)
def test_each_pooling_gives_the_vectors_a_plain_bert_gives(
    tiny_model_dir: Path, pooling: models.Pooling
) -> None:
    reference = dataclasses.replace(tiny_bert.reference(tiny_model_dir), pooling=pooling)
    texts = [*TEXTS, "a much longer request to list every task due next week", " ".join(["meeting"] * 200)]
    with model_in_use(reference):
        encoder = search_encoder.sentence_encoder()
        assert encoder is not None
        vectors = encoder.encode(texts)
    assert np.allclose(vectors, _plain_bert(tiny_model_dir, texts, pooling), atol=1e-5)


def test_cls_pooling_gives_other_vectors_than_the_mean(tiny_model_dir: Path) -> None:
    mean = tiny_bert.reference(tiny_model_dir)
    vectors = {}
    for reference in (mean, dataclasses.replace(mean, pooling="cls")):
        with model_in_use(reference):
            encoder = search_encoder.sentence_encoder()
            assert encoder is not None
            vectors[reference.pooling] = encoder.encode(TEXTS)
    assert not np.allclose(vectors["mean"], vectors["cls"], atol=1e-3)


def test_a_request_and_a_tool_are_each_given_their_prefix(tiny_model_dir: Path) -> None:
    plain = tiny_bert.reference(tiny_model_dir)
    prefixed = dataclasses.replace(plain, query_prefix="query: ", document_prefix="passage: ")
    with model_in_use(plain):
        encoder = search_encoder.sentence_encoder()
        assert encoder is not None
        expected = encoder.encode(["query: delete a file", "passage: delete a file"])
    with model_in_use(prefixed):
        encoder = search_encoder.sentence_encoder()
        assert encoder is not None
        query = encoder.encode(["delete a file"], kind="query")
        document = encoder.encode(["delete a file"])
    assert np.allclose(query[0], expected[0], atol=1e-6)
    assert np.allclose(document[0], expected[1], atol=1e-6)
    assert not np.allclose(query[0], document[0], atol=1e-3)


def test_the_pooling_and_the_prefixes_are_part_of_the_fingerprint(tiny_model_dir: Path) -> None:
    """Each changes every vector, so vectors cached under one are never read under another; the
    default's fingerprint is its files' alone, so vectors cached before these fields stay valid."""
    plain = tiny_bert.reference(tiny_model_dir)
    others = [
        dataclasses.replace(plain, pooling="cls"),
        dataclasses.replace(plain, query_prefix="query: "),
        dataclasses.replace(plain, document_prefix="passage: "),
        dataclasses.replace(plain, query_prefix="passage: "),
    ]
    prints = [plain.fingerprint(), *(o.fingerprint() for o in others)]
    assert len(set(prints)) == len(prints)
    digest = hashlib.sha256("".join(f"{n}={plain.files[n]}\n" for n in sorted(plain.files)).encode())
    assert plain.fingerprint() == digest.hexdigest()[:16]


def test_dense_settings_carry_the_pooling_and_the_prefixes(tmp_path: Path, tiny_model_dir: Path) -> None:
    config = tmp_path / "gateway.toml"
    reference = tiny_bert.reference(tiny_model_dir)
    config.write_text(
        config_for(reference) + 'pooling = "cls"\nquery_prefix = "query: "\ndocument_prefix = "passage: "\n'
    )
    wanted = dataclasses.replace(
        reference, pooling="cls", query_prefix="query: ", document_prefix="passage: "
    )
    assert dense_model(load_settings(config, environ={}).search.dense) == wanted
    config.write_text(config_for(reference) + 'pooling = "max"\n')
    with pytest.raises(ConfigError, match="pooling"):
        load_settings(config, environ={})
