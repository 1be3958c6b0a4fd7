"""URDF validation and resource resolution in mb_sim.load_urdf.

Every malformed input must raise mb_sim.ModelError (a ValueError) whose message names the
source (the file path, or the string marker for XML given as a string), the element (the
link or joint name) and the offending value. The URDFs are built here as strings from a
small valid two-joint chain; the file cases write them to tmp_path.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.model.resources import resolve_uri

INERTIAL = """<inertial><origin xyz="0 0 0.1"/><mass value="{mass}"/>
  <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>"""


def link(name: str, mass: float = 1.0, ixx: float = 0.01, iyy: float = 0.01, izz: float = 0.01,
         extra: str = "") -> str:  # fmt: skip
    return (
        f'<link name="{name}">'
        + INERTIAL.format(mass=mass, ixx=ixx, iyy=iyy, izz=izz)
        + extra
        + "</link>"
    )


def joint(name: str, parent: str, child: str, kind: str = "revolute", axis: str = "0 1 0",
          extra: str = "") -> str:  # fmt: skip
    limit = '<limit lower="-1" upper="1" effort="10" velocity="2"/>'
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="0 0 0.2"/><axis xyz="{axis}"/>{limit}{extra}</joint>'
    )


def robot(*parts: str) -> str:
    return '<?xml version="1.0"?>\n<robot name="r">' + "".join(parts) + "</robot>"


def chain(**link_overrides: dict) -> str:
    """base -j1-> l1 -j2-> l2, with keyword overrides for the links l1 and l2."""
    return robot(
        link("base"),
        joint("j1", "base", "l1"),
        link("l1", **link_overrides.get("l1", {})),
        joint("j2", "l1", "l2"),
        link("l2", **link_overrides.get("l2", {})),
    )


def test_valid_chain_loads() -> None:
    model = mb_sim.load_urdf(chain())
    assert model.joint_names == ("j1", "j2")
    assert model.base_link == "base"


def _raises(xml: str, tmp_path: Path | None = None) -> tuple[str, str]:
    """Load from a string, and from a file when tmp_path is given; return (message, source)."""
    if tmp_path is None:
        with pytest.raises(mb_sim.ModelError) as info:
            mb_sim.load_urdf(xml)
        return str(info.value), "string>"
    path = tmp_path / "bad robot.urdf"
    path.write_text(xml)
    with pytest.raises(mb_sim.ModelError) as info:
        mb_sim.load_urdf(path)
    return str(info.value), str(path)


def check_message(msg: str, source: str, element: str, *values: str) -> None:
    assert source in msg, f"source {source!r} missing from: {msg}"
    assert element in msg, f"element {element!r} missing from: {msg}"
    for value in values:
        assert re.search(value, msg), f"value /{value}/ missing from: {msg}"


ZEROS = r"0(\.0*)?,? +0(\.0*)?,? +0(\.0*)?"

CASES = {
    "duplicate link": (
        robot(link("base"), joint("j1", "base", "l1"), link("l1"), link("l1")),
        "'l1'",
        ("duplicate",),
    ),
    "duplicate joint": (
        robot(
            link("base"),
            joint("j1", "base", "l1"),
            link("l1"),
            joint("j1", "l1", "l2"),
            link("l2"),
        ),
        "'j1'",
        ("duplicate",),
    ),
    "unknown parent": (
        robot(link("base"), joint("j1", "nowhere", "l1"), link("l1")),
        "'j1'",
        ("'nowhere'",),
    ),
    "unknown child": (
        robot(link("base"), joint("j1", "base", "ghost"), link("l1")),
        "'j1'",
        ("'ghost'",),
    ),
    "link with two parents": (
        robot(
            link("base"),
            joint("j1", "base", "l1"),
            link("l1"),
            joint("j2", "base", "l2"),
            link("l2"),
            joint("j3", "l1", "l2"),
        ),
        "'l2'",
        ("'j3'", "loop"),
    ),
    "cycle without root": (
        robot(link("a"), link("b"), joint("j1", "a", "b"), joint("j2", "b", "a")),
        "root",
        (),
    ),
    "several roots": (
        robot(link("base"), joint("j1", "base", "l1"), link("l1"), link("stray")),
        "'stray'",
        ("'base'", "root"),
    ),
    "zero axis": (
        robot(link("base"), joint("j1", "base", "l1", axis="0 0 0"), link("l1")),
        "'j1'",
        ("axis", ZEROS),
    ),
    "negative mass": (chain(l2={"mass": -2.5}), "'l2'", ("-2.5", "mass")),
    "negative inertia eigenvalue": (
        chain(l1={"ixx": -0.75, "iyy": 1.0, "izz": 1.0}),
        "'l1'",
        ("-0.75", "inertia", "positive"),
    ),
    "triangle inequality": (
        chain(l2={"ixx": 0.05, "iyy": 0.05, "izz": 0.9}),
        "'l2'",
        (r"0\.9", "triangle"),
    ),
    "revolute without limit": (
        robot(
            link("base"),
            '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>'
            '<axis xyz="0 0 1"/></joint>',
            link("l1"),
        ),
        "'j1'",
        ("<limit>", "revolute"),
    ),
    "prismatic without limit": (
        robot(
            link("base"),
            '<joint name="j1" type="prismatic"><parent link="base"/><child link="l1"/>'
            '<axis xyz="0 0 1"/></joint>',
            link("l1"),
        ),
        "'j1'",
        ("<limit>", "prismatic"),
    ),
    "nan in joint origin": (
        chain().replace('<origin xyz="0 0 0.2"/>', '<origin xyz="0 nan 0.2"/>', 1),
        "'j1'",
        ("<origin>", "xyz", "nan", "not finite"),
    ),
    "inf in limit": (
        chain().replace('upper="1"', 'upper="inf"', 1),
        "'j1'",
        ("<limit>", "upper", "inf"),
    ),
    "nan in mass": (chain(l2={"mass": "nan"}), "'l2'", ("<mass>", "nan")),
    "nan in inertia": (chain(l1={"ixx": "NaN"}), "'l1'", ("<inertia>", "ixx", "NaN")),
    "inf in axis": (
        robot(link("base"), joint("j1", "base", "l1", axis="0 -inf 1"), link("l1")),
        "'j1'",
        ("<axis>", "-inf"),
    ),
    "nan in an unused element": (
        chain().replace("</joint>", '<safety_controller soft_lower_limit="nan"/></joint>', 1),
        "'j1'",
        ("<safety_controller>", "soft_lower_limit", "nan"),
    ),
    "text for a number": (chain(l1={"mass": "heavy"}), "'l1'", ("<mass>", "heavy")),
    "huge mass": (chain(l1={"mass": "1e300"}), "'l1'", ("<mass>", "1e300", "range")),
    "massless moving leaf": (
        chain(l2={"mass": 0.0, "ixx": 0, "iyy": 0, "izz": 0}),
        "'l2'",
        ("mass",),
    ),
    "limits reversed": (
        robot(
            link("base"),
            '<joint name="j1" type="prismatic"><parent link="base"/><child link="l1"/>'
            '<axis xyz="1 0 0"/><limit lower="0.5" upper="-0.5" effort="1" velocity="1"/></joint>',
            link("l1"),
        ),
        "'j1'",
        (r"0\.5", "-0\\.5"),
    ),
    "negative damping": (
        robot(
            link("base"),
            joint("j1", "base", "l1", extra='<dynamics damping="-0.7" friction="0"/>'),
            link("l1"),
        ),
        "'j1'",
        ("damping", "-0.7"),
    ),
    "negative friction": (
        robot(
            link("base"),
            joint("j1", "base", "l1", extra='<dynamics damping="0" friction="-0.3"/>'),
            link("l1"),
        ),
        "'j1'",
        ("friction", "-0.3"),
    ),
    "floating joint": (
        robot(link("base"), joint("j1", "base", "l1", kind="floating"), link("l1")),
        "'j1'",
        ("floating", "supported only from a bare root link"),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_invalid_string(case: str) -> None:
    xml, element, values = CASES[case]
    msg, source = _raises(xml)
    check_message(msg, source, element, *values)


@pytest.mark.parametrize("case", list(CASES))
def test_invalid_file(case: str, tmp_path: Path) -> None:
    xml, element, values = CASES[case]
    msg, source = _raises(xml, tmp_path)
    check_message(msg, source, element, *values)


def test_unused_elements_never_stop_loading(caplog: pytest.LogCaptureFixture) -> None:
    """Transmissions (both formats), gazebo, ros2_control, sensors, materials, textures
    without a filename, calibration, safety controllers and unknown elements are ignored."""
    extras = (
        '<material name="blue"><color rgba="0 0 1 1"/></material>'
        '<transmission name="t1" type="pr2_mechanism_model/SimpleTransmission">'
        '<actuator name="m1"/><joint name="j1"/><mechanicalReduction>1</mechanicalReduction>'
        "</transmission>"
        '<transmission name="t2"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="j2"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>'
        "</transmission>"
        '<gazebo reference="l1"><mu1>0.5</mu1></gazebo>'
        '<ros2_control name="sys" type="system"><hardware><plugin>x</plugin></hardware>'
        "</ros2_control>"
        '<sensor name="cam" update_rate="30"><parent link="l1"/><camera/></sensor>'
        "<anything_else><deep/></anything_else>"
    )
    visual = ('<visual><geometry><box size="0.1 0.1 0.1"/></geometry>'
              '<material name="m"><texture/><color rgba="1 0 0 1"/></material></visual>')
    xml = chain(l1={"extra": visual}).replace("</robot>", extras + "</robot>")
    xml = xml.replace("</joint>", '<calibration rising="0.1"/>'
                      '<safety_controller soft_lower_limit="-1" k_velocity="10"/></joint>', 1)
    with caplog.at_level(logging.DEBUG, logger="mb_sim"):
        model = mb_sim.load_urdf(xml)
    assert model.joint_names == ("j1", "j2")
    assert [g.kind for g in model.visual_geometries["l1"]] == ["box"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("transmission" in r.getMessage() for r in caplog.records)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "mb_sim" and r.levelno >= logging.WARNING]


@pytest.mark.parametrize("moments", [(-0.25, 1.0, 1.0), (0.1, 0.1, 0.5)])
def test_slightly_invalid_inertia_is_repaired(moments: tuple[float, float, float],
                                              caplog: pytest.LogCaptureFixture) -> None:
    ixx, iyy, izz = moments
    xml = chain(l2={"ixx": ixx, "iyy": iyy, "izz": izz})
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        model = mb_sim.load_urdf(xml)
    (warning,) = _warnings(caplog)
    assert "'l2'" in warning and "repaired" in warning and str(ixx) in warning
    repaired = model.inertia[1]
    eig = np.linalg.eigvalsh(repaired)
    assert eig[0] >= -1e-12 and eig[2] <= eig[0] + eig[1] + 1e-12
    # the nearest valid inertia: closer to the given one than any other valid inertia tried
    given = np.diag(moments)
    rng = np.random.default_rng(0)
    for _ in range(200):
        j = rng.uniform(0, 1, 3)
        other = np.diag([j[1] + j[2], j[0] + j[2], j[0] + j[1]])
        assert np.linalg.norm(other - given) >= np.linalg.norm(repaired - given) - 1e-12
    with pytest.raises(mb_sim.ModelError, match="'l2'.*strict"):
        mb_sim.load_urdf(xml, strict=True)


def test_valid_inertia_is_kept_exactly(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        model = mb_sim.load_urdf(chain(l1={"ixx": 0.02, "iyy": 0.03, "izz": 0.04}),
                                 strict=True)
    assert not _warnings(caplog)
    assert np.array_equal(np.diag(model.inertia[0]), [0.02, 0.03, 0.04])


def test_inertia_is_checked_after_lumping() -> None:
    """Root and fixed-to-root links never enter the dynamics; a fixed child is lumped first."""
    bad = {"ixx": -0.9, "iyy": 0.1, "izz": 0.1}
    fixed = ('<joint name="fix" type="fixed"><parent link="{p}"/><child link="{c}"/>'
             '<origin xyz="0 0 0.1"/></joint>')
    xml = robot(
        link("base", **bad),
        fixed.format(p="base", c="antenna"), link("antenna", **bad),
        joint("j1", "base", "l1"), link("l1"),
    )
    model = mb_sim.load_urdf(xml, strict=True)
    assert model.nv == 1
    # a grossly invalid inertia of a link fixed to a moving one is refused, naming both
    xml = robot(link("base"), joint("j1", "base", "l1"), link("l1", mass=0.001),
                fixed.format(p="l1", c="tip"), link("tip", **bad))
    with pytest.raises(mb_sim.ModelError, match="'l1'.*'tip'"):
        mb_sim.load_urdf(xml)


def test_massless_leaf_error_and_inertia_from_geometry() -> None:
    shape = '<collision><origin xyz="0 0 0.05"/><geometry><box size="0.1 0.2 0.3"/></geometry></collision>'
    xml = robot(link("base"), joint("j1", "base", "l1"), link("l1"),
                joint("j2", "l1", "l2"),
                f'<link name="l2">{shape}</link>')  # no <inertial>: massless
    with pytest.raises(mb_sim.ModelError, match="'j2'.*moves no mass.*inertia_from_geometry"):
        mb_sim.load_urdf(xml, inertia_from_geometry=False)
    model = mb_sim.load_urdf(xml, inertia_from_geometry=500.0)
    m = 500.0 * 0.1 * 0.2 * 0.3
    assert model.mass[1] == pytest.approx(m, rel=1e-12)
    assert np.allclose(model.com[1], [0, 0, 0.05])
    expected = m / 12 * np.diag([0.2**2 + 0.3**2, 0.1**2 + 0.3**2, 0.1**2 + 0.2**2])
    assert np.allclose(model.inertia[1], expected, rtol=1e-12, atol=0)
    assert model.mass[0] == 1.0  # links with a mass keep it
    for bad in (float("nan"), 0, -1.0, 1e7, "heavy"):
        with pytest.raises(mb_sim.ModelError, match="density") as err:
            mb_sim.load_urdf(xml, inertia_from_geometry=bad)
        assert "inertia_from_geometry must be true" in str(err.value)
    default = mb_sim.load_urdf(xml)  # the default gives l2 the mass of its box at 1000 kg/m^3
    assert default.mass[1] == pytest.approx(1000.0 * 0.1 * 0.2 * 0.3, rel=1e-12)
    assert mb_sim.load_urdf(xml, inertia_from_geometry=True).mass[1] == default.mass[1]


def test_mimic_of_unknown_joint_loads_independent(caplog: pytest.LogCaptureFixture) -> None:
    xml = robot(link("base"), joint("j1", "base", "l1"), link("l1"),
                joint("j2", "base", "l2", extra='<mimic joint="nowhere"/>'), link("l2"))
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        model = mb_sim.load_urdf(xml)
    assert model.mimic == ()
    assert any("'nowhere'" in w for w in _warnings(caplog))


def test_xacro(tmp_path: Path) -> None:
    path = tmp_path / "robot.urdf.xacro"
    path.write_text(
        '<?xml version="1.0"?>\n'
        '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:arg name="mass" default="1.0"/>'
        '<xacro:property name="m" value="$(arg mass)"/>'
        + link("base")
        + joint("j1", "base", "l1")
        + link("l1").replace('value="1.0"', 'value="${m}"')
        + "</robot>"
    )
    assert mb_sim.load_urdf(path).mass[0] == 1.0
    assert mb_sim.load_urdf(path, xacro_args={"mass": 2.5}).mass[0] == 2.5
    path.write_text(path.read_text().replace("${m}", "${undefined_name}"))
    with pytest.raises(mb_sim.ModelError, match=re.escape(str(path)) + ".*xacro"):
        mb_sim.load_urdf(path)


def test_directory_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(mb_sim.ModelError, match="directory"):
        mb_sim.load_urdf(tmp_path)
    path = tmp_path / "robot.urdf"
    path.write_bytes(bytes(range(256)))
    with pytest.raises(mb_sim.ModelError, match=re.escape(str(path))):
        mb_sim.load_urdf(path)


def test_model_error_is_value_error() -> None:
    assert issubclass(mb_sim.ModelError, ValueError)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.urdf"
    with pytest.raises(mb_sim.ModelError, match=re.escape(str(path))):
        mb_sim.load_urdf(path)


def test_malformed_xml(tmp_path: Path) -> None:
    path = tmp_path / "broken.urdf"
    path.write_text('<robot name="r"><link name="a"></robot>')
    with pytest.raises(mb_sim.ModelError, match=re.escape(str(path))):
        mb_sim.load_urdf(path)


def test_point_masses_are_allowed() -> None:
    """mass > 0 with zero inertia (the point masses of Wawrzyński 2009) is a valid link."""
    xml = chain(l1={"ixx": 0, "iyy": 0, "izz": 0}, l2={"ixx": 0, "iyy": 0, "izz": 0})
    model = mb_sim.load_urdf(xml)
    H = mb_sim.crba(model, np.array([0.3, -0.4]))
    assert np.all(np.linalg.eigvalsh(H) > 0)


def test_massless_link_with_massive_descendant_is_allowed() -> None:
    """A massless moving link is fine when something after it has mass."""
    model = mb_sim.load_urdf(chain(l1={"mass": 0.0, "ixx": 0, "iyy": 0, "izz": 0}))
    assert model.nv == 2


def test_massless_fixed_frame_is_allowed() -> None:
    """A massless leaf on a fixed joint (a tool frame) is not an error."""
    xml = robot(
        link("base"), joint("j1", "base", "l1"), link("l1"),
        '<joint name="tool" type="fixed"><parent link="l1"/><child link="tool0"/></joint>',
        '<link name="tool0"/>',
    )  # fmt: skip
    model = mb_sim.load_urdf(xml)
    assert model.fixed_links == ("tool0",)
    assert model.link_parent["tool0"] == "l1" and model.link_joint["tool0"] == "tool"


def test_mimic_warns(caplog: pytest.LogCaptureFixture) -> None:
    xml = robot(
        link("base"),
        joint("j1", "base", "l1"),
        link("l1"),
        joint("j2", "base", "l2", extra='<mimic joint="j1" multiplier="-1" offset="0"/>'),
        link("l2"),
    )
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        model = mb_sim.load_urdf(xml)
    assert model.nv == 2
    warnings = [r for r in caplog.records if r.name == "mb_sim" and r.levelno >= logging.WARNING]
    assert any("j2" in r.getMessage() and "mimic" in r.getMessage() for r in warnings), [
        r.getMessage() for r in warnings
    ]


def test_continuous_limits_are_infinite() -> None:
    xml = robot(
        link("base"),
        '<joint name="c" type="continuous"><parent link="base"/><child link="l1"/>'
        '<axis xyz="0 0 1"/><origin xyz="0 0 0"/></joint>',
        link("l1"),
    )
    model = mb_sim.load_urdf(xml)
    assert model.lower[0] == -np.inf and model.upper[0] == np.inf


# --- resources: package://, relative paths, file:// -----------------------------------------
PKG = "mbsim_validation_pkg"


def mesh_robot(uri: str) -> str:
    return robot(
        link("base"),
        joint("j1", "base", "l1"),
        link(
            "l1",
            extra=f'<collision><geometry><mesh filename="{uri}"/></geometry></collision>'
            f'<visual><geometry><mesh filename="{uri}" scale="2 2 2"/></geometry></visual>',
        ),
    )


@pytest.fixture
def package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """<tmp>/ws/PKG/{package.xml, meshes/part.stl, urdf/robot.urdf}; no ROS environment."""
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    pkg = tmp_path / "ws" / PKG
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "urdf").mkdir()
    (pkg / "package.xml").write_text(f"<package><name>{PKG}</name></package>")
    (pkg / "meshes" / "part.stl").write_text("solid part\nendsolid part\n")
    return pkg


def _mesh(model: mb_sim.Model) -> tuple:
    (geom,) = model.collision_geometries["l1"]
    (vis,) = model.visual_geometries["l1"]
    assert geom.kind == "mesh" and vis.kind == "mesh"
    assert vis.scale == (2.0, 2.0, 2.0)
    return geom, vis


def _expect_resolved(model: mb_sim.Model, target: Path) -> None:
    for geom in _mesh(model):
        assert geom.mesh_error is None, geom.mesh_error
        assert geom.mesh is not None and Path(geom.mesh).resolve() == target.resolve()


def test_package_uri_through_package_dir(
    package_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ROS_PACKAGE_PATH entry that is the package folder itself."""
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(package_tree))
    model = mb_sim.load_urdf(mesh_robot(f"package://{PKG}/meshes/part.stl"))
    _expect_resolved(model, package_tree / "meshes" / "part.stl")


def test_package_uri_through_folder_of_packages(
    package_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ROS_PACKAGE_PATH entry that holds packages (several entries, the second matches)."""
    other = package_tree.parent.parent / "elsewhere"
    other.mkdir()
    monkeypatch.setenv("ROS_PACKAGE_PATH", f"{other}:{package_tree.parent}")
    model = mb_sim.load_urdf(mesh_robot(f"package://{PKG}/meshes/part.stl"))
    _expect_resolved(model, package_tree / "meshes" / "part.stl")


def test_package_uri_through_package_dirs_argument(package_tree: Path) -> None:
    model = mb_sim.load_urdf(
        mesh_robot(f"package://{PKG}/meshes/part.stl"), package_dirs=[package_tree.parent]
    )
    _expect_resolved(model, package_tree / "meshes" / "part.stl")


def test_package_uri_relative_to_urdf_file(package_tree: Path) -> None:
    """No ROS environment: PKG/urdf/robot.urdf finds PKG/meshes/part.stl next to it."""
    path = package_tree / "urdf" / "robot.urdf"
    path.write_text(mesh_robot(f"package://{PKG}/meshes/part.stl"))
    _expect_resolved(mb_sim.load_urdf(path), package_tree / "meshes" / "part.stl")


def test_relative_and_file_uris(package_tree: Path) -> None:
    path = package_tree / "urdf" / "robot.urdf"
    path.write_text(mesh_robot("../meshes/part.stl"))
    _expect_resolved(mb_sim.load_urdf(path), package_tree / "meshes" / "part.stl")
    target = package_tree / "meshes" / "part.stl"
    path.write_text(mesh_robot(f"file://{target}"))
    _expect_resolved(mb_sim.load_urdf(path), target)


def test_unresolvable_uri_is_kept_with_explanation(package_tree: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Loading succeeds (the mesh is not needed yet); the collision geometry says what was
    searched; the visual, only drawn, is dropped with a warning that says the same."""
    path = package_tree / "urdf" / "robot.urdf"
    uri = "package://no_such_pkg/meshes/missing.stl"
    path.write_text(mesh_robot(uri))
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        model = mb_sim.load_urdf(path)
    (geom,) = model.collision_geometries["l1"]
    assert geom.mesh_error is not None
    assert uri in geom.mesh_error
    assert "no_such_pkg" in geom.mesh_error and str(package_tree) in geom.mesh_error
    assert geom.mesh is None or not Path(geom.mesh).is_file()
    assert model.visual_geometries["l1"] == ()
    (warning,) = [r.getMessage() for r in caplog.records if "visual" in r.getMessage()]
    assert str(path) in warning and "link 'l1'" in warning and uri in warning
    assert str(package_tree / "meshes" / "missing.stl") in warning


def test_resolve_uri_directly(package_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = (package_tree / "meshes" / "part.stl").resolve()
    uri = f"package://{PKG}/meshes/part.stl"
    path, err = resolve_uri(uri, None, [package_tree.parent])
    assert err is None and Path(path).resolve() == target
    path, err = resolve_uri(uri, package_tree / "urdf", [])
    assert err is None and Path(path).resolve() == target
    path, err = resolve_uri("meshes/part.stl", package_tree, [])
    assert err is None and Path(path).resolve() == target
    missing = package_tree / "nothing"
    path, err = resolve_uri(f"package://{PKG}/meshes/none.stl", missing, [missing])
    assert path is None and err is not None
    assert f"package://{PKG}/meshes/none.stl" in err and str(missing) in err


def test_default_namespace_on_robot() -> None:
    xml = chain().replace('<robot name="r">', '<robot xmlns="http://example.org/urdf" name="r">')
    assert mb_sim.load_urdf(xml).joint_names == ("j1", "j2")


def test_model_layer_does_not_import_the_dynamics() -> None:
    """The "moves no mass" check is done in the model layer (no CRBA import)."""
    import ast

    model = Path(mb_sim.__file__).parent / "model"
    files = [model / n for n in ("urdf.py", "urdf_filter.py", "mass.py")]
    for name in [*files, *sorted((model / "world").glob("*.py"))]:
        tree = ast.parse(name.read_text())
        modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in modules if m.startswith("mb_sim.dynamics")], (name, modules)
