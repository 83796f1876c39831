"""The read-only JSON API, /api/v1: one module per resource, each declaring its shapes as pydantic models, and the
OpenAPI document generated from those models and the routes (api.openapi). It reads the domains; none reads it."""
