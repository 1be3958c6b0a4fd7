"""ament_python package definition of mb_sim.

`colcon build` and `pip install` both read this file. The share/ files (launch, urdf, config and
the ament index marker) follow the layout `ros2 launch` and `ros2 run` expect; console scripts land
in lib/mb_sim through setup.cfg.
"""

from __future__ import annotations

import os
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "mb_sim"


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
        "trimesh",
        "rosbags",
    ],
    zip_safe=True,
    maintainer="mb_sim maintainers",
    maintainer_email="mb_sim@example.com",
    description="Multibody robot simulator (ABA + impulse-based contacts) with a ROS 2 node",
    license="BSD-3-Clause",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "sim_node = mb_sim.ros.sim_node:main",
            "demo_controller = mb_sim.ros.demo_controller:main",
            "replay = mb_sim.replay:main",
        ],
    },
)
