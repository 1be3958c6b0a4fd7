"""The generated tables of the documentation (mb_sim.doc_tables) are what the code makes now:
records, node parameters, world-file keys and limits; and every world-file key of the schema
is documented outside the generated tables too (in the example or the text)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mb_sim import doc_tables
from mb_sim.model.world import schema, tables

ROOT = Path(__file__).resolve().parents[1]


def test_generated_tables_are_up_to_date() -> None:
    stale = [f"{t.document} ({t.name})" for t in doc_tables.stale(ROOT)]
    assert not stale, f"out of step with the code: {stale}; run .venv/bin/python -m mb_sim.doc_tables"


def _keys(s: Mapping[str, Any]) -> Iterator[str]:
    """Every key the schema `s` declares (not the deprecated ones), at any depth."""
    for k, sub in s.get("properties", {}).items():
        if not sub.get("deprecated"):
            yield k
            yield from _keys(sub)
    for sub in (s.get("items"), s.get("additionalProperties")):
        if isinstance(sub, Mapping):
            yield from _keys(sub)


def test_every_world_key_is_documented() -> None:
    text = (ROOT / "docs" / "worlds.md").read_text()
    for table in doc_tables.TABLES:
        if table.document == "docs/worlds.md":
            start, end = table.span(text)
            text = text[:start] + text[end:]
    keys = set(_keys(schema.SCHEMA))
    assert {"robots", "namespace", "tf", "inertia_from_geometry", "iterations", "p"} <= keys
    missing = sorted(k for k in keys if f"{k}:" not in text and f"`{k}`" not in text)
    assert not missing, f"docs/worlds.md does not mention the world-file keys {missing}"


def test_key_tables_list_every_key_of_each_section() -> None:
    text = tables.keys_markdown()
    for heading, _, keys, required in tables.SECTIONS:
        section = text.split(f"#### {heading}\n", 1)[1].split("####", 1)[0]
        listed = re.findall(r"^\| `([a-z_]+)`", section, re.MULTILINE)
        assert listed == [k for k, s in keys.items() if not s.get("deprecated")], heading
        for k, mark in required.items():
            assert f"| `{k}` ({mark}) |" in section
    assert "| `urdf` (required in `robots`) |" in text


def test_limits_table_takes_its_ranges_from_the_schema(monkeypatch: Any) -> None:
    assert "| 0 to 1e+09 | `gains.*.p` (robots)" in tables.limits_markdown()
    monkeypatch.setitem(schema.BODY, "mass", schema.number(2.0, 5.0, "", "kg"))
    assert "| 2 to 5 kg | `mass` (bodies) |" in tables.limits_markdown()
