"""Mass properties of shapes against closed forms and independent numerical integration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from mb_sim.model.geometry import Geometry
from mb_sim.model.mass import (
    box_properties,
    capsule_properties,
    check_inertia,
    cylinder_properties,
    mass_properties,
    mesh_properties,
    sphere_properties,
)
from mb_sim.model.mesh import convex_hull
from mb_sim.rotations import rpy_matrix


def _solid_of_revolution(radius_at, z0: float, z1: float) -> tuple[float, float, float]:
    """Volume, I_xx and I_zz (unit density, about the origin) of a solid of revolution about z.

    A disc of radius a at height z contributes dV = pi a^2 dz, dI_zz = dV a^2 / 2 and
    dI_xx = dV (a^2 / 4 + z^2).
    """
    vol = quad(lambda z: math.pi * radius_at(z) ** 2, z0, z1, epsabs=1e-13, limit=200)[0]
    ixx = quad(lambda z: math.pi * radius_at(z) ** 2 * (radius_at(z) ** 2 / 4 + z * z), z0, z1,
               epsabs=1e-13, limit=200)[0]
    izz = quad(lambda z: math.pi * radius_at(z) ** 4 / 2, z0, z1, epsabs=1e-13, limit=200)[0]
    return vol, ixx, izz


def test_box_closed_form_with_given_mass() -> None:
    a, b, c, m = 0.3, 0.2, 0.5, 4.0
    p = mass_properties(Geometry("box", (a, b, c)), mass=m)
    assert p.mass == pytest.approx(m)
    assert p.volume == pytest.approx(a * b * c)
    expected = m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    np.testing.assert_allclose(p.inertia, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(p.com, 0.0)


def test_cube_matches_the_half_side_form_of_000() -> None:
    # Holck 2005 Appendix E: cube (2/3) M L^2 with L the half side.
    p = box_properties((0.2, 0.2, 0.2), density=250.0)
    m = 250.0 * 0.008
    np.testing.assert_allclose(p.inertia, 2 / 3 * m * 0.1**2 * np.eye(3), rtol=1e-12)


def test_sphere_closed_form_with_density() -> None:
    r, rho = 0.07, 1200.0
    p = mass_properties(Geometry("sphere", (r,)), density=rho)
    m = rho * 4 / 3 * math.pi * r**3
    assert p.mass == pytest.approx(m)
    np.testing.assert_allclose(p.inertia, 0.4 * m * r * r * np.eye(3), rtol=1e-12)


def test_cylinder_closed_form_and_numerical_integration() -> None:
    r, h, m = 0.05, 0.3, 2.0
    p = mass_properties(Geometry("cylinder", (r, h)), mass=m)
    ixx = m * (3 * r * r + h * h) / 12
    np.testing.assert_allclose(np.diag(p.inertia), [ixx, ixx, 0.5 * m * r * r], rtol=1e-12)
    vol, nixx, nizz = _solid_of_revolution(lambda z: r, -h / 2, h / 2)
    unit = cylinder_properties(r, h, 1.0)
    assert unit.volume == pytest.approx(vol, rel=1e-10)
    np.testing.assert_allclose(np.diag(unit.inertia), [nixx, nixx, nizz], rtol=1e-9)


@pytest.mark.parametrize(("r", "h"), [(0.05, 0.3), (0.2, 0.05), (0.1, 1.0)])
def test_capsule_matches_numerical_integration(r: float, h: float) -> None:
    def radius_at(z: float) -> float:
        if abs(z) <= h / 2:
            return r
        d = abs(z) - h / 2
        return math.sqrt(max(r * r - d * d, 0.0))

    half = h / 2 + r
    parts = [(-half, -h / 2), (-h / 2, h / 2), (h / 2, half)]
    vol = ixx = izz = 0.0
    for z0, z1 in parts:
        v, ix, iz = _solid_of_revolution(radius_at, z0, z1)
        vol, ixx, izz = vol + v, ixx + ix, izz + iz
    p = capsule_properties(r, h, 1.0)
    assert p.volume == pytest.approx(vol, rel=1e-9)
    np.testing.assert_allclose(np.diag(p.inertia), [ixx, ixx, izz], rtol=1e-8)
    np.testing.assert_allclose(p.inertia - np.diag(np.diag(p.inertia)), 0.0, atol=1e-15)


def test_capsule_matches_a_fine_hull_mesh() -> None:
    r, h = 0.1, 0.4
    n_ring, n_lat = 96, 48
    pts = []
    for k in range(n_lat + 1):
        phi = math.pi / 2 * k / n_lat
        for j in range(n_ring):
            t = 2 * math.pi * j / n_ring
            for sign in (1, -1):
                pts.append((r * math.cos(phi) * math.cos(t), r * math.cos(phi) * math.sin(t),
                            sign * (h / 2 + r * math.sin(phi))))
    v, tri = convex_hull(np.array(pts))
    mesh = mesh_properties(v, tri, 1.0)
    exact = capsule_properties(r, h, 1.0)
    assert mesh.volume == pytest.approx(exact.volume, rel=2e-3)
    np.testing.assert_allclose(np.diag(mesh.inertia), np.diag(exact.inertia), rtol=5e-3)


def test_mesh_cube_equals_box_in_any_pose() -> None:
    size = np.array([0.3, 0.2, 0.6])
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * size / 2
    rot = rpy_matrix((0.3, -0.7, 1.1))
    offset = np.array([1.0, -2.0, 0.5])
    v, tri = convex_hull(corners @ rot.T + offset)
    p = mesh_properties(v, tri, 700.0)
    box = box_properties(size, 700.0)
    assert p.mass == pytest.approx(box.mass, rel=1e-12)
    np.testing.assert_allclose(p.com, offset, atol=1e-12)
    np.testing.assert_allclose(p.inertia, rot @ box.inertia @ rot.T, rtol=1e-10, atol=1e-14)


def test_mesh_tetrahedron_against_its_integrals() -> None:
    # Unit right tetrahedron (0, e1, e2, e3): V = 1/6, centroid 1/4, and about the origin
    # integral x^2 dV = 1/60, integral x y dV = 1/120.
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
    tri = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    p = mesh_properties(v, tri, 1.0)
    assert p.volume == pytest.approx(1 / 6)
    np.testing.assert_allclose(p.com, 0.25)
    about_origin = np.full((3, 3), -1 / 120) + np.eye(3) * (2 / 60 + 1 / 120)
    c = p.com
    expected = about_origin - p.volume * (c @ c * np.eye(3) - np.outer(c, c))
    np.testing.assert_allclose(p.inertia, expected, atol=1e-15)
    flipped = mesh_properties(v, tri[:, ::-1], 1.0)
    assert flipped.volume == pytest.approx(p.volume)
    np.testing.assert_allclose(flipped.inertia, p.inertia, atol=1e-15)


def test_sphere_hull_converges_to_closed_form() -> None:
    n = 4000
    i = np.arange(n) + 0.5
    phi = np.arccos(1 - 2 * i / n)
    theta = math.pi * (1 + 5**0.5) * i
    pts = 0.5 * np.c_[np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)]
    v, tri = convex_hull(pts)
    p = mesh_properties(v, tri, 1.0)
    exact = sphere_properties(0.5, 1.0)
    assert p.volume == pytest.approx(exact.volume, rel=3e-3)
    np.testing.assert_allclose(p.inertia, exact.inertia, rtol=5e-3, atol=1e-6)


def test_mesh_without_volume_is_rejected() -> None:
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=float)
    with pytest.raises(ValueError, match="no volume"):
        mesh_properties(v, np.array([[0, 1, 2], [0, 2, 1]]), 1.0)


def test_geometry_pose_moves_com_and_rotates_inertia() -> None:
    g = Geometry("cylinder", (0.1, 0.5), xyz=(0.2, 0.0, -0.1), rpy=(0.0, math.pi / 2, 0.0))
    p = mass_properties(g, mass=3.0)
    np.testing.assert_allclose(p.com, [0.2, 0.0, -0.1])
    rot = rpy_matrix(g.rpy)
    local = mass_properties(Geometry("cylinder", (0.1, 0.5)), mass=3.0).inertia
    np.testing.assert_allclose(p.inertia, rot @ local @ rot.T, atol=1e-14)
    # the cylinder axis now lies along x: I_xx is the axial moment m r^2 / 2
    assert p.inertia[0, 0] == pytest.approx(0.5 * 3.0 * 0.01)


def test_mesh_geometry_uses_its_hull(tmp_path) -> None:
    from pathlib import Path

    cube = Path(__file__).parent / "assets" / "cube.stl"
    p = mass_properties(Geometry("mesh", mesh=str(cube), scale=(2.0, 1.0, 0.5)), density=10.0)
    assert p.volume == pytest.approx(1.0)
    assert p.mass == pytest.approx(10.0)
    np.testing.assert_allclose(p.com, [1.0, 0.5, 0.25], atol=1e-12)
    np.testing.assert_allclose(p.inertia, box_properties((2.0, 1.0, 0.5), 10.0).inertia,
                               atol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"density": 1.0, "mass": 1.0}, {"mass": -1.0},
                                    {"density": 0.0}, {"mass": float("nan")}])
def test_mass_properties_argument_errors(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        mass_properties(Geometry("sphere", (0.1,)), **kwargs)


def test_check_inertia() -> None:
    assert check_inertia(np.diag([1.0, 2.0, 2.5])) is None
    assert check_inertia(box_properties((0.1, 2.0, 0.3), 5.0).inertia) is None
    assert "triangle" in check_inertia(np.diag([1.0, 1.0, 3.0]))
    assert "positive definite" in check_inertia(np.diag([-1.0, 1.0, 1.0]))
    assert "symmetric" in check_inertia(np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]]))
    assert "finite" in check_inertia(np.full((3, 3), np.nan))
