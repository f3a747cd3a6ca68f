"""Params models of catalog methods: made on first use, Google's parameters and request bodies, strict."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from syrupy.assertion import SnapshotAssertion

from gateway import Gateway
from gateway.context import Principal

from .conftest import MakeGateway


def schema(gw: Gateway, name: str) -> dict[str, Any]:
    found: dict[str, Any] = gw.schema(Principal(), name)["parameters"]
    return found


def test_a_small_methods_schema_is_pinned(gw: Gateway, snapshot: SnapshotAssertion) -> None:
    assert schema(gw, "tasks_tasks_move") == snapshot


def test_parameters_keep_their_types_enums_bounds_and_required_flags(gw: Gateway) -> None:
    found = schema(gw, "calendar_events_list")
    properties = found["properties"]
    assert found["required"] == ["calendarId"] and found["additionalProperties"] is False
    assert next(iter(properties)) == "calendarId"  # Google's parameter order, then the rest by name
    assert properties["maxAttendees"] == {
        "description": properties["maxAttendees"]["description"],
        "minimum": 1,
        "type": "integer",
    }
    assert properties["orderBy"]["enum"] == ["startTime", "updated"]
    assert properties["singleEvents"]["type"] == "boolean"
    assert properties["eventTypes"]["type"] == "array" and "enum" in properties["eventTypes"]["items"]
    assert all(p["description"] for p in properties.values())


def test_a_repeated_parameter_is_an_array_that_also_takes_one_value(gw: Gateway) -> None:
    model = gw.catalog.by_name["gmail_users_messages_list"].model
    assert model.model_validate({"userId": "me", "labelIds": "INBOX"}).model_dump(exclude_none=True) == {
        "userId": "me",
        "labelIds": ["INBOX"],
    }


def test_an_int64_string_also_takes_a_number(gw: Gateway) -> None:
    model = gw.catalog.by_name["gmail_users_history_list"].model
    assert schema(gw, "gmail_users_history_list")["properties"]["startHistoryId"]["type"] == "string"
    assert (
        model.model_validate({"userId": "me", "startHistoryId": 123}).model_dump()["startHistoryId"] == "123"
    )


def test_the_body_resolves_references_two_steps_deep_and_describes_the_rest(gw: Gateway) -> None:
    found = schema(gw, "calendar_events_insert")
    defs = found["$defs"]
    assert found["properties"]["body"] == {
        "$ref": "#/$defs/Event",
        "description": "The request body: an Event object.",
    }
    assert defs["Event"]["properties"]["start"]["$ref"] == "#/$defs/EventDateTime"
    assert defs["EventDateTime"]["properties"]["timeZone"]["type"] == "string"
    assert (
        defs["Event"]["additionalProperties"] is False
        and defs["EventDateTime"]["additionalProperties"] is False
    )
    solution = defs["ConferenceData"]["properties"]["conferenceSolution"]  # Event -> ConferenceData -> here
    assert solution["type"] == "object" and solution["additionalProperties"] is True
    assert solution["description"].endswith("(a ConferenceSolution object.)")
    assert "ConferenceSolution" not in defs


def test_a_recursive_schema_refers_to_its_own_model(gw: Gateway) -> None:
    found = schema(gw, "gmail_users_messages_insert")
    assert found["$defs"]["MessagePart"]["properties"]["parts"]["items"] == {"$ref": "#/$defs/MessagePart"}
    model = gw.catalog.by_name["gmail_users_messages_insert"].model
    nested = {
        "mimeType": "multipart/mixed",
        "parts": [{"parts": [{"mimeType": "text/plain", "partId": "0.0"}]}],
    }
    params = model.model_validate({"userId": "me", "body": {"payload": nested}})
    assert params.model_dump(mode="json", exclude_none=True)["body"]["payload"] == nested


def test_unknown_fields_are_refused_at_every_level(gw: Gateway) -> None:
    model = gw.catalog.by_name["calendar_events_insert"].model
    with pytest.raises(ValidationError) as caught:
        model.model_validate(
            {"calendarId": "primary", "colour": 1, "body": {"start": {"date": "2025-03-07", "zone": "UTC"}}}
        )
    assert sorted(".".join(map(str, e["loc"])) for e in caught.value.errors()) == [
        "body.start.zone",
        "colour",
    ]


def test_params_models_are_made_on_first_use(gw: Gateway) -> None:
    insert = gw.catalog.by_name["calendar_events_insert"]
    assert insert.is_lazy and "model" not in insert.__dict__
    gw.schema(Principal(), "calendar_events_insert")
    assert "model" in insert.__dict__


def test_the_methods_sending_one_schema_share_its_body_model(gw: Gateway) -> None:
    insert, update = (gw.catalog.by_name[f"calendar_events_{verb}"].model for verb in ("insert", "update"))
    assert insert is not update
    assert insert.model_fields["body"].annotation == update.model_fields["body"].annotation


def test_a_body_written_out_in_the_method_is_an_open_object(make_gateway: MakeGateway) -> None:
    gw = make_gateway("integrations")
    body = schema(gw, "integrations_projects_locations_integrations_execute")["properties"]["body"]
    assert body == {
        "additionalProperties": True,
        "description": "The request body: a JSON object.",
        "type": "object",
    }
