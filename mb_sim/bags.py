"""What a closed rosbag2 bag says of itself: the `custom_data` of its metadata.yaml, where
sim_node keeps the URDF, the world file and the parameters it ran with (mb_sim.ros.recording.recorder)."""

from __future__ import annotations

from pathlib import Path

import yaml


def custom_data(bag: Path) -> dict[str, str] | None:
    """The bag's custom_data (empty when it has none); None when `bag` has no readable
    metadata.yaml (not a rosbag2 bag, or one that was not closed)."""
    try:
        info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    except (OSError, KeyError, TypeError, yaml.YAMLError):
        return None
    return dict(info.get("custom_data") or {})
