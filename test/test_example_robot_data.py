"""Every URDF of example-robot-data that Pinocchio loads also loads in mb_sim, and its ABA,
RNEA and CRBA match Pinocchio's to 1e-9 (fixed base).

The robots are found by walking <site-packages>/cmeel.prefix/share/example-robot-data/robots
(the package is a test dependency; the test fails, never skips, when it is missing). Each URDF
is loaded once and compared at a few random states, with the joint maps and the damping
convention of test_pinocchio.py. A root that hangs on a floating or planar joint is compared
with that joint fixed.

Two kinds of difference are expected and checked, not ignored:
- mb_sim repairs slightly invalid body inertias with a warning (Pinocchio takes them as they
  are): such a body must be named in a warning, and Pinocchio is then given the repaired
  inertia; every other body's inertia must equal Pinocchio's.
- mb_sim refuses a movable joint that moves no mass (ABA would divide by zero) when
  `inertia_from_geometry` is false, as here: the dynamics compared are the URDF's as written
  (by default such links get the mass of their collision shapes, which Pinocchio does not
  give them). Such a refusal is accepted only when Pinocchio's own mass matrix of that robot
  is singular.
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pinocchio as pin
import pytest
from robot_data import robots_dir

import mb_sim

N_STATES = 3
TOL = 1e-9


def _urdfs() -> list[str]:
    try:
        return sorted(str(p.relative_to(robots_dir())) for p in robots_dir().rglob("*.urdf"))
    except BaseException:  # noqa: BLE001 (pytest.fail outside a test: report it in the test)
        return ["<example-robot-data missing>"]


URDFS = _urdfs()


def test_the_walk_finds_the_robots() -> None:
    assert len(URDFS) >= 60, URDFS


def _root_fixed(text: str) -> str | None:
    """The URDF with floating or planar joints made fixed, or None when it has none."""
    root = ET.fromstring(text)
    joints = [j for j in root.iter("joint") if j.get("type") in ("floating", "planar")]
    for j in joints:
        j.set("type", "fixed")
    return ET.tostring(root, encoding="unicode") if joints else None


def _pin_inertia(m: mb_sim.Model, b: int) -> pin.Inertia:
    return pin.Inertia(float(m.mass[b]), np.array(m.com[b]), np.array(m.inertia[b]))


def _same_inertia(a: pin.Inertia, b: pin.Inertia) -> bool:
    scale = max(1.0, float(np.abs(b.matrix()).max()))
    return float(np.abs(a.matrix() - b.matrix()).max()) <= 1e-9 * scale


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.size == 0:  # a robot without movable joints (the quadrotors)
        return 0.0
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("rel", URDFS)
def test_robot(rel: str, caplog: pytest.LogCaptureFixture) -> None:
    path = robots_dir() / rel
    text = path.read_text()
    fixed = _root_fixed(text)
    try:
        pmodel = pin.buildModelFromXML(fixed) if fixed else pin.buildModelFromUrdf(str(path))
    except (RuntimeError, ValueError):  # outside the target; mb_sim must still not crash
        try:
            mb_sim.load_urdf(path)
        except mb_sim.ModelError as exc:
            assert str(path) in str(exc)
        return
    data = pmodel.createData()
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        try:
            model = mb_sim.load_urdf(fixed if fixed else path, inertia_from_geometry=False)
        except mb_sim.ModelError as exc:
            assert "moves no mass" in str(exc), str(exc)
            H = pin.crba(pmodel, data, pin.neutral(pmodel))
            H = np.triu(H) + np.triu(H, 1).T
            eig = np.linalg.eigvalsh(H)
            assert eig[0] <= 1e-12 * eig[-1], f"{rel}: refused ({exc}) but Pinocchio's H is regular"
            return
    warned = " ".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)

    assert pmodel.nv == model.nv
    idx_q, idx_v, nq = [], [], []
    for b, name in enumerate(model.joint_names):
        jid = pmodel.getJointId(name)
        joint = pmodel.joints[jid]
        assert joint.nv == 1, (name, joint.shortname())
        idx_q.append(joint.idx_q)
        idx_v.append(joint.idx_v)
        nq.append(joint.nq)
        ours = _pin_inertia(model, b)
        if not _same_inertia(ours, pmodel.inertias[jid]):
            child = next(n for n, j in model.link_joint.items() if j == name)
            assert re.search(rf"'{re.escape(child)}'.*repaired", warned), (
                f"{rel}: body of joint {name!r} differs from Pinocchio's without a repair warning")
            pmodel.inertias[jid] = ours
    data = pmodel.createData()
    iv = np.array(idx_v, dtype=int)

    def q_pin(q: np.ndarray) -> np.ndarray:
        out = pin.neutral(pmodel)
        for qi, i, n in zip(q, idx_q, nq):
            out[i : i + n] = (np.cos(qi), np.sin(qi)) if n == 2 else qi
        return out

    def v_pin(v: np.ndarray) -> np.ndarray:
        out = np.zeros(pmodel.nv)
        out[iv] = v
        return out

    rng = np.random.default_rng(zlib.crc32(rel.encode()))
    lo = np.clip(np.where(np.isfinite(model.lower), model.lower, -np.pi), -np.pi, np.pi)
    hi = np.clip(np.where(np.isfinite(model.upper), model.upper, np.pi), -np.pi, np.pi)
    hi = np.where(hi > lo, hi, lo + 2 * np.pi)
    D = model.damping
    for _ in range(N_STATES):
        q = rng.uniform(lo, hi)
        qd = rng.uniform(-2.0, 2.0, model.nv)
        x = rng.uniform(-1.0, 1.0, model.nv)
        qp, vp = q_pin(q), v_pin(qd)
        ref = pin.aba(pmodel, data, qp, vp, v_pin(20.0 * x - D * qd))[iv]
        assert rel_err(mb_sim.aba(model, q, qd, 20.0 * x), ref) <= TOL, f"{rel}: aba"
        ref = pin.rnea(pmodel, data, qp, vp, v_pin(5.0 * x))[iv] + D * qd
        assert rel_err(mb_sim.rnea(model, q, qd, 5.0 * x), ref) <= TOL, f"{rel}: rnea"
        H = np.triu(pin.crba(pmodel, data, qp))
        H = (H + np.triu(H, 1).T)[np.ix_(iv, iv)]
        assert rel_err(mb_sim.crba(model, q), H) <= TOL, f"{rel}: crba"
