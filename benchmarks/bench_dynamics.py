"""Per-call cost of mb_sim's dynamics next to Pinocchio's, and ABA's scaling with chain length.

    .venv/bin/python benchmarks/bench_dynamics.py [--quick]

Table 1: ABA, RNEA and CRBA on Panda (example-robot-data, 9 dof) for mb_sim and Pinocchio in
the same process, microseconds per call from Python, and the ratio mb_sim / Pinocchio; each
once returning a new array, once writing into an array given (`out=`; Pinocchio writes into
its Data either way).
Table 2: ABA on serial chains of 10 ... 320 revolute links (URDF strings built here), in
microseconds per call and per link; ABA is O(n) (Holck 2005, ch. 3), so the per-link cost should be
about constant once the call overhead is amortised. Pinocchio's ABA is listed alongside.

Every function is called once first (numba compiles, or loads its cache), then timed with
time.perf_counter over many calls, mb_sim and Pinocchio in turns; the best of several repeats
is printed. Numbers only.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pinocchio as pin

import mb_sim

CHAIN_LENGTHS = (10, 20, 40, 80, 160, 320)


def panda_urdf() -> Path:
    dist = importlib.metadata.distribution("example-robot-data")
    root = Path(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")))
    return root / "panda_description" / "urdf" / "panda.urdf"


def chain_urdf(n: int) -> str:
    """n revolute links, 0.1 m apart, axes alternating between y and z (a 3-D chain)."""
    parts = [f'<robot name="chain{n}"><link name="l0"/>']
    for i in range(1, n + 1):
        axis = "0 1 0" if i % 2 else "0 0 1"
        parts.append(
            f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
            f'<origin xyz="{0.0 if i == 1 else 0.1} 0 0"/><axis xyz="{axis}"/>'
            '<limit lower="-3" upper="3" effort="100" velocity="10"/></joint>'
            f'<link name="l{i}"><inertial><origin xyz="0.05 0.01 0"/><mass value="1"/>'
            '<inertia ixx="1e-4" ixy="0" ixz="0" iyy="9e-4" iyz="0" izz="9e-4"/>'
            "</inertial></link>"
        )
    parts.append("</robot>")
    return "".join(parts)


def paired_us(fns: tuple[Callable[[], object], ...], calls: int, repeats: int
              ) -> list[float]:
    """Best microseconds per call of each function, timed in turns (a burst of load on the
    shared machine then hits all of them, not one)."""
    for fn in fns:
        fn()
    best = [np.inf] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            best[k] = min(best[k], (time.perf_counter() - t0) / calls)
    return [b * 1e6 for b in best]


class Pair:
    """A URDF loaded by both libraries, with one random state in each one's coordinates."""

    def __init__(self, urdf: str, from_string: bool, seed: int = 0) -> None:
        self.model = mb_sim.load_urdf(urdf)
        self.pin = pin.buildModelFromXML(urdf) if from_string else pin.buildModelFromUrdf(urdf)
        self.data = self.pin.createData()
        rng = np.random.default_rng(seed)
        nv = self.model.nv
        lo = np.where(np.isfinite(self.model.lower), self.model.lower, -np.pi)
        hi = np.where(np.isfinite(self.model.upper), self.model.upper, np.pi)
        self.q = rng.uniform(lo, hi)
        self.qd = rng.uniform(-1.0, 1.0, nv)
        self.tau = rng.uniform(-5.0, 5.0, nv)
        self.qdd = rng.uniform(-5.0, 5.0, nv)
        idx_q = [self.pin.joints[self.pin.getJointId(n)].idx_q for n in self.model.joint_names]
        idx_v = [self.pin.joints[self.pin.getJointId(n)].idx_v for n in self.model.joint_names]
        assert all(self.pin.joints[self.pin.getJointId(n)].nq == 1 for n in self.model.joint_names)
        self.pq = np.zeros(self.pin.nq)
        self.pq[idx_q] = self.q
        self.pv, self.ptau, self.pa = (np.zeros(self.pin.nv) for _ in range(3))
        self.pv[idx_v], self.ptau[idx_v], self.pa[idx_v] = self.qd, self.tau, self.qdd


def panda_table(calls: int, repeats: int) -> None:
    p = Pair(str(panda_urdf()), from_string=False)
    m = p.model
    v, H = np.empty(m.nv), np.empty((m.nv, m.nv))
    rows = [
        ("ABA", lambda: mb_sim.aba(m, p.q, p.qd, p.tau),
         lambda: pin.aba(p.pin, p.data, p.pq, p.pv, p.ptau)),
        ("RNEA", lambda: mb_sim.rnea(m, p.q, p.qd, p.qdd),
         lambda: pin.rnea(p.pin, p.data, p.pq, p.pv, p.pa)),
        ("CRBA", lambda: mb_sim.crba(m, p.q), lambda: pin.crba(p.pin, p.data, p.pq)),
        ("ABA out=", lambda: mb_sim.aba(m, p.q, p.qd, p.tau, out=v),
         lambda: pin.aba(p.pin, p.data, p.pq, p.pv, p.ptau)),
        ("RNEA out=", lambda: mb_sim.rnea(m, p.q, p.qd, p.qdd, out=v),
         lambda: pin.rnea(p.pin, p.data, p.pq, p.pv, p.pa)),
        ("CRBA out=", lambda: mb_sim.crba(m, p.q, out=H), lambda: pin.crba(p.pin, p.data, p.pq)),
    ]  # fmt: skip
    print(f"Panda ({m.nv} dof), microseconds per call")
    print(f"{'algorithm':<10}{'mb_sim':>10}{'pinocchio':>12}{'ratio':>9}")
    for name, ours, theirs in rows:
        a, b = paired_us((ours, theirs), calls, repeats)
        print(f"{name:<10}{a:>10.2f}{b:>12.2f}{a / b:>9.2f}")


def chain_table(calls: int, repeats: int) -> None:
    print("\nABA on serial chains, microseconds")
    print(f"{'links':>6}{'mb_sim':>10}{'per link':>10}{'pinocchio':>12}{'per link':>10}")
    for n in CHAIN_LENGTHS:
        p = Pair(chain_urdf(n), from_string=True, seed=n)
        k = max(20, calls * 10 // n)
        a, b = paired_us((lambda p=p: mb_sim.aba(p.model, p.q, p.qd, p.tau),
                          lambda p=p: pin.aba(p.pin, p.data, p.pq, p.pv, p.ptau)), k, repeats)
        print(f"{n:>6}{a:>10.2f}{a / n:>10.3f}{b:>12.2f}{b / n:>10.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (a smoke run)")
    args = parser.parse_args()
    calls, repeats = (200, 2) if args.quick else (2000, 15)
    panda_table(calls, repeats)
    chain_table(calls, repeats)


if __name__ == "__main__":
    main()
