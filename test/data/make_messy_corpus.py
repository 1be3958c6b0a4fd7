"""Write the messy-robot corpus test/data/messy/: robot descriptions as people have them, which
load (with the warning or info line each case expects) and simulate; test_messy_robots.py
reads them. Run: python test/data/make_messy_corpus.py

- `assets/arm/arm.urdf`: an asset folder as PyBullet's are written: `package://meshes/...`
  where `meshes` is a folder beside the URDF, not a package.
- `mypkg/urdf/robots/arm.urdf`: a ROS package (package.xml) whose URDF two folders down names
  `package://mypkg/meshes/link.stl`; no ROS environment knows the package. In the same
  package, `urdf/arm.urdf.xacro` includes `$(find mypkg)/urdf/macros.xacro`.
- `ws/src/parts_repo/parts-main/`: the package messy_parts, in a folder not named like it (a
  clone), with a xacro macro and a mesh; `user/arm.urdf.xacro` (outside it) includes it with
  `$(find messy_parts)`: it loads once `package_dirs` names `ws/src`. `launch_description.urdf`: a URDF without
  inertials whose meshes are in messy_parts, given to sim_node as robot_description text.
- `drawn.urdf`: problems in what is only drawn: a zero-radius visual sphere, a visual without
  geometry, a visual mesh that does not exist, a colour with three numbers.
- `bom.urdf`, `bom.srdf`, `bom.urdf.xacro`: a UTF-8 byte-order mark and blank lines before
  `<?xml ...?>` (and, in bom.urdf, blank lines and a NUL after the end).
- `no_inertia.urdf` with `no_inertia_world.yaml`: links without `<inertial>` (as MoveIt's
  descriptions are), repaired by the world file's `robot: {inertia_from_geometry: ...}`.
- `lost_mesh.urdf`: a collision mesh that exists nowhere: still refused.
"""

from pathlib import Path

OUT = Path(__file__).parent / "messy"


def box_obj(x: float, y: float, z: float) -> str:
    """Wavefront OBJ of a box of full extents x, y, z centred on the origin."""
    v = [(sx * x / 2, sy * y / 2, sz * z / 2) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    faces = [(1, 3, 4, 2), (5, 6, 8, 7), (1, 2, 6, 5), (3, 7, 8, 4), (1, 5, 7, 3), (2, 4, 8, 6)]
    lines = [f"v {a:g} {b:g} {c:g}" for a, b, c in v]
    lines += [f"f {a} {b} {c}\nf {a} {c} {d}" for a, b, c, d in faces]
    return "\n".join(lines) + "\n"


def box_stl(x: float, y: float, z: float) -> str:
    """The same box as an ASCII STL."""
    v = [(sx * x / 2, sy * y / 2, sz * z / 2) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    out = ["solid box"]
    for a, b, c, d in faces:
        for tri in ((a, b, c), (a, c, d)):
            out.append("  facet normal 0 0 0\n    outer loop")
            out += [f"      vertex {v[i][0]:g} {v[i][1]:g} {v[i][2]:g}" for i in tri]
            out.append("    endloop\n  endfacet")
    out.append("endsolid box")
    return "\n".join(out) + "\n"


INERTIAL = ('<inertial><origin xyz="0 0 {z}"/><mass value="{m}"/>'
            '<inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{j}"/></inertial>')


def arm(name: str, link1: str, link2: str, inertial: bool = True) -> str:
    """A two-link arm hanging from a fixed base, swinging about y: link1 and link2 hold the
    links' visual and collision elements."""
    i1 = INERTIAL.format(z=-0.15, m=1.0, i=0.0075, j=0.0003) if inertial else ""
    i2 = INERTIAL.format(z=-0.15, m=0.5, i=0.0038, j=0.0002) if inertial else ""
    base = INERTIAL.format(z=0, m=2.0, i=0.01, j=0.01) if inertial else ""
    return f"""<?xml version="1.0"?>
<robot name="{name}">
  <link name="base">{base}
    <collision><geometry><box size="0.1 0.1 0.05"/></geometry></collision>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="link1"/>
    <origin xyz="0 0 -0.05" rpy="0 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="50" velocity="5"/>
    <dynamics damping="0.05"/>
  </joint>
  <link name="link1">{i1}
{link1}
  </link>
  <joint name="elbow" type="revolute">
    <parent link="link1"/><child link="link2"/>
    <origin xyz="0 0 -0.3"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="20" velocity="5"/>
    <dynamics damping="0.05"/>
  </joint>
  <link name="link2">{i2}
{link2}
  </link>
</robot>
"""


def mesh(role: str, uri: str) -> str:
    return (f'    <{role}><origin xyz="0 0 -0.15"/><geometry><mesh filename="{uri}"/></geometry>'
            f'</{role}>')


def write(rel: str, text: str | bytes) -> None:
    path = OUT / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)


PACKAGE_XML = """<?xml version="1.0"?>
<package format="3">
  <name>{name}</name>
  <version>0.0.1</version>
  <description>Test package of mb_sim's messy-robot corpus.</description>
  <maintainer email="nobody@example.com">nobody</maintainer>
  <license>Apache-2.0</license>
</package>
"""

# --- an asset folder written as PyBullet's: package://meshes/... beside the URDF ---
write("assets/arm/meshes/collision/link0.obj", box_obj(0.04, 0.04, 0.3))
write("assets/arm/meshes/visual/link0.obj", box_obj(0.045, 0.045, 0.3))
write("assets/arm/arm.urdf", arm(
    "asset_arm",
    mesh("visual", "package://meshes/visual/link0.obj") + "\n"
    + mesh("collision", "package://meshes/collision/link0.obj"),
    mesh("collision", "package://meshes/collision/link0.obj")))

# --- a ROS package found by walking up from its URDF to its package.xml ---
write("mypkg/package.xml", PACKAGE_XML.format(name="mypkg"))
write("mypkg/meshes/link.stl", box_stl(0.04, 0.04, 0.3))
write("mypkg/urdf/robots/arm.urdf", arm(
    "mypkg_arm",
    mesh("visual", "package://mypkg/meshes/link.stl") + "\n"
    + mesh("collision", "package://mypkg/meshes/link.stl"),
    mesh("collision", "package://mypkg/meshes/link.stl")))

write("mypkg/urdf/macros.xacro", """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="link_mesh">
    <collision><origin xyz="0 0 -0.15"/><geometry>
      <mesh filename="package://mypkg/meshes/link.stl"/></geometry></collision>
  </xacro:macro>
</robot>
""")
write("mypkg/urdf/arm.urdf.xacro", arm("mypkg_xacro_arm", "<xacro:link_mesh/>",
                                       "<xacro:link_mesh/>")
      .replace('<robot name="mypkg_xacro_arm">',
               '<robot name="mypkg_xacro_arm" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
               '  <xacro:include filename="$(find mypkg)/urdf/macros.xacro"/>'))

# --- xacro: $(find messy_parts) from outside the package, found through package_dirs ---
write("ws/src/parts_repo/parts-main/package.xml", PACKAGE_XML.format(name="messy_parts"))
write("ws/src/parts_repo/parts-main/meshes/link.stl", box_stl(0.04, 0.04, 0.3))
write("ws/src/parts_repo/parts-main/urdf/arm.xacro", """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="link_mesh">
    <visual><origin xyz="0 0 -0.15"/><geometry>
      <mesh filename="package://messy_parts/meshes/link.stl"/></geometry></visual>
    <collision><origin xyz="0 0 -0.15"/><geometry>
      <mesh filename="package://messy_parts/meshes/link.stl"/></geometry></collision>
  </xacro:macro>
</robot>
""")
write("user/arm.urdf.xacro", arm("xacro_arm", "<xacro:link_mesh/>", "<xacro:link_mesh/>")
      .replace('<robot name="xacro_arm">',
               '<robot name="xacro_arm" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
               '  <xacro:include filename="$(find messy_parts)/urdf/arm.xacro"/>'))

# --- what a launch file hands sim_node as robot_description: text, no folder, no inertials ---
write("launch_description.urdf", arm("described_arm",
                                     mesh("collision", "package://messy_parts/meshes/link.stl"),
                                     mesh("collision", "package://messy_parts/meshes/link.stl"),
                                     inertial=False))

# --- what is only drawn: each problem drops its visual with a warning ---
write("drawn.urdf", arm(
    "drawn_arm",
    '    <visual><geometry><sphere radius="0"/></geometry></visual>\n'
    '    <visual><origin xyz="0 0 -0.15"/></visual>\n'
    '    <collision><origin xyz="0 0 -0.15"/><geometry><box size="0.04 0.04 0.3"/></geometry>'
    '</collision>',
    '    <visual><geometry><mesh filename="package://nowhere_pkg/meshes/gone.dae"/></geometry>'
    '</visual>\n'
    '    <visual><geometry><box size="0.04 0.04 0.3"/></geometry>'
    '<material name="odd"><color rgba="1 0 0"/></material></visual>\n'
    '    <collision><origin xyz="0 0 -0.15"/><geometry><cylinder radius="0.02" length="0.3"/>'
    '</geometry></collision>'))

# --- a byte-order mark and blank lines before <?xml ...?> ---
BOM = "\ufeff"
plain = arm("bom_arm",
            '    <collision><origin xyz="0 0 -0.15"/><geometry><box size="0.04 0.04 0.3"/>'
            '</geometry></collision>',
            '    <collision><origin xyz="0 0 -0.15"/><geometry><box size="0.04 0.04 0.3"/>'
            '</geometry></collision>')
write("bom.urdf", (BOM + "\n\n  \n" + plain + "\n\n\x00").encode("utf-8"))
write("bom.urdf.xacro", (BOM + "\r\n\r\n" + plain.replace(
    '<robot name="bom_arm">',
    '<robot name="bom_arm" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
    '  <xacro:property name="unused" value="1"/>')).encode("utf-8"))
write("bom.srdf", (BOM + "\n\n" + """<?xml version="1.0"?>
<robot name="bom_arm">
  <disable_collisions link1="base" link2="link2" reason="Never"/>
</robot>
""").encode("utf-8"))

# --- links without <inertial>, repaired by the world file ---
write("no_inertia.urdf", arm("massless_arm",
                             '    <collision><origin xyz="0 0 -0.15"/><geometry>'
                             '<box size="0.04 0.04 0.3"/></geometry></collision>',
                             '    <collision><origin xyz="0 0 -0.15"/><geometry>'
                             '<box size="0.04 0.04 0.3"/></geometry></collision>',
                             inertial=False))
write("no_inertia_world.yaml", """description: The massless arm, its links given mass by the world file.
ground: null
robot: {urdf: no_inertia.urdf, inertia_from_geometry: 1000.0, initial_positions: {shoulder: 0.5}}
""")

# --- a collision mesh that exists nowhere: refused when the simulation needs it ---
write("lost_mesh.urdf", arm("lost_arm",
                            mesh("collision", "package://lost_pkg/meshes/lost.stl"),
                            mesh("collision", "meshes/also_lost.stl")))
print("wrote", sum(1 for p in OUT.rglob("*") if p.is_file()), "files under", OUT)
