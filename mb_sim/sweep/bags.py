"""Replaying many bags: a regression suite of recorded runs, serially or on Ray.

    python -m mb_sim.replay FOLDER_OR_BAGS... [--tolerance TOL] [--workers N | --address A]

Every bag directory (one holding a metadata.yaml) given, or found below a given folder, is
replayed by `mb_sim.replay.replay_bag`, one bag per job, in this process or on Ray workers
(`mb_sim.sweep.cluster`: --workers N local processes, --address or RAY_ADDRESS a running
cluster). One line per bag, in path order; the exit status is 0 when every bag replays as
recorded, 1 when one diverges, 2 when one cannot be replayed (or none is found).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

OK, DIVERGES, UNREPLAYABLE = 0, 1, 2


def find_bags(paths: list[str]) -> list[Path]:
    """The bag directories among `paths` and below them, sorted; a path that is neither a
    bag nor holds one is an error (FileNotFoundError naming it)."""
    bags: set[Path] = set()
    for p in map(Path, paths):
        if (p / "metadata.yaml").is_file():
            bags.add(p)
            continue
        found = {m.parent for m in p.rglob("metadata.yaml")} if p.is_dir() else set()
        if not found:
            raise FileNotFoundError(f"{p}: neither a bag (no metadata.yaml) nor a folder of bags")
        bags |= found
    return sorted(bags)


def replay_one(tolerance: float, chunk: list[tuple[str, str]]) -> list[tuple[str, tuple]]:
    """[(bag, (status, message))] of a chunk of (bag, bag) pairs (what a Ray task runs)."""
    from mb_sim.replay import ReplayError, replay_bag

    out = []
    for key, bag in chunk:
        try:
            result = replay_bag(bag, tolerance)
        except ReplayError as e:
            out.append((key, (UNREPLAYABLE, f"cannot be replayed: {e}")))
            continue
        if result.divergence is not None:
            verdict = (DIVERGES, (f"DIVERGES after {result.steps} steps: first at "
                                 f"{result.divergence}"))
        elif result.compared == 0:
            verdict = (UNREPLAYABLE, "has no joint_states to compare")
        else:
            how = "identical" if tolerance == 0 else f"within {tolerance:g}"
            verdict = (OK, (f"{result.compared} joint_states {how} over {result.steps} steps "
                           f"with {result.commands} commands"))
        out.append((key, verdict))
    return out


def replay_all(bags: list[Path], tolerance: float = 0.0, workers: int | None = None,
               address: str | None = None) -> dict[str, tuple[int, str]]:
    """{bag: (status, message)} of every bag (see the module docstring)."""
    items = [(str(b), str(b.resolve())) for b in bags]
    address = address or (None if workers else os.environ.get("RAY_ADDRESS"))
    if workers or address:
        from mb_sim.sweep import cluster

        return cluster.map_jobs(replay_one, tolerance, items, workers, address)
    return dict(replay_one(tolerance, items))


def main(args: Any) -> int:
    """The command of many bags; `args` has bag (a list), tolerance, workers, address."""
    try:
        bags = find_bags(args.bag)
        results = replay_all(bags, args.tolerance, args.workers, args.address)
    except (FileNotFoundError, ImportError) as e:
        print(f"replay: {e}", file=sys.stderr)
        return UNREPLAYABLE
    for bag in sorted(results):
        status, message = results[bag]
        print(f"replay: {bag}: {message}", file=sys.stderr if status == UNREPLAYABLE else
              sys.stdout)
    worst = max(status for status, _ in results.values())
    counts = [sum(1 for s, _ in results.values() if s == k) for k in (OK, DIVERGES, UNREPLAYABLE)]
    print(f"replay: {len(results)} bags: {counts[0]} as recorded, {counts[1]} diverge, "
          f"{counts[2]} cannot be replayed")
    return worst
