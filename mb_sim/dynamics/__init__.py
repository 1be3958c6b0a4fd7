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
from mb_sim.dynamics.hybrid import hybrid_dynamics
from mb_sim.dynamics.rnea import inverse_dynamics
from mb_sim.dynamics.work import allocate_tree_work, new_dynamics, new_tree_work
from mb_sim.model.compile import GRAVITY, compile_tree, new_tree
from mb_sim.model.model import Model

__all__ = ["GRAVITY", "aba", "crba", "hybrid", "rnea"]


def _vector(model: Model, value: object, name: str) -> np.ndarray:
    if type(value) is np.ndarray and value.dtype == np.float64 and value.shape == (model.nv,):
        return value
    arr = np.ascontiguousarray(value, dtype=float)
    if arr.shape != (model.nv,):
        raise ValueError(f"{name} must have shape ({model.nv},) for {model.name!r}, got {arr.shape}")
    return arr


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
        record = new_dynamics(new_tree(tree), new_tree_work(allocate_tree_work(model.nv)))
        per_gravity[key] = record
    return record


@njit
def _aba(dyn: Any, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
    qdd = np.empty(q.shape[0])
    articulated_accelerations(dyn.tree, dyn.work, q, qd, tau, qdd)
    return qdd


@njit
def _rnea(dyn: Any, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    tau = np.empty(q.shape[0])
    inverse_dynamics(dyn.tree, dyn.work, q, qd, qdd, tau)
    return tau


@njit
def _crba(dyn: Any, q: np.ndarray) -> np.ndarray:
    n = q.shape[0]
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
    model: Model, q: object, qd: object, tau: object, gravity: Sequence[float] = GRAVITY
) -> np.ndarray:
    """Forward dynamics qdd = H^-1 (tau - damping qd - C(q, qd) - g(q)) by ABA, O(n)."""
    return _aba(_dynamics_record(model, gravity), _vector(model, q, "q"),
                _vector(model, qd, "qd"), _vector(model, tau, "tau"))


def rnea(
    model: Model, q: object, qd: object, qdd: object, gravity: Sequence[float] = GRAVITY
) -> np.ndarray:
    """Inverse dynamics tau = H qdd + C(q, qd) + g(q) + damping qd by RNEA, O(n)."""
    return _rnea(_dynamics_record(model, gravity), _vector(model, q, "q"),
                 _vector(model, qd, "qd"), _vector(model, qdd, "qdd"))


def crba(model: Model, q: object) -> np.ndarray:
    """Joint-space mass matrix H(q) by the composite-rigid-body algorithm."""
    return _crba(_dynamics_record(model, GRAVITY), _vector(model, q, "q"))


def hybrid(
    model: Model,
    q: object,
    qd: object,
    tau: object,
    qdd_prescribed: object,
    prescribed_mask: object,
    gravity: Sequence[float] = GRAVITY,
) -> tuple[np.ndarray, np.ndarray]:
    """Hybrid dynamics: (qdd, tau) with qdd[mask] = qdd_prescribed[mask] and tau[~mask] = tau.

    Returns every joint's acceleration and the torques the prescribed joints need.
    """
    mask = np.ascontiguousarray(prescribed_mask, dtype=np.bool_)
    if mask.shape != (model.nv,):
        raise ValueError(f"prescribed_mask must have shape ({model.nv},), got {mask.shape}")
    return _hybrid(_dynamics_record(model, gravity), _vector(model, q, "q"),
                   _vector(model, qd, "qd"), _vector(model, tau, "tau"),
                   _vector(model, qdd_prescribed, "qdd_prescribed"), mask)
