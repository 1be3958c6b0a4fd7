"""The tables of docs/worlds.md made from the world file's schema (`mb_sim.doc_tables` puts
them there): every key of every section with what it accepts, its default and meaning
(`keys_markdown`), and the accepted ranges of numbers with the checks beyond single keys
(`limits_markdown`)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from mb_sim.model.world import schema as s

SECTIONS: tuple[tuple[str, str, Mapping[str, Any], Mapping[str, str]], ...] = (
    ("top level", "", s.TOP, {}),
    ("`ground`", "ground", s.GROUND["properties"], {}),
    ("`robot` and each entry of `robots`", "robots", s.ROBOT,
     dict.fromkeys(s.TOP["robots"]["items"]["required"], "required in `robots`")),
    ("each entry of `bodies`", "bodies", s.BODY,
     dict.fromkeys(s.TOP["bodies"]["items"]["required"], "required")),
    ("each entry of `joints`", "joints", s.JOINT,
     dict.fromkeys(s.TOP["joints"]["items"]["required"], "required")),
    ("`solver`", "solver", s.SOLVER, {}),
)
"""(heading, section name in the limits table, keys, {required key: its mark}) of each key
table."""


def _g(x: float) -> str:
    return f"{x:g}"


def _cell(text: str) -> str:
    """Text for a table cell: one line, | and < escaped (`<ns>` is no HTML tag)."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "\\<")


def _types(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type", [])
    return kind if isinstance(kind, list) else [kind]


def number_range(schema: Mapping[str, Any], unit: str = "") -> str:
    """`0 to 100`, `±1000 m/s`, `> 0 to 0.1 m` of a number's schema."""
    unit = schema.get("unit", unit)
    hi = schema.get("maximum")
    if "exclusiveMinimum" in schema:
        text = f"> {_g(schema['exclusiveMinimum'])} to {_g(hi)}"
    elif schema.get("minimum") == -hi:
        text = f"±{_g(hi)}"
    else:
        text = f"{_g(schema['minimum'])} to {_g(hi)}"
    return f"{text} {unit}".rstrip()


def accepted(schema: Mapping[str, Any]) -> str:
    """What a key accepts, in a few words, from its schema."""
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"])
    words = [_kind(kind, schema) for kind in _types(schema) if kind != "null"]
    if "null" in _types(schema):
        words.append("null")
    return ", or ".join(words) if len(words) < 3 else ", ".join(words[:-1]) + ", or " + words[-1]


def _kind(kind: str, schema: Mapping[str, Any]) -> str:
    if kind in ("number", "integer"):
        return number_range(schema)
    if kind == "boolean":
        return "true, false"
    if kind == "array":
        return _list(schema)
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, Mapping) and "properties" in values:
            return f"{{name: {{{', '.join(values['properties'])}}}}}"
        if isinstance(values, Mapping):
            return f"{{name: {accepted({**values, 'unit': schema.get('unit', '')})}}}"
        return "mapping"
    names = {s.ROS_NAME: "ROS name", s.ROS_NAMESPACE: "relative ROS namespace", r"\S": "name"}
    if schema.get("pattern") in names:
        return names[schema["pattern"]]
    return "file or URI" if "file" in str(schema.get("errorMessage")) else "text"


def _list(schema: Mapping[str, Any]) -> str:
    items = schema.get("items", {})
    lo, hi = schema.get("minItems"), schema.get("maxItems")
    count = "" if lo is None else f"{lo} " if lo == hi else f"{lo} to {hi} "
    kinds = _types(items)
    unit = schema.get("unit", "")
    if kinds == ["number"]:
        return f"{count}numbers, {number_range(items, unit)}"
    if "number" in kinds and "array" in kinds:
        return f"{count}numbers or rows of {items['minItems']}, {number_range(items, unit)}"
    if "properties" in items:
        return "list of mappings"
    if kinds == ["array"] and _types(items.get("items", {})) == ["number"]:
        return f"rows of {items['minItems']} or more numbers, {number_range(items['items'])}"
    if kinds == ["array"]:
        return f"list of [{', '.join(['name'] * items['minItems'])}]"
    return f"list of {count}names"


def _default(schema: Mapping[str, Any]) -> str:
    if "default" not in schema:
        return ""
    value = schema["default"]
    return f"`{json.dumps(value) if not isinstance(value, str) else value}`"


def keys_markdown() -> str:
    """A table per section of the world file: key, what it accepts, default, meaning."""
    lines: list[str] = []
    for heading, _, keys, required in SECTIONS:
        lines += [f"#### {heading}", "", "| key | accepted | default | meaning |",
                  "| --- | --- | --- | --- |"]
        for k, schema in keys.items():
            if schema.get("deprecated"):
                continue
            mark = f" ({required[k]})" if k in required else ""
            lines.append(f"| `{k}`{mark} | {accepted(schema)} | {_default(schema)} | "
                         f"{_cell(schema.get('description', ''))} |")
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def _numbers(schema: Mapping[str, Any], unit: str = "") -> Iterator[Mapping[str, Any]]:
    """The number schemas of a key (itself, its items, its values), with the unit of the key."""
    unit = schema.get("unit", unit)
    if {"number", "integer"} & set(_types(schema)):
        yield {**schema, "unit": unit}
    for sub in (schema.get("items"), schema.get("additionalProperties")):
        if isinstance(sub, Mapping) and "properties" not in sub:
            yield from _numbers(sub, unit)


def limits_markdown() -> str:
    """The accepted range of every number of a world file, keys of equal range in one row,
    and the checks that take more than one key."""
    rows: dict[str, dict[str, list[str]]] = {}
    for _, section, keys, _ in SECTIONS:
        for k, schema in keys.items():
            for leaf in _numbers(schema):
                rows.setdefault(number_range(leaf), {}).setdefault(k, []).append(section)
    for k, schema in s.GAINS["properties"].items():
        for leaf in _numbers(schema):
            rows.setdefault(number_range(leaf), {}).setdefault(f"gains.*.{k}", []).append(
                "robots")
    lines = ["| accepted | keys |", "| --- | --- |"]
    for text, found in rows.items():
        keys = ", ".join(f"`{k}`" + (f" ({', '.join(dict.fromkeys(w))})" if any(w) else "")
                         for k, w in found.items())
        lines.append(f"| {text} | {keys} |")
    lines += [f"| {rule} | {what} |" for rule, what in _rules()]
    return "\n".join(lines)


def _rules() -> list[tuple[str, str]]:
    """The checks beyond single keys (made in code, their bounds from the schema module)."""
    return [
        (f"{_g(s.MASS[0])} to {_g(s.MASS[1])} kg", "a body's mass given, or density x volume"),
        ((f"elements ±{_g(s.INERTIA[1])} kg m², smallest principal moment >= "
          f"{_g(s.INERTIA[0])} kg m²"),
         ("`inertia` (bodies): symmetric, positive definite, moments meeting the triangle "
          "inequality")),
        ("not zero", "`quat_xyzw`, joint `axis` (both normalised on load)"),
        ("lower <= upper", "joint `limits`"),
        (f"at most {s.MAX_WORLD_BYTES // 1024} KiB, no YAML aliases, no duplicate keys",
         "the file"),
    ]
