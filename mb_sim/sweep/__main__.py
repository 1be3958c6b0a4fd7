"""python -m mb_sim.sweep SPEC.yaml [--workers N] [--address ray://host:port] [--output F]"""

from __future__ import annotations

import argparse
import sys

from mb_sim.sweep import SpecError, load_spec, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mb_sim.sweep",
        description="Run every scenario of a sweep spec (mb_sim.sweep.spec) and write the table.")
    parser.add_argument("spec", help="sweep spec (YAML)")
    parser.add_argument("--workers", type=int, default=None,
                        help="run on a local Ray cluster of N worker processes")
    parser.add_argument("--address", default=None,
                        help="run on a running Ray cluster (ray://host:port or host:port; "
                             "default: RAY_ADDRESS when set)")
    parser.add_argument("--output", default=None,
                        help="table to write (.parquet or .csv); default: the spec's output")
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    try:
        spec = load_spec(args.spec)
        target = args.output or spec.output
        if target is None:
            parser.error("the spec names no output: give --output results.parquet (or .csv)")
        rows = run(spec, workers=args.workers, address=args.address, output=target,
                   progress=True)
    except (SpecError, ImportError) as e:
        print(f"sweep: {e}", file=sys.stderr)
        return 2
    errors = sum(1 for row in rows if row.get("error"))
    print(f"sweep: {len(rows)} scenarios -> {target}"
          + (f" ({errors} stopped by a SimulationError: see the error column)" if errors else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
