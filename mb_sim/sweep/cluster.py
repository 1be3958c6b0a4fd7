"""Running many independent jobs on Ray: local worker processes or an existing cluster.

`map_jobs(function, shared, items, workers=N)` starts a Ray cluster on this machine with N
worker processes (bound to 127.0.0.1, no dashboard, no usage statistics) and stops it at the
end; `address="ray://host:port"` (or "host:port", or the RAY_ADDRESS environment variable)
uses a running cluster instead. Items go out in chunks, each a Ray task returning
[(item key, result)]; a task whose worker dies is run again by Ray (up to MAX_RETRIES times),
and results are kept by key, so nothing is lost or counted twice whatever the order in which
chunks finish. Ray is the optional `scale` extra: `pip install mb_sim[scale]`.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

MAX_RETRIES = 5
"""Runs of a chunk whose worker process died before it is given up."""


LOOPBACK = ("127.", "localhost", "[::1]", "::1")


def _ray(on_this_machine: bool = False) -> Any:
    """Ray, imported with usage statistics off. `on_this_machine`: every Ray process of the
    session advertises and binds the loopback address only (Ray's single-machine mode,
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0); it must be chosen before Ray is first imported."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if on_this_machine and "ray" not in sys.modules:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError as e:
        raise ImportError("running on several workers needs Ray: pip install mb_sim[scale] "
                          "(or pip install ray)") from e
    return ray


def start(workers: int | None, address: str | None, code_paths: Sequence[str] = ()) -> bool:
    """Connect to Ray: a running cluster at `address`, else a new local one with `workers`
    processes. Returns whether a cluster was started or joined here (and must be left)."""
    local = not address or address.split("://")[-1].startswith(LOOPBACK)
    ray = _ray(on_this_machine=local)
    if ray.is_initialized():
        return False
    job = ray.job_config.JobConfig(code_search_path=[str(Path(p).resolve()) for p in code_paths
                                                     if Path(p).is_dir()])
    if address:
        ray.init(address=address, job_config=job, logging_level="warning")
    else:
        if workers is None or workers < 1:
            raise ValueError(f"workers must be a positive number of processes, got {workers}")
        ray.init(num_cpus=workers, include_dashboard=False, job_config=job,
                 logging_level="warning")
    return True


def stop() -> None:
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()


def map_jobs(function: Callable[[Any, list], list], shared: Any, items: Sequence[tuple[Any, Any]],
             workers: int | None = None, address: str | None = None,
             code_paths: Sequence[str] = (), report: Callable[[int, int], None] | None = None,
             ) -> dict[Any, Any]:
    """{key: result} of function(shared, chunk) -> [(key, result)] over chunks of the (key,
    item) pairs, on Ray (see the module docstring). `report(done, total)` after each chunk."""
    started = start(workers, address, code_paths)
    ray = _ray()
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        size = max(1, math.ceil(len(items) / (4 * cpus)))
        chunks = [list(items[i:i + size]) for i in range(0, len(items), size)]
        task = ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)(function)
        ref = ray.put(shared)
        pending = [task.remote(ref, chunk) for chunk in chunks]
        results: dict[Any, Any] = {}
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for key, value in ray.get(ready[0]):
                results[key] = value
            if report is not None:
                report(len(results), len(items))
        return results
    finally:
        if started:
            stop()


def say(done: int, total: int) -> None:
    """A progress line on stderr."""
    print(f"\r{done}/{total} done", end="\n" if done == total else "", file=sys.stderr,
          flush=True)
