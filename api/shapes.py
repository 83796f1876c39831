"""The shapes every resource of the API shares: the base of every response model, the error, and the scalar types
(amounts as strings with two decimals, decimal numbers as strings, ISO days and instants; never floats)."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, WithJsonSchema

from core.money import amount_str

AMOUNT_PATTERN = r"^-?\d+\.\d{2}$"
DECIMAL_PATTERN = r"^-?\d+(\.\d+)?$"

Amount = Annotated[str, Field(pattern=AMOUNT_PATTERN, description="Euros, two decimals")]
DecimalText = Annotated[str, Field(pattern=DECIMAL_PATTERN, description="A decimal number as a string")]
Day = Annotated[date, PlainSerializer(date.isoformat, return_type=str),
                WithJsonSchema({"type": "string", "format": "date"})]
# datetime.isoformat ("+00:00"), as the API has always written instants; pydantic's own serializer writes "Z".
Instant = Annotated[datetime, PlainSerializer(datetime.isoformat, return_type=str),
                    WithJsonSchema({"type": "string", "format": "date-time"})]


def amount(value: Decimal) -> str:
    """An amount as the API writes it: "200000.00". Raises nothing."""
    return amount_str(value)


def amount_or_none(value: Decimal | None) -> str | None:
    """amount(), or None for a figure not given. Raises nothing."""
    return None if value is None else amount_str(value)


class Shape(BaseModel):
    """The base of every response model: every key declared (an undeclared one is an error, not a silent extra),
    immutable once built."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class OpenShape(BaseModel):
    """A response part whose declared keys are checked and whose other keys pass through as given (the bid's own
    JSON shape, which bids declares; the sensitivity analysis, which scoring.sensitivity declares)."""

    model_config = ConfigDict(extra="allow", frozen=True)


class Error(Shape):
    """Every refusal: the sentence for the person, and the HTTP status again."""

    error: str
    status: int
