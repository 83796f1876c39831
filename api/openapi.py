"""The OpenAPI 3 document of /api/v1, generated from the routes' declarations (api.routing.operation) and their
pydantic models, and served at /api/v1/openapi.json. Nothing here is written by hand but the document's preamble
and the schemas of the path parameters."""

from __future__ import annotations

import copy
import re
from functools import cache
from typing import Any

from pydantic import BaseModel, RootModel

# Every resource module, so that the document is whole whoever asks for it (each registers its routes on import).
from api import bids, contracts, decisions, events, ranking  # noqa: F401
from api.routing import OPERATIONS, Operation, operation
from api.shapes import Error

REF = "#/components/schemas/{model}"
ERROR = {"$ref": REF.format(model="Error")}
_ARGUMENT = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")
# The string path parameters, by name: a slug is what events.models allows.
STRING_PARAMETERS = {"slug": {"type": "string", "pattern": "^[a-z0-9-]+$"}}
INTEGER_PARAMETER = {"type": "integer", "minimum": 1}


class OpenApiDocument(RootModel[dict[str, Any]]):
    """This document (OpenAPI 3.0.3)."""


def _nullable(schema: Any) -> Any:
    """pydantic's JSON Schema in OpenAPI 3.0's dialect: `anyOf: [X, {type: null}]` becomes X with
    `nullable: true` (a $ref is wrapped in allOf, since 3.0 ignores a $ref's siblings)."""
    if isinstance(schema, list):
        return [_nullable(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: (v if k in ("enum", "required", "default", "examples") else _nullable(v)) for k, v in schema.items()}
    if "properties" in schema:
        out["properties"] = {name: _nullable(s) for name, s in schema["properties"].items()}
    options = out.get("anyOf")
    if options and {"type": "null"} in options:
        rest = [s for s in options if s != {"type": "null"}]
        del out["anyOf"]
        if len(rest) == 1 and "$ref" not in rest[0]:
            out = {**rest[0], **out}
        elif len(rest) == 1:
            out["allOf"] = rest
        else:
            out["anyOf"] = rest
        out["nullable"] = True
    return out


def _component(model: type[BaseModel], schemas: dict[str, Any]) -> dict[str, str]:
    """Add the model and every model it uses to `schemas`; return the $ref to it. Raises ValueError when two
    different models share a name."""
    schema = model.model_json_schema(ref_template=REF, mode="serialization")
    found = {**schema.pop("$defs", {}), model.__name__: schema}
    for name, part in found.items():
        part = _nullable(part)
        if schemas.setdefault(name, part) != part:
            raise ValueError(f"two API models are named {name}")
    return {"$ref": REF.format(model=model.__name__)}


def _parameters(op: Operation) -> tuple[str, list[dict]]:
    """The OpenAPI path of the Flask rule, and its parameters: those of the path (an int converter is a
    positive integer; a string is looked up in STRING_PARAMETERS), then the fields of its query model."""
    params = []
    for m in _ARGUMENT.finditer(op.rule):
        name = m["name"]
        schema = INTEGER_PARAMETER if m["converter"] == "int" else STRING_PARAMETERS[name]
        params.append({"name": name, "in": "path", "required": True, "schema": dict(schema)})
    if op.query is not None:
        query = op.query.model_json_schema(ref_template=REF)
        for name, schema in query["properties"].items():
            schema = _nullable(schema)
            schema.pop("nullable", None)  # an optional query parameter is left out, never sent as null
            schema.pop("default", None)
            schema.pop("title", None)
            param = {"name": name, "in": "query", "required": name in query.get("required", ()), "schema": schema}
            if "description" in schema:
                param["description"] = schema.pop("description")
            params.append(param)
    return _ARGUMENT.sub(r"{\g<name>}", op.rule), params


def _json(description: str, schema: dict) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


@cache
def _document() -> dict:
    schemas: dict[str, Any] = {}
    _component(Error, schemas)
    paths: dict[str, Any] = {}
    for op in OPERATIONS:
        path, params = _parameters(op)
        responses = {"200": _json("OK", _component(op.response, schemas))}
        if not op.public:
            responses["401"] = _json("Not authenticated", ERROR)
        for code, description in sorted(op.errors.items()):
            responses[str(code)] = _json(description, ERROR)
        get: dict[str, Any] = {"summary": op.summary, "operationId": op.operation_id}
        if params:
            get["parameters"] = params
        get["responses"] = responses
        if op.public:
            get["security"] = []
        paths[path] = {"get": get}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Gambit API", "version": "1",
                 "description": "Read-only access to calls for bids, bids, rankings, decisions and contracts. "
                                "Amounts are strings with two decimals; dates are ISO 8601."},
        "servers": [{"url": "/api/v1"}],
        "security": [{"bearer": []}, {"session": []}],
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "An API token from your account page"},
                "session": {"type": "apiKey", "in": "cookie", "name": "session"},
            },
            "schemas": dict(sorted(schemas.items())),
        },
        "paths": paths,
    }


def openapi_document() -> dict:
    """The OpenAPI 3.0.3 document of every route declared with api.routing.operation (a copy: the caller may change
    it). Raises ValueError when two API models share a name, KeyError for an undeclared string path parameter."""
    return copy.deepcopy(_document())


@operation("/openapi.json", operation_id="getOpenApiDocument", summary="This document (OpenAPI 3.0.3)",
           response=OpenApiDocument, public=True)
def openapi():
    return OpenApiDocument(openapi_document())
