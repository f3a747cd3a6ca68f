"""A tiny BERT sentence encoder the tests generate: the real model's file layout, none of its size.

Two layers, four heads, 32 dimensions and a vocabulary of about 140 word pieces (every letter, so
any word tokenizes), its weights drawn from a fixed seed: the same files on every run. It is written
as all-MiniLM-L6-v2 is published (`config.json`, `tokenizer.json`, `model.safetensors` with the
same tensor names), so the encoder loads it exactly as it loads the real one.
"""

from __future__ import annotations

import hashlib
import json
import string
from pathlib import Path

from gateway.search.models import LOADED_FILES, ModelReference

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = [
    "a",
    "an",
    "the",
    "to",
    "of",
    "on",
    "in",
    "for",
    "with",
    "my",
    "me",
    "i",
    "you",
    "it",
    "is",
    "be",
    "do",
    "what",
    "when",
    "who",
    "where",
    "how",
    "can",
    "list",
    "show",
    "find",
    "get",
    "read",
    "create",
    "make",
    "add",
    "new",
    "send",
    "write",
    "reply",
    "update",
    "change",
    "move",
    "copy",
    "delete",
    "remove",
    "cancel",
    "clear",
    "book",
    "schedule",
    "meeting",
    "event",
    "calendar",
    "tomorrow",
    "today",
    "week",
    "email",
    "mail",
    "message",
    "inbox",
    "draft",
    "label",
    "thread",
    "task",
    "tasks",
    "todo",
    "note",
    "file",
    "files",
    "folder",
    "drive",
    "share",
    "permission",
    "user",
    "account",
    "late",
    "boss",
    "know",
    "running",
    "next",
    "tuesday",
    "sam",
    "have",
]
REPO_ID = "tests/tiny-bert"
REVISION = "0" * 40
HIDDEN, HEADS, LAYERS, INTERMEDIATE, POSITIONS = 32, 4, 2, 64, 64


def vocabulary() -> list[str]:
    letters = list(string.ascii_lowercase + string.digits)
    return list(dict.fromkeys([*SPECIAL, *letters, *(f"##{c}" for c in letters), *WORDS]))


def write(directory: Path, seed: int = 7) -> ModelReference:
    """Write the tiny model's files into `directory`; its reference, with their sha256.

    Raises:
        ImportError: numpy, tokenizers or safetensors is missing (the `dense` extra).
    """
    import numpy as np
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    directory.mkdir(parents=True, exist_ok=True)
    vocab = {piece: i for i, piece in enumerate(vocabulary())}
    tokenizer = Tokenizer(WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.save(str(directory / "tokenizer.json"))
    config = {
        "architectures": ["BertModel"],
        "hidden_act": "gelu",
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": POSITIONS,
        "model_type": "bert",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "pad_token_id": 0,
        "type_vocab_size": 2,
        "vocab_size": len(vocab),
    }
    (directory / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    rng = np.random.default_rng(seed)

    def normal(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    tensors = {
        "embeddings.word_embeddings.weight": normal(len(vocab), HIDDEN, scale=1.0),
        "embeddings.position_embeddings.weight": normal(POSITIONS, HIDDEN),
        "embeddings.token_type_embeddings.weight": normal(2, HIDDEN),
        "embeddings.LayerNorm.weight": 1 + normal(HIDDEN, scale=0.05),
        "embeddings.LayerNorm.bias": normal(HIDDEN, scale=0.05),
        "embeddings.position_ids": np.arange(POSITIONS, dtype=np.int64)[None, :],
        "pooler.dense.weight": normal(HIDDEN, HIDDEN),
        "pooler.dense.bias": normal(HIDDEN),
    }
    for n in range(LAYERS):
        p = f"encoder.layer.{n}."
        for name in (
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
        ):
            tensors[p + name + ".weight"] = normal(HIDDEN, HIDDEN)  # (out, in), as PyTorch stores them
            tensors[p + name + ".bias"] = normal(HIDDEN, scale=0.05)
        tensors[p + "intermediate.dense.weight"] = normal(INTERMEDIATE, HIDDEN)
        tensors[p + "intermediate.dense.bias"] = normal(INTERMEDIATE, scale=0.05)
        tensors[p + "output.dense.weight"] = normal(HIDDEN, INTERMEDIATE)
        tensors[p + "output.dense.bias"] = normal(HIDDEN, scale=0.05)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[p + norm + ".weight"] = 1 + normal(HIDDEN, scale=0.05)
            tensors[p + norm + ".bias"] = normal(HIDDEN, scale=0.05)
    save_file(tensors, str(directory / "model.safetensors"), metadata={"format": "pt"})
    return reference(directory)


def reference(directory: Path, *, path: bool = True) -> ModelReference:
    """The tiny model's reference: its files' sha256, and `directory` as its path (unless `path` is False)."""
    files = {name: hashlib.sha256((directory / name).read_bytes()).hexdigest() for name in LOADED_FILES}
    return ModelReference(REPO_ID, REVISION, files, directory if path else None)
