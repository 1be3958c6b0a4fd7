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
        chain(l1={"ixx": -0.25, "iyy": 1.0, "izz": 1.0}),
        "'l1'",
        ("-0.25", "inertia"),
    ),
    "triangle inequality": (
        chain(l2={"ixx": 0.1, "iyy": 0.1, "izz": 0.5}),
        "'l2'",
        (r"0\.5", "triangle"),
    ),
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
    "planar joint": (
        robot(link("base"), joint("j1", "base", "l1", kind="planar"), link("l1")),
        "'j1'",
        ("planar", "not supported"),
    ),
    "floating joint": (
        robot(link("base"), joint("j1", "base", "l1", kind="floating"), link("l1")),
        "'j1'",
        ("floating", "not supported"),
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
    """mass > 0 with zero inertia (the point masses of 001.md) is a valid link."""
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


def test_unresolvable_uri_is_kept_with_explanation(package_tree: Path) -> None:
    """Loading succeeds (the mesh is not needed yet); the geometry says what was searched."""
    path = package_tree / "urdf" / "robot.urdf"
    uri = "package://no_such_pkg/meshes/missing.stl"
    path.write_text(mesh_robot(uri))
    model = mb_sim.load_urdf(path)
    for geom in _mesh(model):
        assert geom.mesh_error is not None
        assert uri in geom.mesh_error
        assert "no_such_pkg" in geom.mesh_error and str(package_tree) in geom.mesh_error
        assert geom.mesh is None or not Path(geom.mesh).is_file()


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
