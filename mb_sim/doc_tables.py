"""Tables of the documentation made from the code's own declarations, so they cannot drift:
the record tables of docs/architecture.md (`mb_sim.records`), the node's parameters in
docs/node.md (`mb_sim.ros.setup.params.SPECS`) and the keys and accepted values of world files in
docs/worlds.md (`mb_sim.model.world.schema`).

Each table sits between two comment lines naming it. `python -m mb_sim.doc_tables` rewrites
them all; `test/test_doc_tables.py` fails when one is out of step.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Table:
    document: str
    """Path relative to the repository root."""
    name: str
    make: Callable[[], str]

    @property
    def begin(self) -> str:
        return f"<!-- {self.name}: made by `python -m mb_sim.doc_tables`; do not edit by hand -->"

    @property
    def end(self) -> str:
        return f"<!-- end of {self.name} -->"

    def block(self) -> str:
        return f"{self.begin}\n\n{self.make()}\n\n{self.end}"

    def span(self, text: str) -> tuple[int, int]:
        """Where the table is in `text`; ValueError naming the document when it is not."""
        try:
            start = text.index(self.begin)
            return start, text.index(self.end, start) + len(self.end)
        except ValueError:
            raise ValueError(f"{self.document}: no {self.name!r} markers") from None


def _records() -> str:
    import mb_sim.sensing.raster
    import mb_sim.sim.data
    import mb_sim.sim.step  # noqa: F401 (they declare records; the model's come with them)
    from mb_sim import records

    return records.tables()


def _parameters() -> str:
    from mb_sim.ros.setup import params

    return params.markdown()


def _robot_parameters() -> str:
    from mb_sim.ros.setup import params

    return params.robots_markdown()


def _world_keys() -> str:
    from mb_sim.model.world import tables

    return tables.keys_markdown()


def _world_limits() -> str:
    from mb_sim.model.world import tables

    return tables.limits_markdown()


TABLES = (
    Table("docs/architecture.md", "record tables", _records),
    Table("docs/node.md", "parameter table", _parameters),
    Table("docs/node.md", "robot parameter table", _robot_parameters),
    Table("docs/worlds.md", "world keys", _world_keys),
    Table("docs/worlds.md", "world limits", _world_limits),
)


def stale(root: Path = ROOT) -> list[Table]:
    """The tables whose document does not hold what the code makes now."""
    out = []
    for table in TABLES:
        text = (root / table.document).read_text(encoding="utf-8")
        start, end = table.span(text)
        if text[start:end] != table.block():
            out.append(table)
    return out


def update(root: Path = ROOT) -> list[Table]:
    """Rewrite every stale table; the tables rewritten."""
    changed = stale(root)
    for table in changed:
        path = root / table.document
        text = path.read_text(encoding="utf-8")
        start, end = table.span(text)
        path.write_text(text[:start] + table.block() + text[end:], encoding="utf-8")
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m mb_sim.doc_tables`: rewrite the generated tables of the documentation."""
    del argv
    changed = update()
    for table in TABLES:
        print(f"{table.document} ({table.name}): "
              f"{'updated' if table in changed else 'up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
