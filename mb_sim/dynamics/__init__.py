"""Reduced-coordinate tree algorithms on the model arrays: ABA, RNEA, CRBA, hybrid dynamics,
kinematics and the articulated impulse response.

The public `aba`, `rnea`, `crba` go through one `TreeDynamics` per model and gravity: the
model's records are made once, and the compiled kernels are called through their entry points
(`mb_sim._jit.entry_point`), the arrays checked here instead of typed by numba on every call.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mb_sim._jit import ANY_MATRIX, ANY_VECTOR, entry_point, njit
from mb_sim.dynamics.aba import articulated_accelerations
from mb_sim.dynamics.crba import mass_matrix
from mb_sim.dynamics.floating import from_pinocchio, to_pinocchio
from mb_sim.dynamics.hybrid import hybrid_dynamics
from mb_sim.dynamics.rnea import inverse_dynamics
from mb_sim.dynamics.work import allocate_tree_work, new_dynamics, new_tree_work
from mb_sim.model.forest import compile_forest, new_tree
from mb_sim.model.model import Model
from mb_sim.model.world import DEFAULT_GRAVITY

__all__ = ["DEFAULT_GRAVITY", "TreeDynamics", "aba", "crba", "hybrid", "rnea", "tree_dynamics"]


@dataclass(frozen=True)
class _Sizes:
    """What the argument checks need of a model (not the model: a cache of TreeDynamics must
    not keep its model alive)."""

    name: str
    n_joints: int
    nq: int
    nv: int
    floating_base: bool
    balls: tuple[tuple[str, int], ...] = ()
    """(name, where its quaternion sits in the kernels' q) of each ball joint."""


def _vector(model: Any, value: object, name: str, size: int | None = None) -> np.ndarray:
    size = model.nv if size is None else size
    arr = np.ascontiguousarray(value, dtype=float)
    if arr.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},) for {model.name!r}, got {arr.shape}")
    return arr


def _kernel_q(model: Any, q: object) -> np.ndarray:
    """q in the kernels' layout (a floating base's 7 coordinates after the joints), its
    quaternions checked (a floating base's, each ball joint's)."""
    q = _vector(model, q, "q", model.nq)
    kq = from_pinocchio(q, None)[0] if model.floating_base else q
    assert kq is not None
    if model.floating_base:
        norm = float(np.linalg.norm(kq[-4:]))
        if not abs(norm - 1.0) < 1e-6:
            raise ValueError(f"q[3:7] must be a unit quaternion (x, y, z, w), got norm {norm:g}")
    shift = 7 if model.floating_base else 0
    for name, a in model.balls:
        norm = float(np.linalg.norm(kq[a:a + 4]))
        if not abs(norm - 1.0) < 1e-6:
            raise ValueError(f"q[{a + shift}:{a + shift + 4}] (ball joint {name!r}) must be a "
                             f"unit quaternion (x, y, z, w), got norm {norm:g}")
    return kq


def _kernel_v(model: Any, v: object, name: str) -> np.ndarray:
    """A velocity-sized vector in the kernels' layout (the base's twist [omega; v] last)."""
    v = _vector(model, v, name)
    return from_pinocchio(None, v)[1] if model.floating_base else v


def _user_v(model: Any, v: np.ndarray) -> np.ndarray:
    return to_pinocchio(None, v)[1] if model.floating_base else v


_FLOAT = np.dtype(np.float64)


@njit
def _load_arguments(w: Any, q: np.ndarray, qd: np.ndarray, x: np.ndarray) -> None:
    """q, qd and x (tau or qdd; any strides) into the work record's contiguous vectors
    q_arg, v_arg and x_arg."""
    for k in range(q.shape[0]):
        w.q_arg[k] = q[k]
    for k in range(qd.shape[0]):
        w.v_arg[k] = qd[k]
        w.x_arg[k] = x[k]


@njit
def _aba(dyn: Any, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, qdd: np.ndarray) -> None:
    """ABA on contiguous copies of the arguments (any strides; the step's kernels stay one
    specialisation). The base's part of tau (a wrench in base axes) acts as an external force
    on it."""
    tree, w = dyn.tree, dyn.work
    n = tree.parent.shape[0]
    _load_arguments(w, q, qd, tau)
    q_arg, v_arg, x_arg, out = w.q_arg, w.v_arg, w.x_arg, w.qdd
    for k in range(tau.shape[0] - n):
        w.f_ext[n, k] = tau[n + k]
    articulated_accelerations(tree, w, 0, q_arg, v_arg, x_arg, out)
    for k in range(tau.shape[0] - n):
        w.f_ext[n, k] = 0.0
    for k in range(qdd.shape[0]):
        qdd[k] = out[k]


@njit
def _rnea(dyn: Any, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray) -> None:
    """RNEA on contiguous copies of the arguments, as `_aba` (the wrench sensors of the step
    call inverse_dynamics too)."""
    w = dyn.work
    _load_arguments(w, q, qd, qdd)
    q_arg, v_arg, x_arg, out = w.q_arg, w.v_arg, w.x_arg, w.qdd
    inverse_dynamics(dyn.tree, w, 0, q_arg, v_arg, x_arg, out)
    for k in range(tau.shape[0]):
        tau[k] = out[k]


@njit
def _crba(dyn: Any, q: np.ndarray, H: np.ndarray) -> None:
    mass_matrix(dyn.tree, dyn.work, 0, q, H)


class TreeDynamics:
    """ABA, RNEA and CRBA of one model under one gravity, with little cost per call. `out`
    (optional) is an array the result is written into and returned (float64, of the result's
    shape, writeable); else a new array is returned. Layouts as `aba` (a floating base in
    Pinocchio's free-flyer layout, converted on each call).

        dyn = TreeDynamics(model)
        qdd = np.empty(model.nv)
        dyn.aba(q, qd, tau, out=qdd)

    Arrays of float64 of the right shape go to compiled code as they are (any strides);
    anything else (lists, other dtypes) is converted first, and a wrong shape is ValueError.
    The module functions `aba`, `rnea`, `crba` use the one of each model and gravity
    (`tree_dynamics`)."""

    __slots__ = (
        "__weakref__",
        "_aba",
        "_crba",
        "_floating",
        "_h",
        "_q",
        "_rnea",
        "_simple",
        "_v",
        "record",
        "sizes",
    )

    def __init__(self, model: Model, gravity: Sequence[float] = DEFAULT_GRAVITY) -> None:
        tree = compile_forest([(model, None)], np.array(gravity, dtype=float))
        work = allocate_tree_work(tree)
        self.record = new_dynamics(new_tree(tree), new_tree_work(work))
        self.sizes = _Sizes(model.name, model.n_joints, model.nq, model.nv, model.floating_base,
                            tuple((name, int(model.qadr[i]))
                                  for name, i in model.ball_joints.items()))
        self._floating = model.floating_base
        self._simple = not (model.floating_base or model.ball_joints)
        """q as it is: fixed base, no quaternion to check."""
        self._q, self._v, self._h = (model.nq,), (model.nv,), (model.nv, model.nv)
        vec = ANY_VECTOR
        self._aba = entry_point(_aba, self.record, vec, vec, vec, vec)
        self._rnea = entry_point(_rnea, self.record, vec, vec, vec, vec)
        self._crba = entry_point(_crba, self.record, vec, ANY_MATRIX)

    def aba(self, q: Any, qd: Any, tau: Any, out: Any = None) -> np.ndarray:
        """Forward dynamics (`mb_sim.dynamics.aba`)."""
        return self._vectors(self._aba, q, qd, tau, out, "qd", "tau")

    def rnea(self, q: Any, qd: Any, qdd: Any, out: Any = None) -> np.ndarray:
        """Inverse dynamics (`mb_sim.dynamics.rnea`)."""
        return self._vectors(self._rnea, q, qd, qdd, out, "qd", "qdd")

    def _vectors(self, kernel: Any, q: Any, a: Any, b: Any, out: Any, a_name: str,
                 b_name: str) -> np.ndarray:
        """kernel(record, q, a, b, out) for vectors of nv: float64 arrays of a fixed base as
        they are, anything else through `_converted`."""
        v = self._v
        try:
            if self._simple and (
                    q.dtype is _FLOAT and a.dtype is _FLOAT and b.dtype is _FLOAT
                    and q.shape == self._q and a.shape == v and b.shape == v):
                if out is None:
                    out = np.empty(v)
                elif not (out.dtype is _FLOAT and out.shape == v and out.flags.writeable):
                    raise _bad_out(out, v)
                kernel(self.record, q, a, b, out)
                return out  # type: ignore[no-any-return]
        except (AttributeError, TypeError):  # not arrays: converted below
            pass
        return self._converted(kernel, q, a, b, a_name, b_name, out)

    def crba(self, q: Any, out: Any = None) -> np.ndarray:
        """Mass matrix (`mb_sim.dynamics.crba`)."""
        h = self._h
        if out is None:
            out = np.empty(h)
        elif not (_is_array(out) and out.dtype is _FLOAT and out.shape == h
                  and out.flags.writeable):
            raise _bad_out(out, h)
        try:
            if self._simple and q.dtype is _FLOAT and q.shape == self._q:
                self._crba(self.record, q, out)
                return out
        except (AttributeError, TypeError):
            pass
        H = np.empty(h)
        self._crba(self.record, _kernel_q(self.sizes, q), H)
        if not self._floating:
            out[:, :] = H
            return out
        order = _user_v(self.sizes, np.arange(self.sizes.nv))
        out[:, :] = H[np.ix_(order, order)]
        return out

    def _converted(self, kernel: Any, q: object, a: object, b: object, a_name: str,
                   b_name: str, out: Any) -> np.ndarray:
        """The call with checked, converted arguments (a floating base's layout)."""
        m, v = self.sizes, self._v
        if out is not None and not (_is_array(out) and out.dtype is _FLOAT and out.shape == v
                                    and out.flags.writeable):
            raise _bad_out(out, v)
        result = np.empty(v)
        kernel(self.record, _kernel_q(m, q), _kernel_v(m, a, a_name), _kernel_v(m, b, b_name),
               result)
        if out is None:
            return _user_v(m, result)
        out[:] = _user_v(m, result)
        return out  # type: ignore[no-any-return]


def _is_array(a: object) -> bool:
    return isinstance(a, np.ndarray)


def _bad_out(out: object, shape: tuple[int, ...]) -> ValueError:
    what = (type(out).__name__ if not isinstance(out, np.ndarray) else
            f"a {out.dtype} array of shape {out.shape}"
            f"{'' if out.flags.writeable else ', read-only'}")
    return ValueError(f"out must be a writeable float64 array of shape {shape}, got {what}")


_per_model: weakref.WeakKeyDictionary[Model, dict[Any, TreeDynamics]] = (
    weakref.WeakKeyDictionary())
_default: dict[int, TreeDynamics] = {}
"""The default gravity's TreeDynamics by id(model), while the model lives (a dict lookup is
cheaper than the weak dictionary's)."""


def tree_dynamics(model: Model, gravity: Sequence[float] = DEFAULT_GRAVITY) -> TreeDynamics:
    """The `TreeDynamics` of a model under a gravity, made once."""
    if gravity is DEFAULT_GRAVITY:
        dyn = _default.get(id(model))
        if dyn is not None:
            return dyn
    per_gravity = _per_model.get(model)
    if per_gravity is None:
        per_gravity = _per_model[model] = {}
    key = gravity if isinstance(gravity, tuple) else tuple(float(g) for g in gravity)
    dyn = per_gravity.get(key)
    if dyn is None:
        dyn = per_gravity[key] = TreeDynamics(model, key)
        if key == DEFAULT_GRAVITY:
            _default[id(model)] = dyn
            weakref.finalize(model, _default.pop, id(model), None)
    return dyn


def aba(model: Model, q: object, qd: object, tau: object,
        gravity: Sequence[float] = DEFAULT_GRAVITY, out: np.ndarray | None = None
        ) -> np.ndarray:
    """Forward dynamics qdd = H^-1 (tau - damping qd - C(q, qd) - g(q)) by ABA, O(n).

    Floating base: Pinocchio's free-flyer layout (q: nq = nv + 1; qd, tau, the result: nv,
    the base first as [linear; angular] in base axes; tau's base part is a wrench on it).
    `out`: a float64 array of shape (nv,) to write the result into (`TreeDynamics`)."""
    dyn = _default.get(id(model)) if gravity is DEFAULT_GRAVITY else None
    return (dyn or tree_dynamics(model, gravity)).aba(q, qd, tau, out)


def rnea(model: Model, q: object, qd: object, qdd: object,
         gravity: Sequence[float] = DEFAULT_GRAVITY, out: np.ndarray | None = None
         ) -> np.ndarray:
    """Inverse dynamics tau = H qdd + C(q, qd) + g(q) + damping qd by RNEA, O(n) (layout and
    `out` as `aba`; a floating base's part of tau is the wrench it needs)."""
    dyn = _default.get(id(model)) if gravity is DEFAULT_GRAVITY else None
    return (dyn or tree_dynamics(model, gravity)).rnea(q, qd, qdd, out)


def crba(model: Model, q: object, out: np.ndarray | None = None) -> np.ndarray:
    """Mass matrix H(q) (nv x nv) by the composite-rigid-body algorithm (layout as `aba`;
    `out`: a float64 (nv, nv) array to write it into)."""
    return (_default.get(id(model)) or tree_dynamics(model)).crba(q, out)


@njit
def _hybrid(dyn: Any, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, qdd_prescribed: np.ndarray,
            prescribed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = qd.shape[0]
    qdd, tau_out = np.empty(n), np.empty(n)
    hybrid_dynamics(dyn.tree, dyn.work, q, qd, tau, qdd_prescribed, prescribed, qdd, tau_out)
    return qdd, tau_out


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
    dyn = tree_dynamics(model, gravity)
    return _hybrid(dyn.record, _kernel_q(dyn.sizes, q),
                   _vector(model, qd, "qd"), _vector(model, tau, "tau"),
                   _vector(model, qdd_prescribed, "qdd_prescribed"), mask)
