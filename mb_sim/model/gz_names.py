"""The names gz-sim gives the topics and frames of a model's sensors and systems, which a
ros_gz bridge keeps in ROS (it bridges a gz topic to the ROS topic of the same name).

Read from the sources of gz-sim (Harmonic, 8.x, and later: `src/Util.cc` scopedName and
topicFromScopedName, `src/rendering/RenderUtil.cc`, `src/systems/imu/Imu.cc`,
`src/systems/diff_drive/DiffDrive.cc`, `src/systems/joint_state_publisher/
JointStatePublisher.cc`), gz-sensors (`src/Sensor.cc`, `src/CameraSensor.cc`,
`src/DepthCameraSensor.cc`, `src/RgbdCameraSensor.cc`, `src/GpuLidarSensor.cc`) and
gz-transport (`TopicUtils::AsValidTopic`):

| what | topic when the SDF names none | frame when the SDF names none |
| --- | --- | --- |
| a sensor | `/world/<world>/model/<model>/link/<link>/sensor/<sensor>` + the kind's suffix (`SENSOR_SUFFIX`) | `<model>::<link>::<sensor>` (the sensor's scoped name) |
| a camera's camera_info | the image topic's last segment replaced: `a/b/image` -> `/a/b/camera_info` (an SDF `<camera_info_topic>` wins) | the image's |
| a depth camera's cloud | `<topic>/points` | the image's |
| an RGB-D camera | `<topic>/image`, `<topic>/depth_image`, `<topic>/points`, `<topic>/camera_info` | |
| a lidar's cloud | `<topic>/points` | the scan's |
| DiffDrive | `/model/<model>/cmd_vel`, `/model/<model>/odometry`, `/model/<model>/tf` | odometry `<model>/odom`, child `<model>/<canonical link>` |
| JointStatePublisher | `/world/<world>/model/<model>/joint_state` | |

A sensor's frame is its `<frame_id>` (SDF 1.11, gz-sensors 9 and later), else its
`<gz_frame_id>` (Harmonic), else its scoped name; a camera's image in Harmonic is in its
`<camera><optical_frame_id>` when it has one. A nested model's link `inner::link` is
`model/<model>/model/inner/link/<link>` in a topic and `<model>::inner::<link>` in a frame.

gz-transport names are absolute: `scan` and `/scan` are the same topic. A name is made valid as
gz-transport makes it (spaces become `_`; `@`, `~`, `//` and `:=` are dropped).
"""

from __future__ import annotations

SENSOR_SUFFIX = {
    "camera": "/image", "depth_camera": "/depth_image", "depth": "/depth_image",
    "rgbd_camera": "", "gpu_lidar": "/scan", "lidar": "/scan", "gpu_ray": "/scan",
    "ray": "/scan", "imu": "/imu"}
"""What gz-sim puts after a sensor's scoped topic when its SDF gives no `<topic>`, by SDF
sensor type (gz-sim's RenderUtil and Imu systems; a `ray` and `gpu_ray` are lidars there)."""
DEFAULT_WORLD = "default"
"""The world's name when the SDF gives none (a lone model spawned into a YAML world)."""


def valid_topic(topic: str) -> str:
    """`topic` as gz-transport takes it: spaces as `_`, `@`, `~`, `//` and `:=` dropped, and
    absolute (a relative gz topic is in the root namespace)."""
    out = topic.replace(" ", "_")
    for dropped in ("@", "~", ":="):
        out = out.replace(dropped, "")
    while "//" in out:
        out = out.replace("//", "")
    return "/" + out.lstrip("/")


def _scopes(model: str, link: str) -> list[str]:
    """The steps from a top-level model to a link: `model/<m>`, nested `model/<n>`, then
    `link/<l>` (a nested model's link is named `inner::link`)."""
    *nested, own = link.split("::")
    return [f"model/{m}" for m in (model, *nested)] + [f"link/{own}"]


def sensor_topic(world: str, model: str, link: str, sensor: str, sdf_type: str) -> str:
    """The topic gz-sim gives a sensor without a `<topic>`: its scoped name with prefixes,
    then its kind's suffix (`SENSOR_SUFFIX`)."""
    steps = [f"world/{world}", *_scopes(model, link), f"sensor/{sensor}"]
    return valid_topic("/".join(steps) + SENSOR_SUFFIX.get(sdf_type, ""))


def sensor_frame(model: str, link: str, sensor: str) -> str:
    """The frame gz-sensors gives a sensor without a frame id: its scoped name without the
    world, `<model>::<link>::<sensor>`."""
    return f"{model}::{link}::{sensor}"


def camera_info_topic(image_topic: str) -> str:
    """gz-sensors' camera_info topic beside an image topic: its last segment replaced by
    `camera_info` (`/camera/image_raw` -> `/camera/camera_info`, `/image` -> `/camera_info`)."""
    parts = [p for p in image_topic.split("/") if p]
    return "/" + "/".join([*parts[:-1], "camera_info"])


def drive_defaults(model: str, canonical_link: str) -> dict[str, str]:
    """What gz-sim's DiffDrive uses for the elements its SDF leaves out, by element."""
    return {"topic": valid_topic(f"/model/{model}/cmd_vel"),
            "odom_topic": valid_topic(f"/model/{model}/odometry"),
            "tf_topic": valid_topic(f"/model/{model}/tf"),
            "frame_id": f"{model}/odom", "child_frame_id": f"{model}/{canonical_link}"}


def joint_state_topic(world: str, model: str) -> str:
    """The topic of gz-sim's JointStatePublisher without a `<topic>`."""
    return valid_topic(f"/world/{world}/model/{model}/joint_state")


__all__ = ["DEFAULT_WORLD", "SENSOR_SUFFIX", "camera_info_topic", "drive_defaults",
           "joint_state_topic", "sensor_frame", "sensor_topic", "valid_topic"]
