"""Mass, centre of mass and inertia of the collision shapes, from a density or a total mass.

Every shape is a solid of uniform density rho. Closed forms (shape frame, about the centre):

- box, full extents (a, b, c): m = rho a b c, I = m/12 diag(b^2 + c^2, a^2 + c^2, a^2 + b^2)
  (Holck 2005, Appendix E gives the same in half extents: (1/3) m diag(h^2 + d^2, ...)).
- sphere, radius r: m = rho (4/3) pi r^3, I = (2/5) m r^2 (Holck 2005, Appendix E).
- cylinder, radius r, length L along z: m = rho pi r^2 L, I_zz = m r^2 / 2,
  I_xx = I_yy = m (3 r^2 + L^2) / 12.
- capsule, radius r, cylinder length L along z (total height L + 2 r), two hemispherical caps of
  mass m_h = rho (2/3) pi r^3 each with their centroid 3r/8 beyond the cylinder's end faces:
  I_zz = m_c r^2 / 2 + 2 (2/5) m_h r^2,
  I_xx = m_c (3 r^2 + L^2) / 12 + 2 m_h (2/5 r^2 + L^2 / 4 + 3 L r / 8),
  the cap term being the parallel-axis shift of (2/5 - 9/64) m_h r^2 (cap about its own
  centroid) by the distance L/2 + 3r/8 (Steiner's theorem, Valášek 2011 section on inertia).
- closed triangle mesh: the divergence theorem splits the solid into signed tetrahedra
  (origin, a, b, c), one per outward-facing triangle. Each has volume V = det[a b c] / 6,
  centroid (a + b + c) / 4 and second moment
  integral of x x^T dV = det[a b c] / 120 (a a^T + b b^T + c c^T + s s^T),  s = a + b + c.
  Summing gives the volume, first and second moments of the solid; the inertia about the
  origin is I = tr(C) 1 - C and it is moved to the centroid by I_c = I_o - m (|c|^2 1 - c c^T).

`mass_properties(geometry, density=..., mass=...)` returns these in the frame that owns the
geometry (its `xyz`, `rpy` applied). A mesh geometry is its convex hull, the shape that collides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mb_sim.model.geometry import Geometry
from mb_sim.rotations import rpy_matrix


@dataclass(frozen=True, eq=False)
class MassProperties:
    """Mass (kg), centre of mass (m, 3) and inertia about the centre of mass (kg m^2, 3x3)."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    volume: float

    def __post_init__(self) -> None:
        for name in ("com", "inertia"):
            arr = np.array(getattr(self, name), dtype=float)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)


def _props(density: float, volume: float, com: np.ndarray, unit_inertia: np.ndarray
           ) -> MassProperties:
    """Scale the inertia of a unit-density solid by `density`."""
    return MassProperties(density * volume, com, density * unit_inertia, volume)


def box_properties(size: tuple[float, ...] | np.ndarray, density: float) -> MassProperties:
    """Solid box of full extents (a, b, c): I = m/12 diag(b^2+c^2, a^2+c^2, a^2+b^2)."""
    a, b, c = (float(s) for s in size)
    vol = a * b * c
    inertia = vol / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    return _props(density, vol, np.zeros(3), inertia)


def sphere_properties(radius: float, density: float) -> MassProperties:
    """Solid sphere: m = rho 4/3 pi r^3, I = 2/5 m r^2."""
    r = float(radius)
    vol = 4.0 / 3.0 * math.pi * r**3
    return _props(density, vol, np.zeros(3), 0.4 * vol * r * r * np.eye(3))


def cylinder_properties(radius: float, length: float, density: float) -> MassProperties:
    """Solid cylinder along z: I_zz = m r^2/2, I_xx = I_yy = m (3 r^2 + L^2)/12."""
    r, h = float(radius), float(length)
    vol = math.pi * r * r * h
    ixx = vol * (3.0 * r * r + h * h) / 12.0
    return _props(density, vol, np.zeros(3), np.diag([ixx, ixx, 0.5 * vol * r * r]))


def capsule_properties(radius: float, length: float, density: float) -> MassProperties:
    """Capsule along z: cylinder of length L plus two hemispheres of radius r (module docstring)."""
    r, h = float(radius), float(length)
    v_cyl = math.pi * r * r * h
    v_cap = 2.0 / 3.0 * math.pi * r**3
    izz = 0.5 * v_cyl * r * r + 2.0 * 0.4 * v_cap * r * r
    ixx = v_cyl * (3.0 * r * r + h * h) / 12.0 + 2.0 * v_cap * (
        0.4 * r * r + 0.25 * h * h + 0.375 * h * r
    )
    vol = v_cyl + 2.0 * v_cap
    return _props(density, vol, np.zeros(3), np.diag([ixx, ixx, izz]))


def mesh_properties(vertices: np.ndarray, triangles: np.ndarray, density: float
                    ) -> MassProperties:
    """Closed, consistently wound triangle mesh by signed tetrahedra (module docstring).

    An inward-wound mesh (negative total volume) is turned outward. Raises ValueError if the
    mesh encloses no volume.
    """
    v = np.asarray(vertices, dtype=float)
    t = np.asarray(triangles, dtype=np.int64)
    if v.ndim != 2 or v.shape[1] != 3 or t.ndim != 2 or t.shape[1] != 3 or len(t) == 0:
        raise ValueError("a mesh needs vertices (n, 3) and at least one triangle (m, 3)")
    # Integrate about a point near the solid to keep the sums well conditioned.
    ref = v.mean(axis=0)
    a = v[t[:, 0]] - ref
    b = v[t[:, 1]] - ref
    c = v[t[:, 2]] - ref
    det = np.einsum("ij,ij->i", a, np.cross(b, c))
    vol = det.sum() / 6.0
    scale = float(np.abs(v - ref).max()) if len(v) else 0.0
    if not np.isfinite(vol) or abs(vol) <= 1e-12 * max(scale, 1e-300) ** 3:
        raise ValueError(f"the mesh encloses no volume (signed volume {vol:.3g} m^3)")
    s = a + b + c
    first = (det[:, None] * s).sum(axis=0) / 24.0
    second = (
        np.einsum("i,ij,ik->jk", det, a, a)
        + np.einsum("i,ij,ik->jk", det, b, b)
        + np.einsum("i,ij,ik->jk", det, c, c)
        + np.einsum("i,ij,ik->jk", det, s, s)
    ) / 120.0
    if vol < 0.0:
        vol, first, second = -vol, -first, -second
    centroid = first / vol
    inertia_ref = np.trace(second) * np.eye(3) - second
    inertia = inertia_ref - vol * (centroid @ centroid * np.eye(3) - np.outer(centroid, centroid))
    inertia = 0.5 * (inertia + inertia.T)
    return _props(density, vol, centroid + ref, inertia)



def shape_properties(geometry: Geometry, density: float) -> MassProperties:
    """Mass properties of a geometry in its own shape frame (its `xyz`, `rpy` not applied)."""
    kind, size = geometry.kind, geometry.size
    if kind == "box":
        return box_properties(size, density)
    if kind == "sphere":
        return sphere_properties(size[0], density)
    if kind == "cylinder":
        return cylinder_properties(size[0], size[1], density)
    if kind == "capsule":
        return capsule_properties(size[0], size[1], density)
    if kind == "mesh":
        from mb_sim.model.mesh import convex_hull_mesh

        if geometry.mesh is None:
            raise ValueError(geometry.mesh_error or "mesh geometry without a mesh file")
        verts, tris = convex_hull_mesh(geometry.mesh, geometry.scale)
        return mesh_properties(verts, tris, density)
    raise ValueError(f"unknown shape kind {kind!r}")


def mass_properties(geometry: Geometry, density: float | None = None,
                    mass: float | None = None) -> MassProperties:
    """Mass properties of a uniform solid `geometry`, in the frame that owns it.

    Give exactly one of `density` (kg/m^3) or `mass` (kg); with `mass` the density is
    mass / volume. The centre of mass is xyz + R(rpy) c and the inertia R I R^T, with c and I
    those of the shape in its own frame.
    """
    if (density is None) == (mass is None):
        raise ValueError("give exactly one of density or mass")
    value = density if density is not None else mass
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"density and mass must be finite and > 0, got {value!r}")
    unit = shape_properties(geometry, 1.0)
    rho = float(density) if density is not None else float(mass) / unit.volume
    rot = rpy_matrix(geometry.rpy)
    com = np.asarray(geometry.xyz, dtype=float) + rot @ unit.com
    inertia = rho * (rot @ unit.inertia @ rot.T)
    return MassProperties(rho * unit.volume, com, 0.5 * (inertia + inertia.T), unit.volume)


def check_inertia(inertia: np.ndarray, rel_tol: float = 1e-9) -> str | None:
    """Why a 3x3 matrix is not the inertia of a rigid body about its centre, or None.

    It must be symmetric with positive principal moments that satisfy the triangle inequality
    I_1 <= I_2 + I_3 (each moment is a sum of two of the three second moments of mass).
    """
    m = np.asarray(inertia, dtype=float)
    if m.shape != (3, 3) or not np.all(np.isfinite(m)):
        return "must be a finite 3x3 matrix"
    scale = float(np.abs(m).max())
    if scale == 0.0:
        return "must be positive definite (it is zero)"
    if np.abs(m - m.T).max() > rel_tol * scale:
        return "must be symmetric"
    eig = np.linalg.eigvalsh(0.5 * (m + m.T))
    if eig[0] <= rel_tol * scale:
        return f"must be positive definite (principal moments {np.round(eig, 12).tolist()})"
    if eig[2] > eig[0] + eig[1] + 1e-6 * scale:
        return (f"principal moments {np.round(eig, 12).tolist()} break the triangle "
                "inequality I1 <= I2 + I3")
    return None


def nearest_valid_inertia(inertia: np.ndarray) -> np.ndarray:
    """The rigid-body inertia nearest to a symmetric 3x3 matrix (Frobenius norm).

    The principal moments of a rigid body are I1 = Jyy + Jzz, I2 = Jxx + Jzz, I3 = Jxx + Jyy,
    with J >= 0 the second moments of mass in the principal axes: the valid moments form the
    cone {A j : j >= 0}, A = [[0, 1, 1], [1, 0, 1], [1, 1, 0]], which holds exactly the
    non-negative moments that satisfy the triangle inequality. The set of valid inertias
    depends on the principal moments only, so the nearest one keeps the principal axes and
    moves the moments to their projection on the cone: a non-negative least-squares problem.
    """
    from scipy.optimize import nnls

    m = 0.5 * (np.asarray(inertia, dtype=float) + np.asarray(inertia, dtype=float).T)
    eig, axes = np.linalg.eigh(m)
    a = np.ones((3, 3)) - np.eye(3)
    j, _ = nnls(a, eig)
    moments = a @ j
    out = axes @ np.diag(moments) @ axes.T
    return 0.5 * (out + out.T)


def inertia_defect(inertia: np.ndarray) -> tuple[float, str | None]:
    """How far a symmetric 3x3 matrix is from a rigid-body inertia, relative to its size.

    Returns (distance to `nearest_valid_inertia` / largest |principal moment|, why invalid)
    for an invalid one, (0.0, None) for a valid one (within 1e-12 of its largest moment); a
    zero matrix (a point mass) is valid.
    """
    m = 0.5 * (np.asarray(inertia, dtype=float) + np.asarray(inertia, dtype=float).T)
    eig = np.linalg.eigvalsh(m)
    scale = float(np.max(np.abs(eig)))
    if scale == 0.0:
        return 0.0, None
    if eig[0] < 0.0 and eig[0] < -1e-12 * scale:
        why = f"is not positive semi-definite (principal moments {_moments(eig)})"
    elif eig[2] > eig[0] + eig[1] + 1e-12 * scale:
        why = f"violates the triangle inequality I3 <= I1 + I2 (principal moments {_moments(eig)})"
    else:
        return 0.0, None  # no least-squares solve (nor scipy.optimize's import) for most links
    return float(np.linalg.norm(nearest_valid_inertia(m) - m)) / scale, why


def _moments(eig: np.ndarray) -> str:
    return "[" + ", ".join(f"{v:.6g}" for v in eig) + "]"


def inertia_matrix(inertia: Any) -> np.ndarray:
    """The 3x3 matrix of a parsed URDF `<inertia>` (zeros for none; a missing entry is 0)."""
    if inertia is None:
        return np.zeros((3, 3))
    v = {k: float(getattr(inertia, k) or 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    return np.array(
        [
            [v["ixx"], v["ixy"], v["ixz"]],
            [v["ixy"], v["iyy"], v["iyz"]],
            [v["ixz"], v["iyz"], v["izz"]],
        ]
    )


def format_inertia_matrix(m: np.ndarray) -> str:
    """An inertia matrix as URDF's six entries, for messages."""
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    values = (m[0, 0], m[0, 1], m[0, 2], m[1, 1], m[1, 2], m[2, 2])
    return "{" + ", ".join(f"{k}={v:.6g}" for k, v in zip(keys, values)) + "}"


def format_inertia(inertia: Any) -> str:
    """A parsed URDF `<inertia>`'s six entries as written, for messages."""
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    return "{" + ", ".join(f"{k}={getattr(inertia, k)}" for k in keys) + "}"
