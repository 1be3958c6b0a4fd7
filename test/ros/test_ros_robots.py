"""sim_node with robots as people have them: the parameters `package_dirs` and
`inertia_from_geometry` (true by default, false, or a density), and the world file's
`robot: {inertia_from_geometry}`.

The robot is the messy corpus' two-link arm without inertials whose meshes sit in a package
no ROS environment knows (test/data/messy, see test/data/make_messy_corpus.py), handed to the
node as `robot_description` text, as a launch file does after running xacro.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from ros_helpers import STARTUP_TIMEOUT, wait_until
from sensor_msgs.msg import JointState

pytestmark = pytest.mark.usefixtures("ros_context")

MESSY = Path(__file__).resolve().parent.parent / "data" / "messy"
WS = MESSY / "ws" / "src"
DESCRIPTION = (MESSY / "launch_description.urdf").read_text()


def described(**extra: Any) -> dict[str, Any]:
    params = {"robot_description": DESCRIPTION, "package_dirs": [str(WS)],
              "inertia_from_geometry": 1000.0, "initial_positions": {"shoulder": 0.5},
              "status_period": 0.0}
    params.update(extra)
    return {k: v for k, v in params.items() if v is not None}


def assert_swings(sim: Any, probe: Any) -> None:
    """The arm, released 0.5 rad off hanging, swings down: joint_states show the shoulder
    below 0.45 rad within a few seconds, every value finite."""
    js = probe.collect(JointState, "joint_states")

    def swung() -> bool:
        return bool(js) and js[-1][1].position[list(js[-1][1].name).index("shoulder")] < 0.45

    assert wait_until(lambda: swung() or sim.proc.poll() is not None, STARTUP_TIMEOUT + 5.0), \
        sim.output
    assert swung(), sim.output
    last = js[-1][1]
    assert all(math.isfinite(v) for v in [*last.position, *last.velocity])
    assert sim.stop() == 0


def test_robot_description_with_package_dirs_and_inertia_from_geometry(
        start_sim: Any, probe: Any) -> None:
    sim = start_sim(described())
    assert sim.wait_for_output("simulating", STARTUP_TIMEOUT), sim.output
    assert "mass 0.48 kg and inertia from its collision shapes" in sim.output
    assert_swings(sim, probe)


def test_world_file_repairs_massless_links(start_sim: Any, probe: Any) -> None:
    """No inertia_from_geometry parameter: the world file's key repairs the URDF file."""
    sim = start_sim(described(robot_description=None, package_dirs=None,
                              inertia_from_geometry=None, initial_positions=None,
                              urdf_file=str(MESSY / "no_inertia.urdf"),
                              world_file=str(MESSY / "no_inertia_world.yaml")))
    assert sim.wait_for_output("simulating", STARTUP_TIMEOUT), sim.output
    assert "density 1000" in sim.output
    assert_swings(sim, probe)


def test_massless_links_load_by_default(start_sim: Any, probe: Any) -> None:
    """No inertia_from_geometry anywhere: the default gives the links the mass of their
    collision shapes (one warning names them and the density) and the arm swings."""
    sim = start_sim(described(inertia_from_geometry=None))
    assert sim.wait_for_output("simulating", STARTUP_TIMEOUT), sim.output
    said = [line for line in sim.output.splitlines() if "collision shapes" in line]
    assert len(said) == 1 and "[WARN]" in said[0], sim.output
    assert "'link1' 0.48 kg" in said[0] and "1000 kg/m^3" in said[0], said[0]
    assert_swings(sim, probe)


@pytest.mark.parametrize(("params", "words"), [
    ({"package_dirs": None},
     ["cannot load the robot from robot_description", "link 'link1'",
      "package://messy_parts/meshes/link.stl",
      "the ament index (no package 'messy_parts')", "searched"]),
    ({"inertia_from_geometry": False},
     ["joint 'shoulder': moves no mass", "sim_node's inertia_from_geometry parameter",
      "robot: {inertia_from_geometry"]),
    ({"inertia_from_geometry": -1.0}, ["inertia_from_geometry", "-1.0"]),
    ({"inertia_from_geometry": 1e-9}, ["inertia_from_geometry", "must be true, false"]),
    ({"inertia_from_geometry": "heavy"}, ["inertia_from_geometry", "'heavy'"]),
    ({"package_dirs": [" /spaced"]}, ["package_dirs", "surrounding spaces"]),
])
def test_what_is_missing_stops_startup_naming_it(start_sim: Any, params: dict[str, Any],
                                                 words: list[str]) -> None:
    sim = start_sim(described(**params))
    rc = sim.wait(timeout=STARTUP_TIMEOUT)
    out = sim.output
    assert rc == 1, out
    fatal = [line for line in out.splitlines() if "[FATAL]" in line]
    assert len(fatal) == 1, out
    for w in words:
        assert w in fatal[0], out
    assert "Traceback" not in out
