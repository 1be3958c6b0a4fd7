"""Sweeps: many simulations of one spec, serially or on Ray, into one table.

    python -m mb_sim.sweep SPEC.yaml [--workers N | --address ray://host:port] [--output F]

    import mb_sim.sweep
    rows = mb_sim.sweep.run("spec.yaml", workers=4)   # [{column: value}] in scenario order

A spec (`mb_sim.sweep.spec`) names a robot and/or world, the parameters that vary (grid and
seeded random draws over masses, friction, gains, start states, world-file values), the
duration, the metrics (`mb_sim.sweep.scenario`) and the output file (.parquet or .csv).
Without workers or an address (and no RAY_ADDRESS) the scenarios run one after the other in
this process; with them, on Ray (`mb_sim.sweep.cluster`). Every scenario is a pure function of
the spec and its number, so the table is the same, bit for bit, either way and in any order
of completion. The core library never imports this package; Ray is the `scale` extra.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mb_sim.sweep.scenario import run_scenario
from mb_sim.sweep.spec import Spec, SpecError, load_spec
from mb_sim.sweep.table import read, write


def run_chunk(spec: Spec, chunk: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict]]:
    """[(index, row)] of a chunk of scenarios (what a Ray task runs)."""
    return [(index, run_scenario(spec, index, values)) for index, values in chunk]


def run(spec: str | os.PathLike[str] | dict | Spec, workers: int | None = None,
        address: str | None = None, output: str | os.PathLike[str] | None = None,
        progress: bool = False) -> list[dict[str, Any]]:
    """Run every scenario of `spec` (a path, a dict or a Spec) and return the rows in
    scenario order; write them to `output` (default: the spec's `output`, if any).

    workers: local Ray worker processes; address: a Ray cluster ("ray://host:port", or
    RAY_ADDRESS when neither is given); neither: serially in this process."""
    if not isinstance(spec, Spec):
        spec = load_spec(spec)
    address = address or (None if workers else os.environ.get("RAY_ADDRESS"))
    items = list(enumerate(spec.scenarios()))
    if workers or address:
        from mb_sim.sweep import cluster

        folder = Path(spec.source).parent if not spec.source.startswith("<") else Path.cwd()
        results = cluster.map_jobs(run_chunk, spec, items, workers, address,
                                   code_paths=[os.getcwd(), str(folder)],
                                   report=cluster.say if progress else None)
        rows = [results[i] for i, _ in items]
    else:
        rows = [row for chunk in ([item] for item in items) for _, row in run_chunk(spec, chunk)]
    target = output if output is not None else spec.output
    if target is not None:
        write(rows, target)
    return rows


__all__ = ["Spec", "SpecError", "load_spec", "read", "run", "run_chunk", "run_scenario",
           "write"]
