"""Reduced-coordinate tree algorithms on the model arrays: ABA, RNEA, CRBA, hybrid dynamics,
kinematics and the articulated impulse response."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.aba import articulated_accelerations
from mb_sim.dynamics.crba import crba_kernel
from mb_sim.dynamics.hybrid import hybrid_kernel
from mb_sim.dynamics.rnea import rnea_kernel
from mb_sim.dynamics.work import allocate_tree_work, new_tree_work
from mb_sim.model.compile import compile_tree, new_tree
from mb_sim.model.model import Model

GRAVITY = (0.0, 0.0, -9.81)

__all__ = ["GRAVITY", "aba", "base_acceleration", "crba", "hybrid", "rnea"]


def base_acceleration(gravity: Sequence[float]) -> np.ndarray:
    """The fictitious base acceleration a_0 = [0; -g] that puts gravity into the recursions."""
    a0 = np.zeros(6)
    a0[3:] = -np.asarray(gravity, dtype=float)
    return a0


@lru_cache(maxsize=16)
def _cached_base_acceleration(gravity: tuple[float, ...]) -> np.ndarray:
    a0 = base_acceleration(gravity)
    a0.setflags(write=False)
    return a0


def _a0(gravity: Sequence[float]) -> np.ndarray:
    if isinstance(gravity, tuple):
        return _cached_base_acceleration(gravity)
    return base_acceleration(gravity)


def _vector(model: Model, value: object, name: str) -> np.ndarray:
    if type(value) is np.ndarray and value.dtype == np.float64 and value.shape == (model.nv,):
        return value
    arr = np.ascontiguousarray(value, dtype=float)
    if arr.shape != (model.nv,):
        raise ValueError(f"{name} must have shape ({model.nv},) for {model.name!r}, got {arr.shape}")
    return arr


_records: weakref.WeakKeyDictionary[Model, dict[tuple[float, ...], tuple[Any, Any]]] = (
    weakref.WeakKeyDictionary()
)


def _tree_records(model: Model, gravity: Sequence[float]) -> tuple[Any, Any]:
    """The tree record of a model under a gravity, and a work record, made once."""
    per_gravity = _records.setdefault(model, {})
    key = tuple(float(g) for g in gravity)
    if key not in per_gravity:
        tree = compile_tree(model, None, np.array(key))
        per_gravity[key] = (new_tree(tree), new_tree_work(allocate_tree_work(model.nv)))
    return per_gravity[key]


@njit
def _aba(tree: Any, work: Any, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
    qdd = np.empty(q.shape[0])
    articulated_accelerations(tree, work, q, qd, tau, qdd)
    return qdd


def aba(
    model: Model, q: object, qd: object, tau: object, gravity: Sequence[float] = GRAVITY
) -> np.ndarray:
    """Forward dynamics qdd = H^-1 (tau - damping qd - C(q, qd) - g(q)) by ABA, O(n)."""
    tree, work = _tree_records(model, gravity)
    return _aba(tree, work, _vector(model, q, "q"), _vector(model, qd, "qd"),
                _vector(model, tau, "tau"))


def rnea(
    model: Model, q: object, qd: object, qdd: object, gravity: Sequence[float] = GRAVITY
) -> np.ndarray:
    """Inverse dynamics tau = H qdd + C(q, qd) + g(q) + damping qd by RNEA, O(n)."""
    return rnea_kernel(
        *model.kinematic_arrays,
        model.spatial_inertia,
        model.damping,
        _vector(model, q, "q"),
        _vector(model, qd, "qd"),
        _vector(model, qdd, "qdd"),
        _a0(gravity),
    )


def crba(model: Model, q: object) -> np.ndarray:
    """Joint-space mass matrix H(q) by the composite-rigid-body algorithm."""
    return crba_kernel(*model.kinematic_arrays, model.spatial_inertia, _vector(model, q, "q"))


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
    return hybrid_kernel(
        *model.kinematic_arrays,
        model.spatial_inertia,
        model.damping,
        _vector(model, q, "q"),
        _vector(model, qd, "qd"),
        _vector(model, tau, "tau"),
        _vector(model, qdd_prescribed, "qdd_prescribed"),
        mask,
        _a0(gravity),
    )
