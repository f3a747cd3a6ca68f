"""The semantic layer's token weights: a catalog's common words weigh less in every vector it makes."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from gateway import NoParams, ToolDefinition
from gateway.search import SearchIndex, semantic_available
from gateway.search import semantic as search_semantic
from gateway.search.cache import Vocabulary
from gateway.settings.loading import OpenApiSettings
from tests.openapi_specs import spec

pytestmark = pytest.mark.skipif(not semantic_available(), reason="the 'search' extra is not installed")


def _tool(name: str, summary: str) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        category=name.split("_", maxsplit=1)[0],
        action="read",
        verb="get",
        summary=summary,
        description=summary,
        params=NoParams,
        handler=lambda p: None,
    )


TOOLS = [
    _tool("repos_list_webhooks", "List repository webhooks"),
    _tool("repos_create_webhook", "Create a repository webhook"),
    _tool("repos_list_collaborators", "List repository collaborators"),
    _tool("repos_list_environments", "List repository environments"),
    _tool("issues_list_comments", "List issue comments"),
]


def test_a_token_weighs_less_the_more_often_the_catalog_uses_it() -> None:
    embedder = search_semantic.Embedder()
    texts = ["repository webhooks", "repository collaborators", "repository environments"]
    vocabulary = embedder.vocabulary(texts)
    assert vocabulary.counts is not None
    assert dict(zip(vocabulary.words, vocabulary.counts, strict=True))["repository"] == 3
    weights = embedder.token_weights(vocabulary)
    (common,) = vocabulary.get("repository") or []  # one token, in every text
    (rare,) = vocabulary.get("environments") or []  # one token, in one text
    unseen = embedder.tokenizer.encode("xylophone", add_special_tokens=False).ids
    assert weights[common] < weights[rare] < 1.0
    assert all(weights[i] == 1.0 for i in unseen)  # a word the catalog never says: nothing to weigh down
    assert embedder.token_weights(Vocabulary(["w"], array("I", [0, 1]), array("I", [5]))) is None


def test_a_weighted_text_vector_is_the_normalised_weighted_sum_of_its_token_vectors() -> None:
    embedder = search_semantic.Embedder()
    np = embedder.np
    vocabulary = embedder.vocabulary(["repository webhooks", "repository collaborators"])
    weights = embedder.token_weights(vocabulary)
    text = "create a repository webhook"
    ids = [i for word in text.split() for i in embedder.tokenizer.encode(word, add_special_tokens=False).ids]
    total = (embedder.table.astype(np.float32)[ids] * weights[ids, None]).sum(axis=0)
    assert np.allclose(
        embedder.encode([text], vocabulary, weights)[0], total / np.linalg.norm(total), atol=1e-6
    )
    assert not np.allclose(embedder.encode([text], vocabulary, weights)[0], embedder.encode([text])[0])


# The same request twice: the second is encoded from its remembered token rows.
@pytest.mark.parametrize(
    "text", ["create a repository webhook", "create a repository webhook", "", "zzyzx qwv"]
)
def test_a_request_is_encoded_as_a_text_is_to_the_bit(text: str) -> None:
    embedder = search_semantic.embedder()
    assert embedder is not None
    np = embedder.np
    vocabulary = embedder.vocabulary(["repository webhooks", "repository collaborators"])
    weights = embedder.token_weights(vocabulary)
    for args in [(None, None), (vocabulary, None), (vocabulary, weights)]:
        assert np.array_equal(embedder.encode_query(text, *args), embedder.encode([text], *args)[0])


def test_a_cached_index_weighs_tokens_as_the_built_one_did(tmp_path: Path) -> None:
    built = SearchIndex(TOOLS, semantic=True)
    SearchIndex.load_or_build(TOOLS, tmp_path, semantic=True, min_tools=0)
    loaded = SearchIndex.load_or_build(TOOLS, tmp_path, semantic=True, min_tools=0)
    assert built._vectors is not None and loaded._vectors is not None
    assert loaded._vectors.vocabulary is not None and built._vectors.vocabulary is not None
    assert loaded._vectors.vocabulary.counts == built._vectors.vocabulary.counts
    assert (loaded._vectors.weights == built._vectors.weights).all()
    counts = built._vectors.vocabulary.counts
    assert counts is not None
    broken = Vocabulary(built._vectors.vocabulary.words, built._vectors.vocabulary.starts,
                        built._vectors.vocabulary.ids, array("I", counts[:-1]))  # fmt: skip
    assert not broken.check()


# Requests with two asks over GitHub's 1,223 operations: both operations on the first page. With
# every token weighing the same, the first three each lost one of them to near-namesakes of the other.
TWO_ASKS = [
    (
        "show every environment of the repository, then remove the staging environment",
        {"github_repos_get_all_environments", "github_repos_delete_an_environment"},
    ),
    (
        "read the comments of an issue and delete one of them",
        {"github_issues_list_comments", "github_issues_delete_comment"},
    ),
    (
        "list the environments and delete one",
        {"github_repos_get_all_environments", "github_repos_delete_an_environment"},
    ),
    (
        "list the teams of the organization and the members of each team",
        {"github_teams_list", "github_teams_list_members_in_org"},
    ),
    ("create an org webhook and ping it", {"github_orgs_create_webhook", "github_orgs_ping_webhook"}),
    (
        "list the comments on an issue and react to one with a heart",
        {"github_issues_list_comments", "github_reactions_create_for_issue_comment"},
    ),
    (
        "see the branch protection of main and the teams allowed to push",
        {"github_repos_get_branch_protection", "github_repos_get_teams_with_access_to_protected_branch"},
    ),
]


@pytest.fixture(scope="module")
def github() -> SearchIndex:
    from gateway.openapi import OpenApi

    api = OpenApi(OpenApiSettings(name="github", spec=spec("github.json")), None)
    return SearchIndex(api.definitions(), semantic=True)


@pytest.mark.parametrize(("request_text", "operations"), TWO_ASKS)
def test_both_asks_of_a_request_over_github_are_on_the_first_page(
    github: SearchIndex, request_text: str, operations: set[str]
) -> None:
    first_page = {d.name for d, _ in github.search(request_text, limit=5)}
    assert operations <= first_page


def test_wordllama_files_other_than_the_pinned_ones_are_refused_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verified_record: Path, caplog: pytest.LogCaptureFixture
) -> None:
    installed = search_semantic._package_dir("wordllama")
    fake = tmp_path / "site" / "wordllama"
    for name in search_semantic.WORDLLAMA_FILES:
        (fake / name).parent.mkdir(parents=True, exist_ok=True)
        (fake / name).write_bytes((installed / name).read_bytes())
    (fake / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert search_semantic._package_dir("wordllama") == fake
    search_semantic.Embedder()  # a faithful copy loads
    weights = fake / "weights" / "l2_supercat_256.safetensors"
    edited = bytearray(weights.read_bytes())
    edited[-1] ^= 1  # one bit of one vector
    weights.write_bytes(bytes(edited))
    with pytest.raises(OSError, match=r"not the pinned ones: .*l2_supercat_256\.safetensors"):
        search_semantic.Embedder()
    monkeypatch.setattr(search_semantic, "_EMBEDDER", [])
    assert search_semantic.embedder() is None
    assert "the semantic layer is off" in caplog.text
