"""Write the malformed-input corpus test/data/bad/ and its expected.tsv.

Only what the physics reads is refused: problems in what is only drawn (visuals, colours) are
warnings, tested with the messy corpus (test/test_messy_robots.py)."""
from pathlib import Path

OUT = Path(__file__).parent / "bad"  # run: python test/data/make_bad_corpus.py
expected: list[tuple[str, str]] = []

URDF = """<?xml version="1.0"?>
<robot name="bad">
  <material name="grey"><color rgba="{rgba}"/></material>
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <joint name="j1" type="{j1type}">
    <parent link="base"/><child link="l1"/>
    <origin xyz="{j1xyz}" rpy="{j1rpy}"/>
    <axis xyz="{axis}"/>
    {limit}
    <dynamics damping="{damping}" friction="{friction}"/>
    <calibration rising="{rising}"/>
    <safety_controller soft_lower_limit="-1" soft_upper_limit="1" k_position="10" k_velocity="{kvel}"/>
  </joint>
  <link name="l1">
    <inertial>
      <origin xyz="{comxyz}"/>
      <mass value="{mass}"/>
      <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="0.01" iyz="{iyz}" izz="0.01"/>
    </inertial>
    <visual><origin xyz="0 0 0"/><geometry><sphere radius="0.05"/></geometry></visual>
    <collision><origin xyz="{colxyz}"/><geometry><box size="{box}"/></geometry></collision>
    <collision><geometry><sphere radius="{radius}"/></geometry></collision>
    <collision><geometry><cylinder radius="0.02" length="{length}"/></geometry></collision>
  </link>
  <joint name="j2" type="revolute">
    <parent link="l1"/><child link="l2"/>
    <origin xyz="0 0 0.2"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="2"/>
    {mimic}
  </joint>
  <link name="l2">
    <inertial><mass value="{mass2}"/><inertia ixx="{ixx2}" ixy="0" ixz="0" iyy="{iyy2}" iyz="0" izz="{izz2}"/></inertial>
    <collision><geometry><mesh filename="part.stl" scale="{scale}"/></geometry></collision>
  </link>
</robot>
"""
D = dict(  # noqa: C408 (keyword form reads as the template fields)
    rgba="0.5 0.5 0.5 1", j1type="revolute", j1xyz="0 0 0.1", j1rpy="0 0 0", axis="0 0 1",
         limit='<limit lower="{lower}" upper="{upper}" effort="{effort}" velocity="{velocity}"/>',
         lower="-1", upper="1", effort="10", velocity="2", damping="0.1", friction="0.01",
         rising="0.1", kvel="10", comxyz="0 0 0.05", mass="1", ixx="0.01", iyz="0", colxyz="0 0 0",
         box="0.1 0.1 0.1", radius="0.05", length="0.1", mimic="", mass2="0.5", ixx2="0.01",
         iyy2="0.01", izz2="0.01", scale="1 1 1")


def urdf(name: str, fragment: str, **kw: str) -> None:
    d = {**D, **kw}
    d["limit"] = d["limit"].format(**d)
    (OUT / f"{name}.urdf").write_text(URDF.format(**d))
    expected.append((f"{name}.urdf", fragment))


def raw(name: str, fragment: str, data: bytes | str) -> None:
    path = OUT / name
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    expected.append((name, fragment))


# --- URDF: NaN and inf in every numeric field kind ---
urdf("urdf_nan_joint_origin_xyz", "joint 'j1' <origin>: xyz", j1xyz="0 nan 0.1")
urdf("urdf_inf_joint_origin_rpy", "joint 'j1' <origin>: rpy", j1rpy="0 inf 0")
urdf("urdf_nan_inertial_origin", "link 'l1' <inertial> <origin>: xyz", comxyz="NaN 0 0")
urdf("urdf_nan_mass", "link 'l1' <inertial> <mass>: value", mass="nan")
urdf("urdf_inf_mass", "link 'l1' <inertial> <mass>: value", mass="inf")
urdf("urdf_nan_ixx", "link 'l1' <inertial> <inertia>: ixx", ixx="nan")
urdf("urdf_inf_iyz", "link 'l1' <inertial> <inertia>: iyz", iyz="-inf")
urdf("urdf_nan_axis", "joint 'j1' <axis>: xyz", axis="0 0 nan")
urdf("urdf_nan_limit_lower", "joint 'j1' <limit>: lower", lower="nan")
urdf("urdf_inf_limit_upper", "joint 'j1' <limit>: upper", upper="inf")
urdf("urdf_nan_limit_effort", "joint 'j1' <limit>: effort", effort="nan")
urdf("urdf_inf_limit_velocity", "joint 'j1' <limit>: velocity", velocity="Infinity")
urdf("urdf_nan_damping", "joint 'j1' <dynamics>: damping", damping="nan")
urdf("urdf_inf_friction", "joint 'j1' <dynamics>: friction", friction="inf")
urdf("urdf_nan_mimic", "joint 'j2' <mimic>: multiplier",
     mimic='<mimic joint="j1" multiplier="nan" offset="0"/>')
urdf("urdf_nan_box_size", "link 'l1' <collision> <geometry> <box>: size", box="0.1 nan 0.1")
urdf("urdf_inf_sphere_radius", "link 'l1' <collision> <geometry> <sphere>: radius", radius="inf")
urdf("urdf_nan_cylinder_length", "link 'l1' <collision> <geometry> <cylinder>: length",
     length="nan")
urdf("urdf_nan_mesh_scale", "link 'l2' <collision> <geometry> <mesh>: scale", scale="1 nan 1")
urdf("urdf_nan_collision_origin", "link 'l1' <collision> <origin>: xyz", colxyz="0 0 nan")
urdf("urdf_nan_calibration", "joint 'j1' <calibration>: rising", rising="nan")
urdf("urdf_inf_safety_controller", "joint 'j1' <safety_controller>: k_velocity", kvel="inf")
# --- URDF: extreme and tiny numbers, wrong types and counts ---
urdf("urdf_huge_mass", "link 'l1' <inertial> <mass>: value='1e300'", mass="1e300")
urdf("urdf_huge_origin", "joint 'j1' <origin>: xyz", j1xyz="1e300 0 0")
urdf("urdf_tiny_box", "link 'l1' <collision> <geometry> <box>: size", box="1e-200 0.1 0.1")
urdf("urdf_huge_sphere", "link 'l1' <collision> <geometry> <sphere>: radius", radius="1e30")
urdf("urdf_huge_inertia", "link 'l1' <inertial> <inertia>: ixx", ixx="1e200")
urdf("urdf_negative_mass", "link 'l1' <inertial> <mass>: value='-1'", mass="-1")
urdf("urdf_negative_effort", "joint 'j1' <limit>: effort", effort="-5")
urdf("urdf_text_mass", "link 'l1' <inertial> <mass>: value='heavy'", mass="heavy")
urdf("urdf_xyz_two_numbers", "joint 'j1' <origin>: xyz", j1xyz="1 2")
urdf("urdf_tiny_mesh_scale", "link 'l2' <collision> <geometry> <mesh>: scale",
     scale="1e-300 1 1")
# --- URDF: structure ---
urdf("urdf_revolute_without_limit", "joint 'j1'", limit="")
urdf("urdf_prismatic_without_limit", "joint 'j1'", limit="", j1type="prismatic")
urdf("urdf_unknown_joint_type", "Invalid joint type: hinge", j1type="hinge")
urdf("urdf_zero_axis", "joint 'j1'", axis="0 0 0")
urdf("urdf_limits_reversed", "joint 'j1'", lower="1", upper="-1")
urdf("urdf_massless_leaf", "joint 'j2'", mass2="0", ixx2="0", iyy2="0", izz2="0")
urdf("urdf_gross_inertia", "link 'l2'", ixx2="-1", iyy2="0.01", izz2="0.01")
base = URDF.format(**{**D, "limit": D["limit"].format(**D)})
raw("urdf_duplicate_link.urdf", "'l2'", base.replace("</robot>", '<link name="l2"/></robot>'))
raw("urdf_unknown_parent.urdf", "'nowhere'",
    base.replace('<parent link="l1"/>', '<parent link="nowhere"/>'))
raw("urdf_sphere_without_radius.urdf",
    "link 'l1' <collision> <geometry> <sphere>: the attribute radius is missing",
    base.replace('<collision><geometry><sphere radius="0.05"/>', "<collision><geometry><sphere/>"))
raw("urdf_two_roots.urdf", "'stray'", base.replace("</robot>", '<link name="stray"/></robot>'))
raw("urdf_not_xml_binary.urdf", "UTF-8", bytes(range(256)) * 4)
raw("urdf_yaml_text.urdf", "malformed XML", "robot:\n  name: bad\n  links: [a, b]\n")
raw("urdf_empty.urdf", "malformed XML", "")
raw("urdf_truncated.urdf", "malformed XML", base[: len(base) // 2])
raw("urdf_not_a_robot.urdf", "<robot>", '<?xml version="1.0"?>\n<world name="w"/>\n')
raw("urdf_entity_bomb.urdf", "malformed XML",
    '<?xml version="1.0"?>\n<!DOCTYPE robot [\n <!ENTITY a "aaaaaaaaaa">\n'
    + "".join(f' <!ENTITY {c} "{("&" + p + ";") * 10}">\n' for p, c in zip("abcdefgh", "bcdefghi"))
    + ']>\n<robot name="&i;"><link name="base"/></robot>\n')
raw("urdf_bad_xacro.urdf.xacro", "xacro",
    '<?xml version="1.0"?>\n<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
    '<link name="${undefined_property}"/>\n</robot>\n')

# --- worlds ---
WORLD = """gravity: {gravity}
ground: {{height: {height}, friction: {gfriction}, restitution: {grest}}}
robot:
  xyz: [0, 0, 0]
  rpy: {rrpy}
  initial_positions: {{joint1: {q0}}}
bodies:
  - name: box1
    shape: box
    size: {size}
    mass: {mass}
    xyz: {xyz}
    quat_xyzw: {quat}
    linear_velocity: {lin}
    angular_velocity: {ang}
  - name: ball
    shape: sphere
    size: [0.05]
    density: {density}
    com: {com}
    inertia: {inertia}
    xyz: [0.3, 0, 0.5]
joints:
  - name: hinge
    type: revolute
    parent: world
    child: ball
    anchor: {anchor}
    axis: {jaxis}
    limits: {jlimits}
    friction: {jfriction}
solver: {{iterations: {iterations}, envelope: {envelope}}}
"""
W = dict(  # noqa: C408
    gravity="[0, 0, -9.81]", height="0.0", gfriction="0.8", grest="0.0", rrpy="[0, 0, 0]",
         q0="0.1", size="[0.1, 0.1, 0.1]", mass="0.5", xyz="[0.5, 0, 0.05]",
         quat="[0, 0, 0, 1]", lin="[0, 0, 0]", ang="[0, 0, 0]", density="500",
         com="[0, 0, 0]", inertia="[0.001, 0.001, 0.001]", anchor="[0.3, 0, 0.6]",
         jaxis="[0, 1, 0]", jlimits="[-1, 1]", jfriction="0.5", iterations="30",
         envelope="0.005")


def world(name: str, fragment: str, **kw: str) -> None:
    (OUT / f"{name}.yaml").write_text(WORLD.format(**{**W, **kw}))
    expected.append((f"{name}.yaml", fragment))


for key, path, value in [
    ("gravity", "gravity[2]", "[0, 0, .nan]"),
    ("height", "ground.height", ".inf"),
    ("gfriction", "ground.friction", ".nan"),
    ("grest", "ground.restitution", ".nan"),
    ("rrpy", "robot.rpy[1]", "[0, .inf, 0]"),
    ("q0", "robot.initial_positions.joint1", ".nan"),
    ("size", "bodies[0].size[0]", "[.nan, 0.1, 0.1]"),
    ("mass", "bodies[0].mass", ".inf"),
    ("xyz", "bodies[0].xyz[0]", "[-.inf, 0, 0]"),
    ("quat", "bodies[0].quat_xyzw[3]", "[0, 0, 0, .nan]"),
    ("lin", "bodies[0].linear_velocity[0]", "[.nan, 0, 0]"),
    ("ang", "bodies[0].angular_velocity[2]", "[0, 0, .inf]"),
    ("density", "bodies[1].density", ".nan"),
    ("com", "bodies[1].com[1]", "[0, .nan, 0]"),
    ("inertia", "bodies[1].inertia[0]", "[.nan, 0.001, 0.001]"),
    ("anchor", "joints[0].anchor[2]", "[0, 0, .inf]"),
    ("jaxis", "joints[0].axis[0]", "[.nan, 1, 0]"),
    ("jlimits", "joints[0].limits[1]", "[-1, .inf]"),
    ("jfriction", "joints[0].friction", ".nan"),
    ("envelope", "solver.envelope", ".nan"),
]:
    world(f"world_nonfinite_{path.replace('.', '_').replace('[', '_').replace(']', '')}",
          path + ":", **{key: value})
for key, path, value in [
    ("size", "bodies[0].size[0]", "[1e-200, 0.1, 0.1]"),
    ("size", "bodies[0].size[1]", "[0.1, 1e300, 0.1]"),
    ("mass", "bodies[0].mass", "1e300"),
    ("mass", "bodies[0].mass", "1e-300"),
    ("density", "bodies[1].density", "1e300"),
    ("xyz", "bodies[0].xyz[2]", "[0, 0, 1e300]"),
    ("lin", "bodies[0].linear_velocity[1]", "[0, 1e300, 0]"),
    ("gravity", "gravity[2]", "[0, 0, -1e300]"),
    ("envelope", "solver.envelope", "1e300"),
    ("iterations", "solver.iterations", "1000000000"),
    ("inertia", "bodies[1].inertia", "[1e-300, 1e-300, 1e-300]"),
    ("q0", "robot.initial_positions.joint1", "1e300"),
    ("gravity", "gravity[0]", "[" + "9" * 5000 + ", 0, 0]"),
]:
    tag = "tiny" if "-" in value and "e-" in value else "huge"
    world(f"world_{tag}_{path.replace('.', '_').replace('[', '_').replace(']', '')}",
          path + ":", **{key: value})
world("world_tiny_body_from_density", "bodies[1].density:", density="1e-3")
world("world_size_is_text", "bodies[0].size:", size="big")
world("world_mass_is_list", "bodies[0].mass:", mass="[1, 2]")
world("world_iterations_float", "solver.iterations:", iterations="2.5")
world("world_quat_zero", "bodies[0].quat_xyzw:", quat="[0, 0, 0, 0]")
world("world_axis_two_numbers", "joints[0].axis:", jaxis="[0, 0]")
raw("world_alias_bomb.yaml", "alias",
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi")))
raw("world_one_alias.yaml", "alias", "gravity: &g [0, 0, -9.81]\nsolver: {iterations: 3}\n"
    "bodies:\n  - {name: a, shape: sphere, size: [0.1], xyz: *g}\n")
raw("world_not_yaml_binary.yaml", "UTF-8", bytes(range(256)) * 4)
raw("world_xml_text.yaml", "a URDF goes into a world as `robot: {urdf: file}`", '<robot name="r"><link name="a"/></robot>\n')
raw("world_list_top_level.yaml", "<top level>", "- gravity\n- ground\n")
raw("world_bodies_mapping.yaml", "bodies:", "bodies: {name: a, shape: box}\n")
raw("world_unknown_key.yaml", "bodies[0].sise", "bodies:\n  - {name: a, shape: box, sise: [1, 1, 1]}\n")
raw("world_duplicate_key.yaml", "duplicate key 'gravity'", "gravity: [0, 0, -9.81]\ngravity: [0, 0, 0]\n")
raw("world_tab_indent.yaml", "line 2", "bodies:\n\t- name: a\n")
raw("world_deep_nesting.yaml", "YAML error", "a: " + "[" * 20000 + "]" * 20000 + "\n")
raw("world_static_moving.yaml", "bodies[0].linear_velocity",
    "bodies:\n  - {name: a, shape: box, size: [1, 1, 1], static: true, linear_velocity: [1, 0, 0]}\n")
raw("world_empty.yaml", "empty", "")

(OUT / "expected.tsv").write_text(
    "# file\tfragment the error message must contain (besides the file's path)\n"
    + "".join(f"{f}\t{frag}\n" for f, frag in expected))
print(len(expected), "files")
