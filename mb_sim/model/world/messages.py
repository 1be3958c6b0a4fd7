"""The messages of world-file errors: `<file>: <key path>: <what is allowed> (got <value>)`.

Every problem with a world file names the file (or `<string>`, `<dict>`), the path of the key
(`robots[1].initial_positions.joint2`), what is allowed and the value, cut to about 80
characters without formatting the whole of a large value. `fail` raises such an error from
the code's own checks; `from_schema_error` writes one for an error of the schema's validator
(`jsonschema.ValidationError`: its keyword, the subschema that failed, the instance, the
path), so schema and code speak alike.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

from mb_sim.errors import WorldError

MISSING: Any = object()
"""No value to show (a missing key)."""


def brief(value: Any, budget: int, depth: int = 0) -> str:
    """repr(value) cut to about `budget` characters without formatting the whole value."""
    if isinstance(value, str):
        return repr(value[:budget]) + ("..." if len(value) > budget else "")
    if isinstance(value, (list, tuple, Mapping)):
        if depth > 3:
            return "[...]" if not isinstance(value, Mapping) else "{...}"
        items = list(value.items())[:10] if isinstance(value, Mapping) else list(value[:10])
        parts: list[str] = []
        used = 2
        for item in items:
            if used >= budget:
                break
            text = (f"{brief(item[0], budget - used, depth + 1)}: "
                    f"{brief(item[1], budget - used, depth + 1)}"
                    if isinstance(value, Mapping) else brief(item, budget - used, depth + 1))
            parts.append(text)
            used += len(text) + 2
        more = ", ..." if len(parts) < len(value) else ""
        open_, close = ("{", "}") if isinstance(value, Mapping) else ("[", "]")
        return open_ + ", ".join(parts) + more + close
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<integer of about {int(value.bit_length() * 0.30103)} digits>"
    text = repr(value)
    return text if len(text) <= budget else text[:budget] + "..."


def show(value: Any) -> str:
    """A value as messages show it: about 80 characters at most."""
    text = brief(value, 80)
    return text if len(text) <= 100 else text[:97] + "..."


def key(path: str, name: Any) -> str:
    """The path of key `name` of the mapping at `path` (a long key cut to 60 characters)."""
    text = str(name) if not isinstance(name, str) or len(name) <= 60 else name[:60] + "..."
    return f"{path}.{text}" if path else text


def listing(names: Iterable[Any]) -> str:
    """The first ten names, and how many there are in all."""
    names = [str(n)[:60] for n in names]
    return ", ".join(names[:10]) + (f", ... ({len(names)} in all)" if len(names) > 10 else "")


def did_you_mean(value: Any, options: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the option closest to `value`, or ""."""
    close = difflib.get_close_matches(str(value)[:200], list(options), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def text(label: str, path: str, message: str, value: Any = MISSING) -> str:
    got = "" if value is MISSING else f" (got {show(value)})"
    return f"{label}: {path or '<top level>'}: {message}{got}"


def fail(label: str, path: str, message: str, value: Any = MISSING) -> NoReturn:
    """Raise WorldError: `<label>: <path>: <message> (got <value>)`."""
    raise WorldError(text(label, path, message, value))


# ------------------------------------------------------------------------ schema errors


def from_schema_error(error: Any, document: Any, label: str, where: str = "") -> str:
    """The message of a `jsonschema.ValidationError` raised for `document`; `where` is the
    document's own key path in its file."""
    path = _path_text(document, list(error.absolute_path), where)
    instance = error.instance
    keyword = error.validator
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if keyword == "additionalProperties":
        return _unknown_key(label, path, instance, schema)
    if keyword == "required":
        missing = next(k for k in error.validator_value if k not in instance)
        return text(label, key(path, missing),
                    _custom(schema, keyword) or "required key is missing")
    if "propertyNames" in error.relative_schema_path:
        path = key(path, instance)  # a key that is no name: the path names the key itself
    return text(label, path, _custom(schema, keyword) or _allowed(keyword, schema, instance),
                instance)


def _path_text(document: Any, path: list[Any], where: str) -> str:
    """`bodies[2].size[1]` for the path ["bodies", 2, "size", 1] (a list index in brackets,
    a mapping key after a dot, whatever its type)."""
    out, node = where, document
    for part in path:
        if isinstance(node, Mapping):
            out = key(out, part)
        else:
            out = f"{out}[{part}]"
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
    return out


def _custom(schema: Mapping[str, Any], keyword: str) -> str | None:
    """The schema's own message for a failure of `keyword` (its `errorMessage`), if any."""
    custom = schema.get("errorMessage")
    if isinstance(custom, Mapping):
        return custom.get(keyword)
    return custom


def _unknown_key(label: str, path: str, instance: Mapping[Any, Any],
                 schema: Mapping[str, Any]) -> str:
    properties = schema.get("properties", {})
    allowed = [k for k, s in properties.items() if not s.get("deprecated")]
    extra = next(k for k in instance if k not in properties)
    hint = did_you_mean(extra, allowed) if isinstance(extra, str) else ""
    return text(label, key(path, extra), f"unknown key{hint}; allowed: {', '.join(allowed)}",
                instance[extra])


_PHRASES = {"object": "a mapping of keys to values", "array": "a list", "number": "a number",
            "integer": "an integer", "string": "a string", "boolean": "true or false"}


def bounds(schema: Mapping[str, Any]) -> str:
    """`>= lo and <= hi` (or `> lo` for an exclusive minimum) of a number's schema."""
    parts = []
    if "minimum" in schema:
        parts.append(f">= {schema['minimum']:g}")
    if "exclusiveMinimum" in schema:
        parts.append(f"> {schema['exclusiveMinimum']:g}")
    if "maximum" in schema:
        parts.append(f"<= {schema['maximum']:g}")
    return " and ".join(parts)


def _allowed(keyword: str, schema: Mapping[str, Any], instance: Any) -> str:
    """What a failed keyword allows, in words."""
    if keyword == "type":
        return _type_allowed(schema, instance)
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return f"must be {bounds(schema)}"
    if keyword in ("minItems", "maxItems"):
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        if lo == hi:
            return f"must have {lo} element{'s' if lo != 1 else ''}, has {len(instance)}"
        return f"must have {lo} to {hi} elements, has {len(instance)}"
    if keyword == "enum":
        options = [str(o) for o in schema["enum"]]
        return f"must be one of {', '.join(options)}{did_you_mean(instance, options)}"
    if keyword == "const":
        return f"must be {show(schema['const'])}"
    if keyword in ("pattern", "minLength"):
        return f"must match {schema.get('pattern', '.+')}"
    return "is not allowed here"


def _type_allowed(schema: Mapping[str, Any], instance: Any) -> str:
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    out_of_range = (isinstance(instance, float) or getattr(instance, "huge", False)) and \
        not isinstance(instance, bool)
    if "number" in types and out_of_range:
        return f"must be finite ({bounds(schema)})"
    if "integer" in types and getattr(instance, "huge", False):
        return f"must be {bounds(schema)}"
    if types == ["array"] and schema.get("minItems") == schema.get("maxItems") and \
            isinstance(schema.get("items"), Mapping) and schema["items"].get("type") == "number":
        return f"must be a list of {schema['minItems']} numbers"
    return "must be " + " or ".join(_PHRASES[t] for t in types if t in _PHRASES)
