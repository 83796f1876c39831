"""The OpenAPI 3 document of /api/v1. Each package that adds a resource adds its paths here."""

from __future__ import annotations

from typing import Any

ERROR = {"$ref": "#/components/schemas/Error"}


def _responses(ok_schema: dict, *, not_found: bool = False) -> dict:
    out: dict[str, Any] = {
        "200": {"description": "OK", "content": {"application/json": {"schema": ok_schema}}},
        "401": {"description": "Not authenticated", "content": {"application/json": {"schema": ERROR}}},
    }
    if not_found:
        out["404"] = {"description": "Not found", "content": {"application/json": {"schema": ERROR}}}
    return out


SLUG = {"name": "slug", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[a-z0-9-]+$"}}
AMOUNT = {"type": "string", "pattern": r"^-?\d+\.\d{2}$", "description": "Euros, two decimals"}

EVENT_SUMMARY = {
    "type": "object",
    "required": ["slug", "title", "status", "practice", "bid_deadline", "regulation", "url"],
    "properties": {
        "slug": {"type": "string"}, "title": {"type": "string"},
        "status": {"type": "string", "enum": ["open", "closed", "scoring", "deliberation", "decided"]},
        "practice": {"type": "boolean"}, "bid_deadline": {"type": "string", "format": "date-time"},
        "regulation": {"type": "object", "properties": {"version": {"type": "integer"},
                                                          "sha256": {"type": "string"}}},
        "url": {"type": "string"},
    },
}

PATHS: dict[str, Any] = {
    "/events": {"get": {
        "summary": "The calls for bids", "operationId": "listEvents",
        "responses": _responses({"type": "object", "properties": {
            "events": {"type": "array", "items": EVENT_SUMMARY}}})}},
    "/events/{slug}": {"get": {
        "summary": "One call, with the figures bids are judged by", "operationId": "getEvent",
        "parameters": [SLUG],
        "responses": _responses({"allOf": [EVENT_SUMMARY, {"type": "object", "properties": {
            "prize_fund": {"type": "object", "properties": {"minimum": AMOUNT}}}}]}, not_found=True)}},
}

SCHEMAS: dict[str, Any] = {
    "Error": {"type": "object", "required": ["error", "status"],
              "properties": {"error": {"type": "string"}, "status": {"type": "integer"}}},
    "Amount": AMOUNT,
}


def openapi_document() -> dict:
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
            "schemas": SCHEMAS,
        },
        "paths": PATHS,
    }
