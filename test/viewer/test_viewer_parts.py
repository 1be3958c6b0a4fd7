"""The viewer's parts without a browser: the robot's visuals and colours from its URDF, the
world description message and back, contact arrows as the node's markers draw them, TF
chains, the joint history, a recording that ended early, the camera a page starts on, and
the command without viser."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from viewer_helpers import ARM_URDF, REPO

import mb_sim
from mb_sim.viewer import messages as msgs
from mb_sim.viewer.history import JointHistory
from mb_sim.viewer.scene import contact_arrows, robot_visuals, world_visuals

ASSETS = REPO / "test" / "assets"


def test_robot_visuals_keep_every_visual_with_its_material_colour() -> None:
    text = ARM_URDF.read_text()
    visuals, frames = robot_visuals(text)
    root = ET.fromstring(text)
    assert frames == tuple(link.get("name") for link in root.findall("link"))
    assert len(visuals) == len(root.findall("link/visual"))
    by_frame = {v.frame: v for v in visuals}
    assert by_frame["hand"].rgba == (0.95, 0.5, 0.1, 1.0)  # <material name="orange"/>
    assert by_frame["hand"].kind == "box" and by_frame["hand"].xyz == (0.0, 0.0, 0.035)
    prefixed, frames = robot_visuals(text, frame_prefix="r1/")
    assert frames[0] == "r1/base_link" and prefixed[0].frame.startswith("r1/")
    with pytest.raises(ValueError, match="not XML"):
        robot_visuals("<robot")


def test_the_world_message_describes_every_body_as_the_world_file_does() -> None:
    pytest.importorskip("visualization_msgs", reason="ROS message packages (make env)")
    from builtin_interfaces.msg import Time

    from mb_sim.ros.topics.world_description import world_markers

    world = mb_sim.load_world({
        "ground": {"height": -0.1},
        "bodies": [
            {"name": "crate", "shape": "box", "size": [0.2, 0.3, 0.4], "xyz": [1, 0, 0.2],
             "color": [0.1, 0.2, 0.3, 0.5]},
            {"name": "ball", "shape": "sphere", "size": [0.05], "xyz": [0, 1, 0.05]},
            {"name": "can", "shape": "cylinder", "size": [0.03, 0.1], "xyz": [0, 0, 1],
             "static": True},
            {"name": "pill", "shape": "capsule", "size": [0.02, 0.1], "xyz": [0, 0, 2]},
            {"name": "cube", "shape": "mesh", "mesh": str(ASSETS / "cube.stl"),
             "scale": 0.5, "xyz": [0, 0, 3], "com": [0.01, 0, 0]},
        ]}, base_dir=ASSETS)
    drawn, ground = msgs.world_visuals(world_markers(world, "world", Time()))
    assert ground == pytest.approx(-0.1)
    expected = world_visuals(world)
    shapes = {v.frame: [d for d in drawn if d.frame == v.frame] for v in expected}
    for v in expected:
        got = shapes[v.frame]
        if v.kind == "capsule":  # a cylinder and a sphere at each end
            assert sorted(d.kind for d in got) == ["cylinder", "sphere", "sphere"]
            ends = sorted(d.xyz[2] for d in got if d.kind == "sphere")
            assert ends == pytest.approx([-0.05, 0.05])
            continue
        assert len(got) == 1
        d = got[0]
        assert (d.kind, d.mesh, d.rgba) == (v.kind, v.mesh, pytest.approx(v.rgba))
        assert d.size == pytest.approx(v.size) and d.xyz == pytest.approx(v.xyz)
        assert d.scale == pytest.approx(v.scale)
    assert shapes["crate"][0].rgba == pytest.approx((0.1, 0.2, 0.3, 0.5))
    assert shapes["cube"][0].xyz == pytest.approx((-0.01, 0.0, 0.0))  # the shape about the COM
    empty, no_ground = msgs.world_visuals(world_markers(None, "world", Time()))
    assert empty == () and no_ground is None


def test_heightfields_and_static_meshes_are_drawn() -> None:
    """A heightfield goes to ~/world as a triangle list (two triangles per cell of its grid,
    the viewer's own heightfield shape) and a static mesh as its file."""
    pytest.importorskip("visualization_msgs", reason="ROS message packages (make env)")
    from builtin_interfaces.msg import Time

    from mb_sim.model.triangles import grid
    from mb_sim.ros.topics.world_description import world_markers

    heights = [[0.0, 0.5, 1.0], [0.2, 0.4, 0.0]]
    world = mb_sim.load_world({"bodies": [
        {"name": "hills", "shape": "heightfield", "heights": heights, "size": [2, 1, 0.3],
         "xyz": [1, 0, 0]},
        {"name": "floor", "shape": "mesh", "mesh": str(ASSETS / "cube.stl"), "static": True}]})
    visuals = {v.frame: v for v in world_visuals(world)}
    assert visuals["hills"].kind == "heightfield"
    assert np.array_equal(visuals["hills"].heights, heights)
    assert visuals["floor"].kind == "mesh" and visuals["floor"].mesh.endswith("cube.stl")
    drawn, _ = msgs.world_visuals(world_markers(world, "world", Time()))
    hills = next(d for d in drawn if d.frame == "hills")
    verts, tris = grid(np.array(heights), (2.0, 1.0, 0.3))
    assert hills.kind == "triangles" and len(hills.points) == 3 * 2 * 2 * 1
    np.testing.assert_allclose(hills.points, verts[tris.reshape(-1)])
    assert next(d for d in drawn if d.frame == "floor").kind == "mesh"


def test_contact_arrows_follow_the_rule_of_the_node_markers() -> None:
    pytest.importorskip("visualization_msgs", reason="ROS message packages (make env)")
    from builtin_interfaces.msg import Time

    from mb_sim.ros.wire.markers import contact_markers

    rng = np.random.default_rng(3)
    points = rng.normal(size=(5, 3))
    normals = rng.normal(size=(5, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    impulses = rng.normal(size=(5, 3)) * np.array([[0.0], [1e-4], [0.01], [0.1], [1.0]])
    from_markers = msgs.contact_arrows(contact_markers(points, normals, impulses, "world",
                                                       Time(), 10.0))
    np.testing.assert_allclose(from_markers, contact_arrows(points, normals, impulses, 10.0))
    assert np.linalg.norm(from_markers[0, 1] - from_markers[0, 0]) == pytest.approx(0.01)


def test_frame_tree_chains_transforms_to_its_root() -> None:
    tree = msgs.FrameTree()
    quarter = np.array([0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)])  # 90 deg about z
    tree.set("world", "base", (np.array([1.0, 0.0, 0.0]), quarter))
    tree.set("base", "r1/tool", (np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 0.0, 1.0])))
    xyz, quat = tree.world_pose("r1/tool")
    np.testing.assert_allclose(xyz, [1.0, 1.0, 0.0], atol=1e-12)
    assert abs(quat @ quarter) == pytest.approx(1.0)
    assert tree.world_pose("world")[0].tolist() == [0.0, 0.0, 0.0]
    assert tree.world_pose("elsewhere") is None
    assert tree.prefix_of(("tool",)) == "r1/"
    assert tree.prefix_of(("base",)) == ""
    assert tree.prefix_of(("wheel",)) is None


def test_joint_history_windows_and_starts_anew_when_time_goes_back() -> None:
    h = JointHistory()
    for i in range(10):
        h.add(0.1 * i, {"a": float(i), "b": -float(i)})
    times, values = h.window(0.25, 0.55, ["b", "missing"])
    np.testing.assert_allclose(times, [0.3, 0.4, 0.5])
    np.testing.assert_allclose(values[:, 0], [-3.0, -4.0, -5.0])
    assert np.isnan(values[:, 1]).all()
    assert h.at(0.45) == {"a": 4.0, "b": -4.0} and h.at(-1.0) == {}
    h.add(0.05, {"a": 7.0})  # a reset or a new node
    assert h.window(0.0, 1.0, ["a"])[0].tolist() == [0.05]


def test_a_folder_that_is_no_bag_is_refused_by_name(tmp_path: Path) -> None:
    from mb_sim.viewer.bag import BagError, read_bag

    with pytest.raises(BagError, match=str(tmp_path)):
        read_bag(tmp_path)
    with pytest.raises(BagError, match="no such bag"):
        read_bag(tmp_path / "missing")


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_command_says_how_to_install_viser_when_it_is_missing() -> None:
    result = _run("import sys; sys.modules['viser'] = None\n"
                  "from mb_sim.viewer.cli import main\nsys.exit(main(['--port', '1']))")
    assert result.returncode == 1, result.stderr
    assert "pip install 'mb_sim[viewer]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_mb_sim_without_the_viewer_never_imports_viser() -> None:
    result = _run("import sys, mb_sim\n"
                  f"m = mb_sim.load_urdf({str(ARM_URDF)!r})\n"
                  f"w = mb_sim.load_world({str(REPO / 'config/worlds/table.yaml')!r})\n"
                  "mb_sim.Simulation(m, w).step(2)\n"
                  "import mb_sim.viewer, mb_sim.viewer.scene, mb_sim.viewer.bag\n"
                  "assert 'viser' not in sys.modules, 'viser imported'\n")
    assert result.returncode == 0, result.stderr


def test_a_page_that_opens_before_the_view_is_framed_gets_the_framing_camera() -> None:
    pytest.importorskip("viser", reason="the browser view's extra (make env)")
    from types import SimpleNamespace

    from viewer_helpers import free_port

    from mb_sim.viewer.scene import Scene, Snapshot
    from mb_sim.viewer.view import View

    visuals, frames = robot_visuals(ARM_URDF.read_text())
    view = View("127.0.0.1", free_port())
    told = []
    view.page_opened = told.append
    try:
        early = SimpleNamespace(camera=SimpleNamespace())
        view._frame_new_page(early)  # a page connects before the scene is drawn
        assert told == [] and not hasattr(early.camera, "position")
        view.set_scene(Scene(visuals, frames))
        poses = {f: ((0.0, 0.0, 0.1 * i), (0.0, 0.0, 0.0, 1.0)) for i, f in enumerate(frames)}
        view.show(Snapshot(0.0, dict(list(poses.items())[:-1])))  # not every frame posed yet
        assert view.camera is None and told == []
        view.show(Snapshot(0.0, poses))
        assert view.camera is not None and told == [view.camera]
        assert early.camera.position == view.camera.position
        assert early.camera.look_at == view.camera.look_at
        later = SimpleNamespace(camera=SimpleNamespace())
        view._frame_new_page(later)  # one that connects now starts on it at once
        assert later.camera.position == view.camera.position and len(told) == 2
    finally:
        view.close()
