"""Reduced-coordinate tree algorithms on the model arrays: ABA, RNEA, CRBA, hybrid dynamics,
kinematics and the articulated impulse response."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.aba import articulated_accelerations
from mb_sim.dynamics.crba import mass_matrix
from mb_sim.dynamics.floating import from_pinocchio, to_pinocchio
from mb_sim.dynamics.hybrid import hybrid_dynamics
from mb_sim.dynamics.rnea import inverse_dynamics
from mb_sim.dynamics.work import allocate_tree_work, new_dynamics, new_tree_work
from mb_sim.model.compile import compile_tree, new_tree
from mb_sim.model.model import Model
from mb_sim.model.world import DEFAULT_GRAVITY

__all__ = ["DEFAULT_GRAVITY", "aba", "crba", "hybrid", "rnea"]


def _vector(model: Model, value: object, name: str, size: int | None = None) -> np.ndarray:
    size = model.nv if size is None else size
    if type(value) is np.ndarray and value.dtype == np.float64 and value.shape == (size,):
        return value
    arr = np.ascontiguousarray(value, dtype=float)
    if arr.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},) for {model.name!r}, got {arr.shape}")
    return arr


def _kernel_q(model: Model, q: object) -> np.ndarray:
    """q in the kernels' layout (a floating base's 7 coordinates after the joints)."""
    q = _vector(model, q, "q", model.nq)
    if not model.floating_base:
        return q
    kq, _ = from_pinocchio(q, None, model.n_joints)
    assert kq is not None
    norm = float(np.linalg.norm(kq[-4:]))
    if not abs(norm - 1.0) < 1e-6:
        raise ValueError(f"q[3:7] must be a unit quaternion (x, y, z, w), got norm {norm:g}")
    return kq


def _kernel_v(model: Model, v: object, name: str) -> np.ndarray:
    """A velocity-sized vector in the kernels' layout (the base's twist [omega; v] last)."""
    v = _vector(model, v, name)
    return from_pinocchio(None, v, model.n_joints)[1] if model.floating_base else v


def _user_v(model: Model, v: np.ndarray) -> np.ndarray:
    return to_pinocchio(None, v, model.n_joints)[1] if model.floating_base else v


_records: weakref.WeakKeyDictionary[Model, dict[Any, Any]] = weakref.WeakKeyDictionary()


def _dynamics_record(model: Model, gravity: Sequence[float]) -> Any:
    """The tree record of a model under a gravity with a work record, made once."""
    per_gravity = _records.get(model)
    if per_gravity is None:
        per_gravity = _records[model] = {}
    key = gravity if isinstance(gravity, tuple) else tuple(float(g) for g in gravity)
    record = per_gravity.get(key)
    if record is None:
        tree = compile_tree(model, None, np.array(key, dtype=float))
        work = allocate_tree_work(model.n_joints, model.floating_base)
        record = new_dynamics(new_tree(tree), new_tree_work(work))
        per_gravity[key] = record
    return record


@njit
def _aba(dyn: Any, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The base's part of tau (a wrench in base axes) acts as an external force on it."""
    n = dyn.tree.parent.shape[0]
    f_ext = dyn.work.f_ext
    for k in range(tau.shape[0] - n):
        f_ext[n, k] = tau[n + k]
    qdd = np.empty(qd.shape[0])
    articulated_accelerations(dyn.tree, dyn.work, q, qd, tau, qdd)
    f_ext[n, :] = 0.0
    return qdd


@njit
def _rnea(dyn: Any, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    tau = np.empty(qd.shape[0])
    inverse_dynamics(dyn.tree, dyn.work, q, qd, qdd, tau)
    return tau


@njit
def _crba(dyn: Any, q: np.ndarray) -> np.ndarray:
    n = dyn.work.qdd.shape[0]
    H = np.empty((n, n))
    mass_matrix(dyn.tree, dyn.work, q, H)
    return H


@njit
def _hybrid(dyn: Any, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, qdd_prescribed: np.ndarray,
            prescribed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = q.shape[0]
    qdd, tau_out = np.empty(n), np.empty(n)
    hybrid_dynamics(dyn.tree, dyn.work, q, qd, tau, qdd_prescribed, prescribed, qdd, tau_out)
    return qdd, tau_out


def aba(
    model: Model, q: object, qd: object, tau: object, gravity: Sequence[float] = DEFAULT_GRAVITY
) -> np.ndarray:
    """Forward dynamics qdd = H^-1 (tau - damping qd - C(q, qd) - g(q)) by ABA, O(n).

    Floating base: Pinocchio's free-flyer layout (q: nq = nv + 1; qd, tau, the result: nv,
    the base first as [linear; angular] in base axes; tau's base part is a wrench on it)."""
    record = _dynamics_record(model, gravity)
    if not model.floating_base:
        return _aba(record, _vector(model, q, "q"), _vector(model, qd, "qd"),
                    _vector(model, tau, "tau"))
    return _user_v(model, _aba(record, _kernel_q(model, q), _kernel_v(model, qd, "qd"),
                               _kernel_v(model, tau, "tau")))


def rnea(
    model: Model, q: object, qd: object, qdd: object, gravity: Sequence[float] = DEFAULT_GRAVITY
) -> np.ndarray:
    """Inverse dynamics tau = H qdd + C(q, qd) + g(q) + damping qd by RNEA, O(n) (layout as
    `aba`; a floating base's part of tau is the wrench it needs)."""
    record = _dynamics_record(model, gravity)
    if not model.floating_base:
        return _rnea(record, _vector(model, q, "q"), _vector(model, qd, "qd"),
                     _vector(model, qdd, "qdd"))
    return _user_v(model, _rnea(record, _kernel_q(model, q), _kernel_v(model, qd, "qd"),
                                _kernel_v(model, qdd, "qdd")))


def crba(model: Model, q: object) -> np.ndarray:
    """Mass matrix H(q) (nv x nv) by the composite-rigid-body algorithm (layout as `aba`)."""
    H = _crba(_dynamics_record(model, DEFAULT_GRAVITY), _kernel_q(model, q))
    if model.floating_base:
        order = _user_v(model, np.arange(model.nv))
        H = H[np.ix_(order, order)]
    return H


def hybrid(
    model: Model,
    q: object,
    qd: object,
    tau: object,
    qdd_prescribed: object,
    prescribed_mask: object,
    gravity: Sequence[float] = DEFAULT_GRAVITY,
) -> tuple[np.ndarray, np.ndarray]:
    """Hybrid dynamics: (qdd, tau) with qdd[mask] = qdd_prescribed[mask] and tau[~mask] = tau.

    Returns every joint's acceleration and the torques the prescribed joints need. Fixed-base
    robots only (a floating base is ValueError).
    """
    if model.floating_base:
        raise ValueError(f"hybrid: {model.name!r} has a floating base; hybrid dynamics takes "
                         "fixed-base robots (use aba and rnea)")
    mask = np.ascontiguousarray(prescribed_mask, dtype=np.bool_)
    if mask.shape != (model.nv,):
        raise ValueError(f"prescribed_mask must have shape ({model.nv},), got {mask.shape}")
    return _hybrid(_dynamics_record(model, gravity), _vector(model, q, "q"),
                   _vector(model, qd, "qd"), _vector(model, tau, "tau"),
                   _vector(model, qdd_prescribed, "qdd_prescribed"), mask)
