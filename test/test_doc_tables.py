"""The generated tables of the documentation (mb_sim.doc_tables) are what the code makes now:
records, node parameters, world-file limits; and the world-file keys the parser accepts are all
documented."""

from __future__ import annotations

from pathlib import Path

from mb_sim import doc_tables
from mb_sim.model import world

ROOT = Path(__file__).resolve().parents[1]


def test_generated_tables_are_up_to_date() -> None:
    stale = [f"{t.document} ({t.name})" for t in doc_tables.stale(ROOT)]
    assert not stale, f"out of step with the code: {stale}; run .venv/bin/python -m mb_sim.doc_tables"


def test_every_world_key_is_documented() -> None:
    text = (ROOT / "docs" / "worlds.md").read_text()
    keys = {*world._TOP_KEYS, *world._GROUND_KEYS, *world._ROBOT_KEYS, *world._BODY_KEYS,
            *world._JOINT_KEYS, *world.SOLVER_RANGES}
    missing = sorted(k for k in keys if f"{k}:" not in text and f"`{k}`" not in text)
    assert not missing, f"docs/worlds.md does not mention the world-file keys {missing}"
