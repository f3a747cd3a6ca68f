"""Schemas made from small descriptions that reproduce what breaks other converters."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gateway.definition import ToolDefinition
from gateway.errors import UserError
from gateway.openapi import OpenApi, SpecError, check
from gateway.settings.loading import OpenApiSettings

from .conftest import op, write_spec

COMPONENTS: dict[str, Any] = {
    "schemas": {
        "Node": {
            "type": "object",
            "description": "A tree node.",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
            },
        },
        "Owner": {
            "type": "object",
            "description": "Who owns the pet.",
            "properties": {"id": {"type": "integer"}},
        },
        "Pet": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "id": {"type": "integer", "readOnly": True},
                "name": {"type": "string", "minLength": 1, "description": "The pet's name."},
                "owner": {"$ref": "#/components/schemas/Owner"},
                "vet": {"$ref": "#/components/schemas/Owner", "description": "The vet, not the owner."},
                "tag": {"type": "string", "nullable": True, "enum": ["a", "b"]},
                "lost": {"$ref": "#/components/schemas/Missing"},
                "kind": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "color": {"anyOf": [{"type": "string"}, {"$ref": "#/components/schemas/Owner"}]},
                "weight": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
                "code": {"type": "string", "pattern": "(?<=\\p{L})x"},
            },
        },
        "Dog": {
            "allOf": [
                {"$ref": "#/components/schemas/Pet"},
                {
                    "type": "object",
                    "properties": {"bark": {"type": "boolean", "default": True}},
                    "required": ["bark"],
                },
            ]
        },
    }
}


def doc(version: str = "3.0.3") -> dict[str, Any]:
    return {
        "openapi": version,
        "info": {"title": "Shop", "version": "1"},
        "servers": [{"url": "https://{region}.shop.test/v1", "variables": {"region": {"default": "eu"}}}],
        "paths": {
            "/trees": {
                "post": op(
                    "createTree",
                    requestBody={
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}
                    },
                )
            },
            "/pets": {
                "post": op(
                    "addPet",
                    tags=["pets"],
                    requestBody={
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}},
                    },
                ),
                "get": op(
                    "listPets",
                    tags=["pets"],
                    parameters=[
                        {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}}
                    ],
                ),
            },
            "/dogs": {
                "put": op(
                    "putDog",
                    tags=["dogs"],
                    requestBody={
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Dog"}}}
                    },
                )
            },
            "/pets/{id}": {
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "delete": op("deletePet", tags=["pets"]),
                "get": op("getPet", tags=["pets"], parameters=[{"$ref": "#/components/parameters/Nope"}]),
            },
        },
        "components": copy.deepcopy(COMPONENTS),  # each test's own: a test may change its copy
    }


def served(
    tmp_path: Path, document: dict[str, Any], name: str = "spec.json", **settings: Any
) -> dict[str, ToolDefinition]:
    path = write_spec(tmp_path, document, name)
    api = OpenApi(OpenApiSettings(name="shop", spec=path, **settings), tmp_path / "cache")
    return {d.name: d for d in api.definitions()}


def valid(schema: dict[str, Any]) -> dict[str, Any]:
    Draft202012Validator.check_schema(schema)
    return schema


def test_a_recursive_ref_becomes_an_open_object_that_says_so(tmp_path: Path) -> None:
    schema = valid(served(tmp_path, doc())["shop_create_tree"].json_schema)
    children = schema["properties"]["children"]["items"]
    assert children["type"] == "object"
    assert "recursive" in children["description"] and "Node" in children["description"]


def test_a_dangling_ref_is_the_specs_problem_with_its_pointer(tmp_path: Path) -> None:
    tools = served(tmp_path, doc())
    lost = valid(tools["shop_add_pet"].json_schema)["properties"]["lost"]
    assert "missing from the API description" in lost["description"]
    report = check(write_spec(tmp_path, doc()), "shop")
    pointers = {p.pointer: p for p in report.problems}
    assert "#/components/schemas/Pet/properties/lost/$ref" in pointers
    assert "#/components/schemas/Missing" in pointers["#/components/schemas/Pet/properties/lost/$ref"].message
    assert "#/components/parameters/Nope" in str([p.message for p in report.problems])
    # the getPet operation still works without its dangling parameter
    assert list(valid(tools["shop_get_pet"].json_schema)["properties"]) == ["id"]


def test_descriptions_survive_references(tmp_path: Path) -> None:
    props = served(tmp_path, doc())["shop_add_pet"].json_schema["properties"]
    assert props["owner"]["description"] == "Who owns the pet."  # the target's
    assert props["vet"]["description"] == "The vet, not the owner."  # the one beside the $ref wins
    assert props["name"]["description"] == "The pet's name."


def test_the_body_is_flattened_read_only_fields_left_out_required_kept(tmp_path: Path) -> None:
    schema = valid(served(tmp_path, doc())["shop_add_pet"].json_schema)
    assert "id" not in schema["properties"]  # readOnly: the server's
    assert schema["required"] == ["name"]
    assert schema["additionalProperties"] is False


def test_nullable_enum_oneof_anyof_and_bounds_are_kept(tmp_path: Path) -> None:
    props = served(tmp_path, doc())["shop_add_pet"].json_schema["properties"]
    assert props["tag"]["type"] == ["string", "null"] and props["tag"]["enum"] == ["a", "b", None]
    assert [s["type"] for s in props["kind"]["oneOf"]] == ["string", "integer"]
    assert props["color"]["anyOf"][1]["properties"] == {"id": {"type": "integer"}}
    assert props["weight"] == {"type": "number", "exclusiveMinimum": 0}
    assert "pattern" not in props["code"]  # not a Python regex: dropped, reported by check


def test_all_of_is_merged(tmp_path: Path) -> None:
    schema = valid(served(tmp_path, doc())["shop_put_dog"].json_schema)
    assert {"name", "owner", "bark"} <= set(schema["properties"])
    assert schema["properties"]["bark"]["default"] is True


def test_3_1_type_arrays_and_yaml(tmp_path: Path) -> None:
    document = doc("3.1.0")
    document["components"]["schemas"]["Owner"]["properties"]["id"] = {"type": ["integer", "null"]}
    tools = served(tmp_path, document, "spec.yaml")
    owner = valid(tools["shop_add_pet"].json_schema)["properties"]["owner"]
    assert owner["properties"]["id"]["type"] == ["integer", "null"]
    assert tools["shop_add_pet"].model.model_validate({"name": "Rex", "owner": {"id": None}})


def test_every_schema_validates_arguments_and_refuses_unknown_ones(tmp_path: Path) -> None:
    tool = served(tmp_path, doc())["shop_list_pets"]
    assert tool.model.model_validate({"limit": 5})
    with pytest.raises(ValueError, match="limit"):
        tool.model.model_validate({"limit": 500})
    with pytest.raises(ValueError, match="Unknown parameter"):
        tool.model.model_validate({"limt": 5})


def test_swagger_2_is_refused_with_how_to_convert(tmp_path: Path) -> None:
    path = write_spec(tmp_path, {"swagger": "2.0", "info": {}, "paths": {}})
    with pytest.raises(SpecError, match="swagger2openapi"):
        OpenApi(OpenApiSettings(name="old", spec=path), None)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON or YAML"),
        ('{"openapi": "3.0.0", "paths": {}}', "describes no operations"),
        ('{"openapi": "4.0"}', "not an OpenAPI 3.0 or 3.1"),
        ("- a list", "top level is not a mapping"),
    ],
)
def test_a_broken_spec_gets_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "spec.json"
    path.write_text(content)
    with pytest.raises(SpecError, match=message):
        OpenApi(OpenApiSettings(name="bad", spec=path), None)


def test_flags_fail_closed_and_safe_marks_make_writes_non_destructive(tmp_path: Path) -> None:
    tools = served(tmp_path, doc(), safe=["addPet", "tag:dogs"])
    assert tools["shop_list_pets"].flags == ("read_only", "concurrency_safe")
    assert tools["shop_delete_pet"].is_destructive
    assert tools["shop_create_tree"].is_destructive  # POST, not marked
    assert not tools["shop_add_pet"].is_destructive and not tools["shop_add_pet"].read_only
    assert not tools["shop_put_dog"].is_destructive


def test_read_only_serves_safe_methods_and_filters_select(tmp_path: Path) -> None:
    assert set(served(tmp_path, doc(), read_only=True)) == {"shop_list_pets", "shop_get_pet"}
    assert set(served(tmp_path, doc(), include_tags=["pets"], exclude_operations=["deletePet"])) == {
        "shop_add_pet",
        "shop_list_pets",
        "shop_get_pet",
    }
    assert set(served(tmp_path, doc(), include_paths=["/pets/*"])) == {"shop_delete_pet", "shop_get_pet"}


def test_a_filter_that_matches_nothing_names_the_closest(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="'pest' \\(closest: pets"):
        served(tmp_path, doc(), include_tags=["pest"])


def test_names_categories_and_actions(tmp_path: Path) -> None:
    tools = served(tmp_path, doc())
    pet = tools["shop_add_pet"]
    assert (pet.category, pet.action) == ("shop_pets", "create")
    assert tools["shop_create_tree"].category == "shop_trees"  # no tag: the path's first segment
    assert tools["shop_delete_pet"].action == "delete"


def test_a_huge_spec_loads_from_its_cache_without_parsing_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = {
        f"/things{i}/{{id}}": {
            "get": op(
                f"getThing{i}",
                tags=[f"group{i % 40}"],
                parameters=[{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            ),
            "delete": op(f"deleteThing{i}", tags=[f"group{i % 40}"]),
        }
        for i in range(2500)
    }
    path = write_spec(tmp_path, {"openapi": "3.0.0", "info": {"title": "Big"}, "paths": paths})
    first = OpenApi(OpenApiSettings(name="big", spec=path), tmp_path / "cache")
    assert len(first.definitions()) == 5000
    from gateway.openapi import index

    def no_parse(*args: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(index, "build", no_parse)
    second = OpenApi(OpenApiSettings(name="big", spec=path), tmp_path / "cache")
    assert [d.name for d in second.definitions()] == [d.name for d in first.definitions()]
    assert second._doc is None  # nothing parsed until a schema is needed
    assert second.definitions()[0].json_schema["required"] == ["id"]


def test_an_edited_spec_is_indexed_again(tmp_path: Path) -> None:
    document = doc()
    assert "shop_add_pet" in served(tmp_path, document)
    document["paths"]["/pets"]["post"]["operationId"] = "createPet"
    tools = served(tmp_path, document)
    assert "shop_create_pet" in tools and "shop_add_pet" not in tools


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The descriptions `gateway.openapi.index` reads from now on."""
    from gateway.openapi import document, index

    read: list[Path] = []
    real = document.read_bytes  # the function `index` imports and calls

    def reading(path: Path) -> bytes:
        read.append(path)
        return real(path)

    monkeypatch.setattr(index, "read_bytes", reading)
    return read


def _age(path: Path, seconds: float = 3600) -> None:
    then = path.stat().st_mtime - seconds
    os.utime(path, (then, then))


def test_an_unchanged_description_is_not_read_again_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its digest is remembered with the file's size, time and inode (gateway.openapi.index)."""
    path = write_spec(tmp_path, doc())
    _age(path)
    read = _reads(monkeypatch)
    first = served(tmp_path, doc())  # written again, the same bytes: hashed once more
    _age(path)
    assert len(read) == 1
    second = OpenApi(OpenApiSettings(name="shop", spec=path), tmp_path / "cache")
    second.definitions()
    third = OpenApi(OpenApiSettings(name="shop", spec=path), tmp_path / "cache")
    assert sorted(d.name for d in third.definitions()) == sorted(first)
    assert len(read) == 2  # the second start hashed it (old now); the third read nothing
    # The description itself is still checked against the digest before a model is made of it.
    assert third.definitions()[0].json_schema["type"] == "object"


def test_a_description_edited_in_place_is_read_again_whatever_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_spec(tmp_path, doc())
    _age(path)

    def names() -> set[str]:
        return {
            d.name for d in OpenApi(OpenApiSettings(name="shop", spec=path), tmp_path / "cache").definitions()
        }

    read = _reads(monkeypatch)
    names()
    assert "shop_add_pet" in names()
    assert read == [path]  # remembered after the first start
    before = path.stat()
    path.write_text(path.read_text().replace('"addPet"', '"newPet"'))  # in place, as long
    _age(path, 1800)
    assert (path.stat().st_size, path.stat().st_ino) == (before.st_size, before.st_ino)
    assert "shop_new_pet" in names()
    assert read == [path, path]


def test_a_description_changed_just_before_it_was_hashed_is_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change in the same tick of the clock as the hashing leaves no trace in the file's time:
    a file that new when it was hashed is never trusted by its time alone."""
    path = write_spec(tmp_path, doc())
    served(tmp_path, doc())
    read = _reads(monkeypatch)
    OpenApi(OpenApiSettings(name="shop", spec=path), tmp_path / "cache").definitions()
    OpenApi(OpenApiSettings(name="shop", spec=path), tmp_path / "cache").definitions()
    assert read == [path, path]


def test_spec_text_is_cleaned_before_the_model_reads_it(tmp_path: Path) -> None:
    document = doc()
    document["paths"]["/pets"]["get"]["summary"] = (
        "List\x1b[31m pets\u202e [docs](https://evil.test) <b>now</b>."
    )
    tool = served(tmp_path, document)["shop_list_pets"]
    assert tool.summary == "List pets docs now."


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        (
            "The repository name without the `.git` extension.",
            "The repository name without the .git extension.",
        ),
        ("Reads <code>.env</code> files, then `config.yml` .", "Reads .env files, then config.yml."),
        ("Returns the pets (see [docs](https://x.test)) .", "Returns the pets (see docs)."),
    ],
)
def test_stripped_code_keeps_the_spaces_around_it(tmp_path: Path, raw: str, plain: str) -> None:
    document = doc()
    document["paths"]["/pets"]["get"]["summary"] = raw
    assert served(tmp_path, document)["shop_list_pets"].summary == plain
