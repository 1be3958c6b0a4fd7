"""urdf/arm.urdf, the default robot: structure, mass properties, limits and shapes.

The arm's header comment states how the inertias follow from the shapes: every moving link is
a uniform solid capsule written as a cylinder plus two end spheres, base_link and tool0 are
solid cylinders and hand a solid box. These tests recompute the inertials from the collision
shapes and the masses, so a change to one without the other fails.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.model.geometry import Geometry

ARM = Path(__file__).resolve().parents[1] / "urdf" / "arm.urdf"
JOINTS = tuple(f"joint{i}" for i in range(1, 8))
LINKS = ("base_link", *(f"link{i}" for i in range(1, 8)), "tool0", "hand")


@pytest.fixture(scope="module")
def model() -> mb_sim.Model:
    return mb_sim.load_urdf(str(ARM))


@pytest.fixture(scope="module")
def inertials() -> dict[str, tuple[float, np.ndarray, np.ndarray]]:
    """link -> (mass, com xyz, inertia about the com), read from the XML directly."""
    out = {}
    for link in ET.parse(ARM).getroot().iter("link"):
        inertial = link.find("inertial")
        assert inertial is not None, link.get("name")
        origin = inertial.find("origin")
        assert origin is not None and origin.get("rpy", "0 0 0").split() == ["0"] * 3
        I = inertial.find("inertia").attrib  # type: ignore[union-attr]
        tensor = np.array(
            [
                [float(I["ixx"]), float(I["ixy"]), float(I["ixz"])],
                [float(I["ixy"]), float(I["iyy"]), float(I["iyz"])],
                [float(I["ixz"]), float(I["iyz"]), float(I["izz"])],
            ]
        )
        com = np.array([float(v) for v in origin.get("xyz", "0 0 0").split()])
        out[link.get("name")] = (float(inertial.find("mass").get("value")), com, tensor)  # type: ignore[union-attr, arg-type]
    return out


def test_structure(model: mb_sim.Model) -> None:
    assert model.joint_names == JOINTS
    assert model.nq == model.nv == 7
    assert set(model.link_names) == set(LINKS)
    assert model.base_link == "base_link"
    assert set(model.fixed_links) == {"tool0", "hand"}
    assert model.link_parent["tool0"] == "link7" and model.link_parent["hand"] == "tool0"
    assert model.link_joint["link3"] == "joint3"
    # fixed links are lumped into link7's body
    assert model.link_body["tool0"] == model.link_body["hand"] == model.link_body["link7"]


def test_mass_is_panda_like(inertials: dict) -> None:
    total = sum(m for m, _, _ in inertials.values())
    assert 16.0 <= total <= 20.0, total
    for name, (m, _, _) in inertials.items():
        assert m > 0, name


def test_lumped_body_mass(model: mb_sim.Model, inertials: dict) -> None:
    b = model.link_body["link7"]
    expected = sum(inertials[n][0] for n in ("link7", "tool0", "hand"))
    assert model.mass[b] == pytest.approx(expected, rel=1e-12)
    assert float(np.sum(model.mass)) == pytest.approx(
        sum(m for n, (m, _, _) in inertials.items() if n != "base_link"), rel=1e-12
    )


def test_inertias_physical(model: mb_sim.Model, inertials: dict) -> None:
    for name, (_, _, I) in inertials.items():
        a, b, c = np.linalg.eigvalsh(I)
        assert a > 0, name
        assert a + b >= c, name
    for b in range(model.nbodies):
        assert np.all(np.linalg.eigvalsh(model.inertia[b]) > 0), model.joint_names[b]


def _capsule(mass: float, r: float, length: float) -> np.ndarray:
    """Uniform solid capsule along z about its centre (see the arm's header comment)."""
    vc, vs = math.pi * r * r * length, 4.0 / 3.0 * math.pi * r**3
    mc, ms = mass * vc / (vc + vs), mass * vs / (vc + vs)
    izz = mc * r * r / 2 + ms * 2 * r * r / 5
    ixx = mc * (length**2 / 12 + r * r / 4) + ms * (
        2 * r * r / 5 + length**2 / 4 + 3 * length * r / 8
    )
    return np.diag([ixx, ixx, izz])


def _expected_inertia(mass: float, shapes: tuple[Geometry, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(centre, inertia) of the solid the collision shapes describe."""
    for g in shapes:
        assert g.rpy == (0.0, 0.0, 0.0)
    kinds = sorted(g.kind for g in shapes)
    if kinds == ["cylinder", "sphere", "sphere"]:
        (cyl,) = [g for g in shapes if g.kind == "cylinder"]
        spheres = [g for g in shapes if g.kind == "sphere"]
        r, length = cyl.size
        ends = sorted(s.xyz[2] for s in spheres)
        assert all(s.size[0] == pytest.approx(r) for s in spheres)
        assert ends[0] == pytest.approx(cyl.xyz[2] - length / 2, abs=1e-12)
        assert ends[1] == pytest.approx(cyl.xyz[2] + length / 2, abs=1e-12)
        return np.array(cyl.xyz), _capsule(mass, r, length)
    (g,) = shapes
    if g.kind == "cylinder":
        r, h = g.size
        ixx = mass * (3 * r * r + h * h) / 12
        return np.array(g.xyz), np.diag([ixx, ixx, mass * r * r / 2])
    assert g.kind == "box", g
    x, y, z = g.size
    return np.array(g.xyz), mass / 12 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y])


@pytest.mark.parametrize("link", LINKS)
def test_inertia_follows_from_shapes(model: mb_sim.Model, inertials: dict, link: str) -> None:
    mass, com, I = inertials[link]
    centre, expected = _expected_inertia(mass, model.collision_geometries[link])
    np.testing.assert_allclose(com, centre, atol=1e-12)
    np.testing.assert_allclose(I, expected, rtol=1e-6, atol=1e-12)


def test_visuals_match_collisions(model: mb_sim.Model) -> None:
    for link in LINKS:
        vis = [(g.kind, g.size, g.xyz) for g in model.visual_geometries[link]]
        col = [(g.kind, g.size, g.xyz) for g in model.collision_geometries[link]]
        assert vis == col, link
    root = ET.parse(ARM).getroot()
    defined = {m.get("name") for m in root.findall("material")}
    for visual in root.iter("visual"):
        material = visual.find("material")
        assert material is not None and material.get("name") in defined


def test_every_link_has_collision_geometry(model: mb_sim.Model) -> None:
    for link in LINKS:
        shapes = model.collision_geometries[link]
        assert shapes, link
        assert all(g.kind in ("box", "sphere", "cylinder") for g in shapes), link


def test_limits(model: mb_sim.Model) -> None:
    assert np.all(np.isfinite(model.lower)) and np.all(np.isfinite(model.upper))
    assert np.all(model.lower < 0) and np.all(model.upper > 0)
    np.testing.assert_array_equal(model.effort_limit, [87, 87, 87, 87, 12, 12, 12])
    assert np.all((model.velocity_limit > 1.0) & (model.velocity_limit < 4.0))
    assert np.all((model.damping >= 0.1) & (model.damping <= 1.0))
    assert np.all((model.friction >= 0.1) & (model.friction <= 0.5))


def _frames_at_zero(model: mb_sim.Model) -> dict[str, np.ndarray]:
    """Position of every link frame at q = 0, from the model's tree arrays."""
    body_T = []
    for i in range(model.nbodies):
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = model.tree_rot[i], model.tree_pos[i]
        p = model.parent[i]
        body_T.append(T if p < 0 else body_T[p] @ T)
    out = {}
    for link, b in model.link_body.items():
        base = np.eye(4) if b < 0 else body_T[b]
        out[link] = (base @ model.link_offset[link])[:3, 3]
    return out


def test_panda_like_dimensions(model: mb_sim.Model) -> None:
    frames = _frames_at_zero(model)
    shoulder = frames["link2"]  # joint2's frame
    assert shoulder[2] == pytest.approx(0.333, abs=1e-9)
    reach = np.linalg.norm(frames["tool0"] - shoulder)
    assert reach == pytest.approx(0.85, abs=0.02)


def test_no_self_contact_at_zero(model: mb_sim.Model) -> None:
    """At q = 0 every shape lies on the z axis: links that are not neighbours do not overlap."""
    frames = _frames_at_zero(model)
    spans: dict[str, tuple[float, float]] = {}
    for link in LINKS:
        lo, hi = np.inf, -np.inf
        for g in model.collision_geometries[link]:
            if g.kind == "sphere":
                half = g.size[0]
            elif g.kind == "cylinder":
                half = g.size[1] / 2
            else:
                half = g.size[2] / 2
            z = frames[link][2] + g.xyz[2]
            lo, hi = min(lo, z - half), max(hi, z + half)
        spans[link] = (lo, hi)
    bodies = {link: model.link_body[link] for link in LINKS}
    for a in LINKS:
        for b in LINKS:
            ba, bb = bodies[a], bodies[b]
            if a >= b or ba == bb:
                continue
            pa = model.parent[ba] if ba >= 0 else -2
            pb = model.parent[bb] if bb >= 0 else -2
            if pa == bb or pb == ba:
                continue  # neighbours (joined by one joint)
            gap = max(spans[a][0], spans[b][0]) - min(spans[a][1], spans[b][1])
            assert gap > 0.005, (a, b, gap)


def test_holds_itself_within_effort_limits(model: mb_sim.Model) -> None:
    """Gravity torques anywhere in the joint range stay well inside the effort limits."""
    rng = np.random.default_rng(51)
    zero = np.zeros(7)
    worst = np.zeros(7)
    for _ in range(200):
        q = rng.uniform(model.lower, model.upper)
        worst = np.maximum(worst, np.abs(mb_sim.rnea(model, q, zero, zero)))
    assert np.all(worst < 0.75 * model.effort_limit), worst
    assert worst[1] > 10.0  # the shoulder does carry the arm
