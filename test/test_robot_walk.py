"""The robots of example-robot-data simulate as they are (test/robot_walk.py has the walk).

- Held: one URDF of every robot family (the smallest file of the family that loads, to keep
  the walk within a minute), and a few variants that once failed (panda's capsule model,
  solo12, g1 with hands), fixed 1 m above the ground with default options, every joint held
  at the middle of its limits for 1 s by a computed-torque PD. No joint may end more than
  0.05 rad (or m) further from its hold than in the same run without collision shapes, and no
  step may raise; with the default filter (self-collision on), with self_collision false, and
  with the robot's SRDF where example-robot-data ships one. pr2 and tiago_pro, whose steps
  once raised a bare ZeroDivisionError, are among them.
- Dropped: the 9 legged robots on a floating base, 10 cm above the ground at their standing
  pose under a joint PD: they land, never rise above the release height, stand, and their
  base moves less than 5 mm in the last second of 3 s.

`benchmarks/robot_walk.py` runs every URDF (all variants) and prints the table.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
import robot_walk as walk
from robot_data import robots_dir

import mb_sim

VARIANTS = ("panda_description/urdf/panda_collision.urdf", "solo_description/robots/solo12.urdf",
            "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf")


def _families() -> dict[str, list[str]]:
    """Every family's URDFs, the smallest file first."""
    try:
        urdfs = walk.all_urdfs()
    except BaseException:  # noqa: BLE001 (pytest.fail outside a test: report it in the test)
        return {"<example-robot-data missing>": []}
    families: dict[str, list[str]] = defaultdict(list)
    for rel in urdfs:
        families[walk.family(rel)].append(rel)
    return {f: sorted(rels, key=lambda r: (robots_dir() / r).stat().st_size)
            for f, rels in sorted(families.items())}


FAMILIES = _families()


def _held_model(family_or_urdf: str) -> tuple[str, mb_sim.Model]:
    """The URDF, or the family's smallest URDF that loads (romeo's smaller ones have
    massless movable leaves)."""
    refused = []
    for rel in FAMILIES.get(family_or_urdf, [family_or_urdf]):
        try:
            with walk.quiet():
                return rel, walk.load_fixed(rel)
        except mb_sim.ModelError as exc:
            refused.append(f"{rel}: {exc}")
    pytest.fail(f"nothing of {family_or_urdf} loads: {refused}")


def test_every_family_is_walked() -> None:
    assert len(FAMILIES) >= 35, list(FAMILIES)
    assert {"pr2_description", "tiago_pro_description"} <= set(FAMILIES)
    assert all(walk.family(v) in FAMILIES for v in VARIANTS)


@pytest.mark.parametrize("held", [*FAMILIES, *VARIANTS])
def test_robot_holds_still(held: str) -> None:
    rel, model = _held_model(held)
    with walk.quiet():
        reference = walk.hold(walk.without_shapes(model))
        assert reference.error is None, f"{rel} without collision shapes: {reference.error}"
        srdf = walk.srdf_for(rel)
        modes = {"default (self-collision on)": {}, "self_collision: false":
                 {"self_collision": False}}
        if srdf is not None:
            modes[f"srdf: {srdf.name}"] = {"srdf": str(srdf)}
        for mode, robot in modes.items():
            result = walk.hold(model, robot)
            ok, excess = walk.held(result, reference)
            worst = model.joint_names[int((result.deviation - reference.deviation).argmax())] \
                if model.n_joints and result.error is None else "-"
            assert ok, (f"{rel}, {mode}: {result.error or ''} joint {worst!r} ends {excess:.3g} "
                        f"further from its hold than without collision shapes")


@pytest.mark.parametrize("name", walk.LEGGED)
def test_legged_robot_lands_and_rests(name: str) -> None:
    with walk.quiet():
        r = walk.drop(name)
    assert walk.unrested(r) is None, f"{name}: {walk.unrested(r)}"


def test_walk_helpers_find_srdfs() -> None:
    assert walk.srdf_for("ur_description/urdf/ur5_robot.urdf") == (
        robots_dir() / "ur_description/srdf/ur5.srdf")
    assert walk.srdf_for("talos_data/robots/talos_reduced.urdf") == (
        robots_dir() / "talos_data/srdf/talos.srdf")
    assert walk.srdf_for("so_arm_description/urdf/so100.urdf") is None
    assert Path(walk.LEGGED_URDFS["solo12"]).stem == "solo12"
