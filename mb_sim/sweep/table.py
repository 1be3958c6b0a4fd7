"""The table of a sweep: one row per scenario, in scenario order, written as Parquet or CSV.

Columns are the union of every row's keys in their first appearance (scenario, the
parameters, the metrics, error); a row without a column gets an empty cell (None). CSV cells
hold Python's shortest round-trip form of each float (repr), so the file reads back to the same
bits; Parquet (pyarrow, the `scale` extra) stores the doubles themselves.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any


def columns(rows: list[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    return list(names)


def write(rows: list[dict[str, Any]], path: str | Path) -> Path:
    """Write `rows` to `path` (.parquet or .csv); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    names = columns(rows)
    if path.suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as e:
            raise ImportError(f"writing {path} needs pyarrow: pip install mb_sim[scale] (or "
                              "give the output a .csv name)") from e
        table = pa.table({n: [row.get(n) for row in rows] for n in names})
        pq.write_table(table, path)
        return path
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(names)
        for row in rows:
            out.writerow(["" if row.get(n) is None else _cell(row[n]) for n in names])
    return path


def _cell(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def read(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a table written by `write` (CSV cells come back as strings)."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    with path.open(newline="") as f:
        return list(csv.DictReader(f))
