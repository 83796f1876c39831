"""The /api/v1 blueprint, and the declaration each route makes for the OpenAPI document (api.openapi): its rule,
its response model, the query it reads and the refusals it may answer. A view returns an instance of its response
model (turned into JSON here, through the model) or a refusal from api.auth.api_error."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import wraps

from flask import Blueprint, jsonify
from pydantic import BaseModel

from api.auth import api_login_required

bp = Blueprint("api", __name__, url_prefix="/api/v1")


@dataclass(frozen=True)
class Operation:
    """One GET route of the API as the OpenAPI document describes it. `errors` maps each refusal's status code to
    when it is given (401 is added for every route that is not `public`)."""

    rule: str
    endpoint: str
    operation_id: str
    summary: str
    response: type[BaseModel]
    errors: Mapping[int, str] = field(default_factory=dict)
    query: type[BaseModel] | None = None
    public: bool = False


OPERATIONS: list[Operation] = []


def operation(rule: str, *, operation_id: str, summary: str, response: type[BaseModel],
              errors: Mapping[int, str] | None = None, query: type[BaseModel] | None = None,
              public: bool = False) -> Callable:
    """Register the decorated view on the blueprint at `rule` (GET), behind api_login_required unless `public`,
    and declare it for the OpenAPI document. The endpoint is the view's name ("api.<name>").

    The view returns an instance of `response`, answered as its JSON (keys it was not given are left out), or a
    ready response (a refusal). Raises TypeError, when called, if the view returns another model."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def respond(*args, **kwargs):
            result = view(*args, **kwargs)
            if isinstance(result, BaseModel):
                if not isinstance(result, response):
                    raise TypeError(f"{view.__name__} answered a {type(result).__name__}, not its declared "
                                    f"{response.__name__}")
                return jsonify(result.model_dump(mode="json", exclude_unset=True))
            return result

        routed = respond if public else api_login_required(respond)
        bp.add_url_rule(rule, endpoint=view.__name__, view_func=routed, methods=["GET"])
        OPERATIONS.append(Operation(rule=rule, endpoint=f"{bp.name}.{view.__name__}", operation_id=operation_id,
                                    summary=summary, response=response, errors=dict(errors or {}), query=query,
                                    public=public))
        return routed

    return decorator
