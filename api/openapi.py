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

BID_ID = {"name": "bid_id", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}}
FINDING = {"type": "object", "required": ["code", "article", "field", "outcome", "message", "value"],
           "properties": {"code": {"type": "string"}, "article": {"type": "string"}, "field": {"type": "string"},
                          "outcome": {"type": "string", "enum": ["pass", "fail", "n/a", "pending"]},
                          "message": {"type": "string"}, "value": {"type": "string"}}}
BID = {"type": "object", "required": ["id", "event", "status", "version", "compliance"], "properties": {
    "id": {"type": "integer"}, "event": {"type": "string"}, "status": {"type": "string"},
    "version": {"type": "integer"}, "prize_fund_eur": {"nullable": True, **AMOUNT},
    "fide_contribution_eur": {"nullable": True, **AMOUNT},
    "compliance": {"type": "object", "properties": {"compliant": {"type": "boolean"},
                                                    "findings": {"type": "array", "items": FINDING}}}}}
_DECLARE_FIRST = {"description": "A WCOC member who has not declared their conflicts of interest for the call yet",
                  "content": {"application/json": {"schema": ERROR}}}
PATHS.update({
    "/bids/{bid_id}": {"get": {
        "summary": "A bid in the import's JSON shape, with status, version and compliance",
        "operationId": "getBid", "parameters": [BID_ID], "responses": {**_responses(BID, not_found=True),
                                                                         "403": _DECLARE_FIRST}}},
    "/bids/{bid_id}/obligations": {"get": {
        "summary": "What the bid commits the organiser to pay and when, each line with its call's article",
        "operationId": "getBidObligations", "parameters": [BID_ID],
        "responses": {**_responses({"type": "object", "properties": {
            "bid": {"type": "integer"}, "obligations": {"type": "object"}, "schedule": {"type": "object"}}},
            not_found=True), "403": _DECLARE_FIRST, "409": {"description": "Figures missing", "content": {
                "application/json": {"schema": ERROR}}}}}},
    "/events/{slug}/bids": {"get": {
        "summary": "The bids of a call that the caller may see", "operationId": "listEventBids",
        "parameters": [SLUG], "responses": _responses({"type": "object", "properties": {
            "event": {"type": "string"}, "bids": {"type": "array", "items": {"type": "object"}}}},
            not_found=True)}},
})

# Scoring (Art. 15.5): the WCOC's ranking. Scores, weights and totals are decimal strings, never floats.
DECIMAL = {"type": "string", "pattern": r"^-?\d+(\.\d+)?$", "description": "A decimal number as a string"}
_CRITERION_STATS = {"type": "object", "properties": {
    "key": {"type": "string"}, "label": {"type": "string"}, "article": {"type": "string"},
    "count": {"type": "integer"}, "mean": {**DECIMAL, "nullable": True}, "median": {**DECIMAL, "nullable": True},
    "min": {**DECIMAL, "nullable": True}, "max": {**DECIMAL, "nullable": True},
    "range": {**DECIMAL, "nullable": True}, "stdev": {**DECIMAL, "nullable": True},
    "disagreement": {"type": "boolean"}, "disagreement_reason": {"type": "string"},
    "contribution": {**DECIMAL, "nullable": True}}}
RANKING = {"type": "object", "required": ["event", "weights_version", "bids", "sensitivity"], "properties": {
    "event": {"type": "object", "properties": {"slug": {"type": "string"}, "title": {"type": "string"},
                                               "status": {"type": "string"}}},
    "statistic": {"type": "string", "enum": ["mean", "median"]},
    "weights_version": {"type": "object", "description": "The weights the ranking used; number 0 is the weights "
                                                         "published with the call", "properties": {
        "number": {"type": "integer"}, "label": {"type": "string"}, "reason": {"type": "string"},
        "created_at": {"type": "string", "format": "date-time", "nullable": True},
        "weights": {"type": "array", "items": {"type": "object", "properties": {
            "key": {"type": "string"}, "label": {"type": "string"}, "article": {"type": "string"},
            "weight": DECIMAL, "percent": DECIMAL}}}}},
    "leaders": {"type": "array", "items": {"type": "integer"}},
    "bids": {"type": "array", "items": {"type": "object", "properties": {
        "bid_id": {"type": "integer"}, "title": {"type": "string"}, "rank": {"type": "integer", "nullable": True},
        "rank_label": {"type": "string"}, "tied": {"type": "boolean"}, "total": {**DECIMAL, "nullable": True},
        "scorecards": {"type": "integer"}, "expected_scorecards": {"type": "integer"},
        "admitted_reason": {"type": "string", "nullable": True}, "note": {"type": "string"},
        "criteria": {"type": "array", "items": _CRITERION_STATS},
        "red_flags": {"type": "array", "items": {"type": "object"}}}}},
    "notes": {"type": "array", "items": {"type": "string"}},
    "recusals": {"type": "array", "items": {"type": "object", "properties": {
        "member_id": {"type": "integer"}, "member": {"type": "string"}, "bid_id": {"type": "integer"},
        "bid": {"type": "string"}, "reason": {"type": "string"}}}},
    "withheld": {"type": "array", "description": "Bids left out because the caller is recused from them",
                 "items": {"type": "object", "properties": {
                     "bid_id": {"type": "integer"}, "title": {"type": "string"}, "reason": {"type": "string"}}}},
    "excluded": {"type": "array", "items": {"type": "object"}},
    "sensitivity": {"type": "object", "properties": {
        "summary": {"type": "string"}, "robust": {"type": "boolean", "nullable": True},
        "reasons": {"type": "array", "items": {"type": "string"}}}},
}}
PATHS.update({
    "/events/{slug}/ranking": {"get": {
        "summary": "The WCOC's ranking of the bids: totals, per-criterion statistics, red flags, the "
                   "weights version used, recusals and the sensitivity summary. WCOC, Board and secretariat only; "
                   "a WCOC member once their own scorecards are in",
        "operationId": "getRanking", "parameters": [SLUG],
        "responses": {**_responses(RANKING, not_found=True), "403": {
            "description": "Not for this caller (bidders never see scores)",
            "content": {"application/json": {"schema": ERROR}}}, "409": {
            "description": "The caller's declaration of conflicts changed while the ranking was read",
            "content": {"application/json": {"schema": ERROR}}}}}},
})

PATHS["/events/{slug}/decision"] = {"get": {
    "summary": "The selection decision in force: method, selected bid, tally, reasons, what the Board reviewed",
    "operationId": "getDecision", "parameters": [SLUG],
    "responses": {**_responses({"type": "object", "required": ["id", "method", "decided_on", "selected_bid"],
                                "properties": {"id": {"type": "integer"}, "method": {"type": "string"},
                                               "decided_on": {"type": "string", "format": "date"},
                                               "selected_bid": {"type": "object"},
                                               "reviewed": {"type": "array", "items": {"type": "object"}}}},
                               not_found=True),
                  "403": {"description": "Bidders do not read the record", "content": {
                      "application/json": {"schema": ERROR}}}}}}

# Contracts (Art. 15.6): the organizer sees its own, the secretariat all; anyone else gets 404.
CONTRACT_ID = {"name": "contract_id", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}}
AS_OF = {"name": "as_of", "in": "query", "required": False, "description": "The day the status is judged on "
         "(default: today)", "schema": {"type": "string", "format": "date"}}
DATE = {"type": "string", "format": "date"}
PARTY = {"type": "object", "properties": {"kind": {"type": "string"}, "name": {"type": "string"},
                                          "federation": {"type": "string", "nullable": True}}}
MILESTONE_STATUS = {"type": "object", "required": ["state", "label", "paid", "outstanding"], "properties": {
    "state": {"type": "string", "enum": ["paid", "paid_late", "part_paid", "due_soon", "overdue", "not_yet_due",
                                         "at_cost"]},
    "label": {"type": "string"}, "paid": AMOUNT, "outstanding": AMOUNT,
    "completed_on": {"nullable": True, **DATE}, "days": {"type": "integer", "nullable": True},
    "due_soon": {"type": "boolean"}, "overdue": {"type": "boolean"}}}
MILESTONE = {"type": "object", "required": ["id", "key", "kind", "article", "amount", "status"], "properties": {
    "id": {"type": "integer"}, "key": {"type": "string"},
    "kind": {"type": "string", "enum": ["to_fide", "direct", "at_cost", "disbursement"]},
    "article": {"type": "string"}, "title": {"type": "string"}, "description": {"type": "string"},
    "payer": PARTY, "payee": PARTY, "amount": AMOUNT, "is_cap": {"type": "boolean"},
    "due": {"nullable": True, **DATE}, "status": MILESTONE_STATUS,
    "payments": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "integer"}, "kind": {"type": "string", "enum": ["payment", "reversal", "carried_over"]},
        "amount": AMOUNT, "received_on": DATE, "reference": {"type": "string"},
        "reverses": {"type": "integer", "nullable": True}, "reason": {"type": "string", "nullable": True}}}}}}
CONTRACT = {"type": "object", "required": ["id", "reference", "bid", "version", "status"], "properties": {
    "id": {"type": "integer"}, "reference": {"type": "string"}, "bid": {"type": "integer"},
    "event": {"type": "string"}, "version": {"type": "integer"},
    "status": {"type": "string", "enum": ["draft", "issued", "signed", "superseded", "discarded"]},
    "replaces": {"type": "integer", "nullable": True}, "correction_reason": {"type": "string", "nullable": True},
    "regulation": {"type": "object"}, "parties": {"type": "object"}, "venue": {"type": "object"},
    "opening_date": DATE, "closing_date": DATE, "prize_fund": AMOUNT, "fide_contribution": AMOUNT,
    "guarantee": {"type": "object", "nullable": True},
    "issued_at": {"type": "string", "format": "date-time", "nullable": True},
    "pdf_sha256": {"type": "string", "nullable": True},
    "signed_at": {"type": "string", "format": "date-time", "nullable": True},
    "signed_pdf_sha256": {"type": "string", "nullable": True}, "terms": {"type": "object"}}}
PATHS.update({
    "/contracts/{contract_id}": {"get": {
        "summary": "A contract: parties, event, figures, status, hashes and its terms snapshot",
        "operationId": "getContract", "parameters": [CONTRACT_ID],
        "responses": _responses(CONTRACT, not_found=True)}},
    "/contracts/{contract_id}/milestones": {"get": {
        "summary": "The contract's payment milestones with their status on a day, the payments recorded, totals "
                   "and the bank guarantee's warnings",
        "operationId": "getContractMilestones", "parameters": [CONTRACT_ID, AS_OF],
        "responses": {**_responses({"type": "object", "properties": {
            "contract": {"type": "integer"}, "reference": {"type": "string"}, "as_of": DATE,
            "due_soon_days": {"type": "integer"}, "milestones": {"type": "array", "items": MILESTONE},
            "totals": {"type": "object", "additionalProperties": AMOUNT},
            "warnings": {"type": "array", "items": {"type": "string"}}}}, not_found=True),
            "400": {"description": "as_of is not a date (YYYY-MM-DD)", "content": {
                "application/json": {"schema": ERROR}}}}}},
})

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
