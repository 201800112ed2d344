"""Request bodies are JSON, read with limits: a size cap, a nesting-depth cap checked
before decoding, and no NUL or lone surrogate in any string (PostgreSQL refuses both, so
they would otherwise end as a 500 wherever the text reaches the database).

The depth check runs without recursion: a body nested tens of thousands of levels deep is
refused by counting brackets, so the decoder (which recurses in C) never sees it. The same
bounded decoder reads the JSON inside x402 payment headers (billing/x402/proof.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from itertools import accumulate
from typing import Any

from django.conf import settings
from rest_framework.parsers import JSONParser

# A JSON string, from its opening quote to its closing one or, if it is not closed, to the end
# of the input: the closing quote is optional so that an unterminated string is consumed once
# instead of being rescanned from every later quote (which would be quadratic).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_BRACKETS = b"[]{}"
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _BRACKETS)
_DELTA = tuple(1 if b in b"[{" else -1 if b in b"]}" else 0 for b in range(256))
# Characters no stored text may hold: NUL (PostgreSQL text) and lone UTF-16 surrogates
# (not encodable as UTF-8).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class JsonTooDeep(ValueError):
    def __init__(self, depth: int, limit: int) -> None:
        super().__init__(f"JSON nested {depth} levels deep; at most {limit} are accepted")


class JsonTooLarge(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON larger than {limit} bytes")


def json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON text, brackets inside strings not
    counted. Linear time, no recursion; meaningful for valid JSON, an upper bound otherwise."""
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_DELTA.__getitem__, brackets)), default=0)


def json_loads_bounded(raw: bytes | str, *, max_bytes: int, max_depth: int | None = None) -> Any:
    """json.loads for untrusted input: JsonTooLarge / JsonTooDeep before any decoding,
    json.JSONDecodeError (a ValueError) for broken JSON."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if len(data) > max_bytes:
        raise JsonTooLarge(max_bytes)
    limit = settings.API_JSON_MAX_DEPTH if max_depth is None else max_depth
    depth = json_depth(data)
    if depth > limit:
        raise JsonTooDeep(depth, limit)
    return json.loads(data, parse_constant=_refuse_constant)


def _refuse_constant(name: str) -> None:
    # As DRF's strict JSON: NaN and Infinity are not JSON.
    raise ValueError(f"{name} is not a JSON value")


def unstorable_text_at(data: Any) -> list[str | int] | None:
    """The location (keys and indexes) of the first string, key or value, holding a NUL or a
    lone surrogate; None if there is none. Iterative: the depth is bounded, but a wide body
    must not cost a Python frame per value either."""
    stack: list[tuple[list[str | int], Any]] = [([], data)]
    while stack:
        loc, value = stack.pop()
        if isinstance(value, str):
            if _UNSTORABLE.search(value):
                return loc
        elif isinstance(value, dict):
            for key, item in value.items():
                if _UNSTORABLE.search(key):
                    return [*loc, key.encode("unicode_escape").decode("ascii")]
                stack.append(([*loc, key], item))
        elif isinstance(value, list):
            stack.extend(([*loc, i], item) for i, item in enumerate(value))
    return None


def text_is_storable(value: str) -> bool:
    return _UNSTORABLE.search(value) is None


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser with the limits above; each refusal is an HTTPValidationError with
    loc ["body", ...]: 413 body_too_large; 422 json_too_deep, json_invalid, string_unstorable."""

    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        # Imported here: rest_framework.views loads this parser while a2a_service.core.errors,
        # which imports rest_framework.views, is still being imported.
        from a2a_service.core.errors import BodyTooLarge, RequestValidationError

        limit = settings.API_MAX_BODY_BYTES
        # Reads at most one byte past the cap, whatever Content-Length claims (ApiView refuses
        # a declared length over it before any read).
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise BodyTooLarge(limit)
        try:
            data = json_loads_bounded(raw, max_bytes=limit)
        except JsonTooDeep as exc:
            raise RequestValidationError.single(["body"], str(exc), "json_too_deep") from None
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            raise RequestValidationError.single(
                ["body"], f"JSON decode error: {exc}", "json_invalid"
            ) from None
        loc = unstorable_text_at(data)
        if loc is not None:
            raise RequestValidationError.single(
                ["body", *loc], "text must not contain NUL characters or lone surrogates", "string_unstorable"
            )
        return data
