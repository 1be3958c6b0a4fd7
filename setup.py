"""ament_python package definition of mb_sim.

`colcon build` and `pip install` both read this file. The share/ files (launch, urdf, config and
the ament index marker) follow the layout `ros2 launch` and `ros2 run` expect; console scripts land
in lib/mb_sim through setup.cfg. `setup.py install` and `develop` (what colcon runs) also compile
the physics kernels of the installed copy, so the first `ros2 launch` after a build starts at once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from glob import glob

from setuptools import find_packages, setup
from setuptools.command.develop import develop
from setuptools.command.install import install

PACKAGE = "mb_sim"


def compile_kernels(where: str) -> None:
    """Compile the physics kernels of the package installed in `where`, so that its first
    simulation starts at once (they are cached in the user's cache, by content, where every
    install of the same code finds them). Never fails the install:
    without it the first run compiles them. MB_SIM_SKIP_KERNELS=1 skips it."""
    if os.environ.get("MB_SIM_SKIP_KERNELS"):
        return
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (where, os.environ.get("PYTHONPATH", "")) if p)}
    env.pop("NUMBA_CACHE_DIR", None)
    with tempfile.TemporaryDirectory() as elsewhere:  # not the source folder's mb_sim
        result = subprocess.run([sys.executable, "-m", "mb_sim.warmup"], cwd=elsewhere,
                                env=env, check=False)
    if result.returncode != 0:
        print("mb_sim: the kernels were not compiled now; the first simulation will compile "
              "them", file=sys.stderr)


class InstallWithKernels(install):
    def run(self) -> None:
        super().run()
        compile_kernels(os.path.abspath(self.install_lib))


class DevelopWithKernels(develop):
    def run(self) -> None:
        super().run()
        if not self.uninstall:
            compile_kernels(os.path.abspath(os.path.dirname(__file__)))


def tree(directory: str) -> list[tuple[str, list[str]]]:
    """(share/mb_sim/<dir>, [files]) for every directory below `directory` that holds files."""
    entries = []
    for root, _dirs, files in sorted(os.walk(directory)):
        paths = sorted(os.path.join(root, f) for f in files if not f.endswith((".pyc", "~")))
        if paths:
            entries.append((os.path.join("share", PACKAGE, root), paths))
    return entries


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", sorted(glob("launch/*.py"))),
        *tree("urdf"),
        *tree("config"),
    ],
    python_requires=">=3.10",
    install_requires=[
        "setuptools",
        "numpy",
        "numba",
        "scipy",
        "urdf-parser-py",
        "transforms3d",
        "pyyaml",
        "jsonschema>=4.10",
        "trimesh",
        "pycollada",
        "xacro",
        "rosbags",
        "pillow",
    ],
    extras_require={
        # the browser view (mb_sim.viewer); trimesh, which it uses for meshes, is required anyway
        "viewer": ["viser>=1.1"],
        # Gymnasium environments and batched stepping (mb_sim.envs)
        "learning": ["gymnasium>=1.0"],
        # sweeps and bag replays on a Ray cluster (mb_sim.sweep); Parquet output
        "scale": ["ray>=2.9", "pyarrow"],
        # convex pieces of concave moving meshes (decompose: true; mb_sim.model.decompose)
        "decompose": ["coacd"],
    },
    zip_safe=True,
    maintainer="mb_sim maintainers",
    maintainer_email="mb_sim@example.com",
    description="Multibody robot simulator (ABA + impulse-based contacts) with a ROS 2 node",
    license="BSD-3-Clause",
    tests_require=["pytest"],
    cmdclass={"install": InstallWithKernels, "develop": DevelopWithKernels},
    entry_points={
        "console_scripts": [
            "sim_node = mb_sim.ros.sim_node:main",
            "demo_controller = mb_sim.ros.demos.demo_controller:main",
            "quadruped_controller = mb_sim.ros.demos.quadruped_controller:main",
            "diff_drive_controller = mb_sim.ros.demos.diff_drive_controller:main",
            "replay = mb_sim.replay:main",
            "viewer = mb_sim.viewer.cli:main",
        ],
    },
)
