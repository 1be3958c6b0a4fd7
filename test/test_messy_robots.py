"""Robot descriptions as people have them (test/data/messy/, made by make_messy_corpus.py):
each loads with the warning or info line its case expects, and simulates; what the physics
needs and cannot find is still refused, naming every place searched.

Simulating: the two-link arm starts 0.5 rad off its hanging pose and swings for 200 steps of
1 ms under gravity with joint damping: every coordinate stays finite, the shoulder swings
towards hanging, and the energy (kinetic + potential) does not grow.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.errors import SpawnError
from mb_sim.model.resources import resolve_uri
from mb_sim.model.spawn import spawn_body
from mb_sim.model.srdf import read_disabled_collisions

MESSY = Path(__file__).parent / "data" / "messy"
WS = MESSY / "ws" / "src"
PARTS = WS / "parts_repo" / "parts-main"


@pytest.fixture(autouse=True)
def no_ros_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No sourced workspace knows the corpus' packages (as on a machine without ROS)."""
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)


def swings(model: mb_sim.Model | None, world: mb_sim.World | None = None) -> mb_sim.Simulation:
    """The module docstring's check; returns the simulation."""
    sim = mb_sim.Simulation(model, world=world, dt=0.001)
    sim.set_initial_state(q={"shoulder": 0.5, "elbow": 0.0}, qd={"shoulder": 0.0, "elbow": 0.0})
    energy = sim.energy()
    sim.step(n=200)
    assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.qd))
    shoulder = sim.joint_names.index("shoulder")
    assert 0.0 < sim.q[shoulder] < 0.45, sim.q
    assert sim.energy() <= energy + 1e-9 * max(1.0, abs(energy)), (energy, sim.energy())
    return sim


def messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level and r.name == "mb_sim"]


def mesh_files(model: mb_sim.Model, role: str = "collision") -> set[Path]:
    geometries = getattr(model, f"{role}_geometries")
    return {Path(g.mesh) for gs in geometries.values() for g in gs if g.kind == "mesh"}


# --- package:// near the description ----------------------------------------------------------


def test_asset_folder_meshes_beside_the_urdf(caplog: pytest.LogCaptureFixture) -> None:
    """`package://meshes/collision/link0.obj` where `meshes` is a folder beside the URDF (as
    PyBullet's asset folders are written): found there, one info line for its three URIs."""
    path = MESSY / "assets" / "arm" / "arm.urdf"
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        model = mb_sim.load_urdf(path)
    folder = path.parent.resolve()
    assert mesh_files(model) == {folder / "meshes" / "collision" / "link0.obj"}
    assert mesh_files(model, "visual") == {folder / "meshes" / "visual" / "link0.obj"}
    (info,) = [m for m in messages(caplog, logging.INFO) if "package 'meshes'" in m]
    assert str(path) in info and str(folder) in info
    assert not messages(caplog, logging.WARNING)
    swings(model)


def test_package_found_by_walking_up_to_its_package_xml(caplog: pytest.LogCaptureFixture) -> None:
    path = MESSY / "mypkg" / "urdf" / "robots" / "arm.urdf"
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        model = mb_sim.load_urdf(path)
    assert mesh_files(model) == {(MESSY / "mypkg" / "meshes" / "link.stl").resolve()}
    (info,) = [m for m in messages(caplog, logging.INFO) if "package 'mypkg'" in m]
    assert str((MESSY / "mypkg").resolve()) in info
    swings(model)


def test_the_walk_stops_at_the_package_xml(tmp_path: Path) -> None:
    """Above the first folder holding a package.xml nothing is searched: a mesh two packages
    away is not taken for this one's."""
    pkg = tmp_path / "outer" / "inner"
    (pkg / "urdf").mkdir(parents=True)
    (pkg / "package.xml").write_text("<package><name>inner</name></package>")
    (tmp_path / "outer" / "meshes").mkdir()
    (tmp_path / "outer" / "meshes" / "link.stl").write_text(
        (MESSY / "mypkg" / "meshes" / "link.stl").read_text())
    found, why = resolve_uri("package://inner/meshes/link.stl", pkg / "urdf")
    assert found is None and why is not None
    assert str(pkg / "meshes" / "link.stl") in why
    assert str(tmp_path / "outer" / "meshes") not in why


def test_package_dirs_folder_named_unlike_its_package() -> None:
    """A package_dirs entry that is the package, though its folder has another name (a clone),
    or holds it below: known by its package.xml."""
    xml = (MESSY / "launch_description.urdf").read_text()
    for folder in (PARTS, PARTS.parent, WS):
        model = mb_sim.load_urdf(xml, [folder], inertia_from_geometry=1000.0)
        assert mesh_files(model) == {(PARTS / "meshes" / "link.stl").resolve()}


def test_urdf_text_searches_package_dirs_and_the_working_folder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    xml = (MESSY / "assets" / "arm" / "arm.urdf").read_text()
    model = mb_sim.load_urdf(xml, [MESSY / "assets" / "arm"])
    assert mesh_files(model) == {(MESSY / "assets/arm/meshes/collision/link0.obj").resolve()}
    monkeypatch.chdir(MESSY / "assets" / "arm")
    swings(mb_sim.load_urdf(xml))


# --- xacro's $(find) without ROS ------------------------------------------------------------


def test_xacro_finds_its_own_package(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        model = mb_sim.load_urdf(MESSY / "mypkg" / "urdf" / "arm.urdf.xacro")
    assert mesh_files(model) == {(MESSY / "mypkg" / "meshes" / "link.stl").resolve()}
    (info,) = [m for m in messages(caplog, logging.INFO) if "package 'mypkg'" in m]
    assert "$(find mypkg)" in info
    swings(model)


def test_xacro_find_with_only_package_dirs() -> None:
    """`$(find messy_parts)` from a xacro outside that package: found below package_dirs
    (ws/src/parts_repo/parts-main, a folder not named like the package, two levels down)."""
    path = MESSY / "user" / "arm.urdf.xacro"
    model = mb_sim.load_urdf(path, package_dirs=[WS])
    assert mesh_files(model) == {(PARTS / "meshes" / "link.stl").resolve()}
    assert mesh_files(model, "visual") == {(PARTS / "meshes" / "link.stl").resolve()}
    swings(model)


def test_xacro_find_with_ros_package_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(WS))
    swings(mb_sim.load_urdf(MESSY / "user" / "arm.urdf.xacro"))


def test_xacro_find_of_an_unknown_package_lists_the_places_searched() -> None:
    path = MESSY / "user" / "arm.urdf.xacro"
    with pytest.raises(mb_sim.ModelError) as err:
        mb_sim.load_urdf(path)
    text = str(err.value)
    assert text.startswith(f"{path}: xacro: $(find messy_parts): no package 'messy_parts'")
    for place in ("the ament index", str((MESSY / "user" / "messy_parts").resolve()),
                  str((MESSY / "messy_parts").resolve())):
        assert place in text


def test_xacro_hook_is_removed_after_loading() -> None:
    from xacro import substitution_args

    before = substitution_args._eval_find
    mb_sim.load_urdf(MESSY / "user" / "arm.urdf.xacro", package_dirs=[WS])
    with pytest.raises(mb_sim.ModelError):
        mb_sim.load_urdf(MESSY / "user" / "arm.urdf.xacro")
    assert substitution_args._eval_find is before
    assert substitution_args._eval_dict["find"] is before


# --- what is only drawn ---------------------------------------------------------------------


def test_visual_problems_are_warnings(caplog: pytest.LogCaptureFixture) -> None:
    path = MESSY / "drawn.urdf"
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        model = mb_sim.load_urdf(path)
    warnings = messages(caplog, logging.WARNING)
    expected = [("link 'link1'", "<sphere>: radius='0'"),
                ("link 'link1'", "no <box>, <sphere>, <cylinder> or <mesh>"),
                ("link 'link2'", "package://nowhere_pkg/meshes/gone.dae"),
                ("link 'link2'", "<color>: rgba='1 0 0'")]
    assert len(warnings) == len(expected), warnings
    for link, what in expected:
        (line,) = [w for w in warnings if what in w]
        assert line.startswith(f"{path}: {link}"), line
        assert "ignored" in line
    assert model.visual_geometries["link1"] == ()
    assert [g.kind for g in model.visual_geometries["link2"]] == ["box"]  # only its colour
    assert [g.kind for g in model.collision_geometries["link1"]] == ["box"]
    assert [g.kind for g in model.collision_geometries["link2"]] == ["cylinder"]
    swings(model)


@pytest.mark.parametrize(("shape", "fragment"), [
    ('<sphere radius="0"/>', "<collision> <geometry> <sphere>: radius='0'"),
    ("<box/>", "<collision> <geometry> <box>: the attribute size is missing"),
    ('<cylinder radius="0.1" length="-1"/>', "<collision> <geometry> <cylinder>: length='-1'"),
])
def test_the_same_problems_in_a_collision_are_errors(shape: str, fragment: str) -> None:
    xml = (MESSY / "drawn.urdf").read_text().replace(
        '<cylinder radius="0.02" length="0.3"/>', shape)
    with pytest.raises(mb_sim.ModelError, match=re.escape(f"link 'link2' {fragment}")):
        mb_sim.load_urdf(xml)


def test_inertial_problems_stay_errors() -> None:
    xml = (MESSY / "bom.urdf").read_text(encoding="utf-8-sig").replace(
        '<mass value="0.5"/>', '<mass value="nan"/>')
    with pytest.raises(mb_sim.ModelError, match=r"link 'link2' <inertial> <mass>: value='nan'"):
        mb_sim.load_urdf(xml)


# --- byte-order mark and blank lines --------------------------------------------------------


def test_bom_and_blank_lines_before_the_declaration() -> None:
    raw = (MESSY / "bom.urdf").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf\n") and raw.endswith(b"\x00")
    model = mb_sim.load_urdf(MESSY / "bom.urdf", srdf=MESSY / "bom.srdf")
    assert model.urdf_xml.startswith("<?xml") and model.urdf_xml.endswith("</robot>\n")
    assert ("base", "link2") in model.collision_exclusions
    swings(model)
    swings(mb_sim.load_urdf(raw.decode("utf-8")))  # the same as text, BOM character included
    swings(mb_sim.load_urdf(MESSY / "bom.urdf.xacro"))
    assert read_disabled_collisions(MESSY / "bom.srdf", mb_sim.ModelError) == (("base", "link2"),)


def test_bom_in_spawned_resources_and_world_files(tmp_path: Path) -> None:
    text = (MESSY / "bom.urdf").read_text(encoding="utf-8")
    one_link = text[: text.index("<joint")] + "</robot>"
    spawned = spawn_body(resource_string=one_link, name="base_part")
    assert spawned.format == "urdf" and spawned.body.mass == pytest.approx(2.0)
    world = tmp_path / "bom_world.yaml"
    world.write_bytes(b"\xef\xbb\xbf" + b"gravity: [0, 0, -9.81]\n")
    assert mb_sim.load_world(world).gravity.tolist() == [0.0, 0.0, -9.81]


# --- massless links -------------------------------------------------------------------------


def test_massless_links_repaired_by_the_world_file(caplog: pytest.LogCaptureFixture) -> None:
    world = mb_sim.load_world(MESSY / "no_inertia_world.yaml")
    assert world.robot.inertia_from_geometry == 1000.0
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        sim = mb_sim.Simulation(None, world=world, dt=0.001)
    filled = [m for m in messages(caplog, logging.INFO) if "from its collision shapes" in m]
    assert len(filled) == 2 and all("density 1000" in m for m in filled)
    np.testing.assert_allclose(sim.model.mass, [0.48, 0.48])  # 0.04 x 0.04 x 0.3 m of water
    assert sim.q[sim.joint_names.index("shoulder")] == pytest.approx(0.5)  # the world's start
    swings(None, world)
    again = mb_sim.load_world(world.to_dict(), base_dir=MESSY)
    assert again.robot.inertia_from_geometry == 1000.0


def test_massless_links_error_names_every_repair() -> None:
    """With inertia_from_geometry false (the default repairs it) the refusal names the
    repairs."""
    with pytest.raises(mb_sim.ModelError) as err:
        mb_sim.load_urdf(MESSY / "no_inertia.urdf", inertia_from_geometry=False)
    text = str(err.value)
    assert "joint 'shoulder': moves no mass" in text
    for way in ("load_urdf(..., inertia_from_geometry=", "robot: {inertia_from_geometry:",
                "sim_node's inertia_from_geometry parameter"):
        assert way in text, text
    world = {"robot": {"urdf": str(MESSY / "no_inertia.urdf"), "inertia_from_geometry": False}}
    with pytest.raises(mb_sim.ModelError, match="robot: {inertia_from_geometry"):
        mb_sim.Simulation(None, world=mb_sim.load_world(world))


def test_massless_links_load_by_default_with_one_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    """As Isaac Sim's importer: without <inertial>s the robot loads, its links given the mass
    of their collision shapes at 1000 kg/m^3, one warning naming the links and the density;
    and it swings as with the density given."""
    world = {"robot": {"urdf": str(MESSY / "no_inertia.urdf"),
                       "initial_positions": {"shoulder": 0.5}}}
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        sim = mb_sim.Simulation(None, world=mb_sim.load_world(world), dt=0.001)
    said = [r for r in caplog.records if "collision shapes" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING, [r.getMessage() for r in said]
    text = said[0].getMessage()
    assert "'link1' 0.48 kg" in text and "'link2' 0.48 kg" in text, text
    assert "1000 kg/m^3" in text and "false refuses" in text, text
    np.testing.assert_allclose(sim.model.mass, [0.48, 0.48])
    swings(None, mb_sim.load_world(world))


@pytest.mark.parametrize("value", [0, -1.0, 1e-9, 1e12, "heavy", [1000.0]])
def test_world_key_is_checked(value: object) -> None:
    with pytest.raises(mb_sim.WorldError, match=r"robot\.inertia_from_geometry"):
        mb_sim.load_world({"robot": {"inertia_from_geometry": value}})


@pytest.mark.parametrize("value", [True, False, None, 250.0])
def test_world_key_takes_true_false_or_a_density(value: object) -> None:
    world = mb_sim.load_world({"robot": {"inertia_from_geometry": value}})
    assert world.robot.inertia_from_geometry is value or \
        world.robot.inertia_from_geometry == value
    again = mb_sim.load_world(world.to_dict())
    assert again.robot.inertia_from_geometry == world.robot.inertia_from_geometry


# --- what cannot be found is still refused --------------------------------------------------


def test_collision_mesh_found_nowhere_is_refused_with_the_places_searched() -> None:
    path = MESSY / "lost_mesh.urdf"
    model = mb_sim.load_urdf(path)  # not needed yet
    with pytest.raises(mb_sim.ModelError) as err:
        mb_sim.Simulation(model)
    text = str(err.value)
    assert text.startswith(f"{path}: link 'link1': collision mesh needed but cannot resolve "
                           "'package://lost_pkg/meshes/lost.stl'")
    for folder in (MESSY, MESSY.parent, MESSY.parent.parent):
        for candidate in (folder / "lost_pkg" / "meshes" / "lost.stl",
                          folder / "meshes" / "lost.stl"):
            assert str(candidate.resolve()) in text
    assert "the ament index (no package 'lost_pkg')" in text


# --- the same search for world files and spawned entities -----------------------------------


def test_world_mesh_body_and_robot_through_package_dirs() -> None:
    data = {"robot": {"urdf": "assets/arm/arm.urdf"},
            "bodies": [{"name": "part", "shape": "mesh",
                        "mesh": "package://messy_parts/meshes/link.stl", "xyz": [1, 0, 0.2]}]}
    with pytest.raises(mb_sim.WorldError) as err:
        mb_sim.load_world(data, base_dir=MESSY)
    assert "bodies[0].mesh" in str(err.value) and "the ament index" in str(err.value)
    world = mb_sim.load_world(data, base_dir=MESSY, package_dirs=[WS])
    assert Path(world.body("part").geometry.mesh) == (PARTS / "meshes" / "link.stl").resolve()
    assert world.robot.package_dirs == (str(WS),)
    sim = mb_sim.Simulation(None, world=world, dt=0.001)
    sim.step(n=50)
    assert np.all(np.isfinite(sim.body_pose("part")[0]))


def test_spawned_entities_use_package_dirs() -> None:
    body = "{shape: mesh, mesh: package://messy_parts/meshes/link.stl, mass: 0.5}"
    with pytest.raises(SpawnError) as err:
        spawn_body(resource_string=body, name="part")
    assert err.value.problem == "MISSING_ASSETS"
    spawned = spawn_body(resource_string=body, name="part", package_dirs=[WS])
    assert Path(spawned.body.geometry.mesh) == (PARTS / "meshes" / "link.stl").resolve()
