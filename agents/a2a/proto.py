"""protobuf's JSON mapping, typed (the protobuf package ships no type stubs): a2a-sdk's types
are protobuf messages."""

from __future__ import annotations

from typing import Any, TypeVar

from google.protobuf import json_format  # type: ignore[import-untyped]
from google.protobuf.message import Message as ProtoMessage  # type: ignore[import-untyped]

M = TypeVar("M", bound=ProtoMessage)
ParseError: type[Exception] = json_format.ParseError


def to_json(message: ProtoMessage) -> Any:
    """The message (or a Struct / Value) as JSON data, proto JSON names."""
    return json_format.MessageToDict(message)


def from_json(data: Any, message: M, *, ignore_unknown_fields: bool = False) -> M:
    """Parse JSON data into `message` (strict unless told): raises ParseError."""
    parsed: M = json_format.ParseDict(data, message, ignore_unknown_fields=ignore_unknown_fields)
    return parsed


def _plain(value: Any) -> Any:
    """JSON from a protobuf Struct holds every number as a float: integral ones back to int."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def plain_json(value: Any) -> Any:
    return _plain(value)
