"""A robot read from SDF keeps the names gz-sim gives its sensors and systems
(mb_sim.model.gz_names, docs/sensors.md "Robots from SDF"): topics and frames declared or
gz-sim's defaults, camera_info beside an image, the DiffDrive's topics and frames without a
command timeout, the JointStatePublisher's joints; a URDF's own Gazebo blocks keep mb_sim's
names. And the test robot (test/data/sdf/gz_room) drives on its ball-jointed casters.

The expected names are written out here from gz-sim's and gz-sensors' sources (the table of
mb_sim.model.gz_names), not computed with the module under test.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.model.gazebo import gazebo_blocks
from mb_sim.model.gz_names import valid_topic
from mb_sim.model.world.sdf import spawn_tree

ROOM = Path(__file__).parent / "data" / "sdf" / "gz_room"

WHEEL = ('<link name="{n}"><pose>0 {y} 0.05 -1.5707963267948966 0 0</pose><inertial><mass>0.2'
         "</mass><inertia><ixx>0.00014</ixx><iyy>0.00014</iyy><izz>0.00025</izz></inertia>"
         '</inertial><collision name="c"><geometry><cylinder><radius>0.05</radius><length>0.03'
         '</length></cylinder></geometry></collision></link><joint name="{n}_joint" '
         'type="revolute"><parent>base</parent><child>{n}</child><axis><xyz>0 0 1</xyz></axis>'
         "</joint>")


def bot(sensors: str = "", plugins: str = "", name: str = "bot", nested: str = "") -> str:
    """A model: a base link carrying `sensors` and a frictionless sphere under its front,
    two wheels, `plugins`, a nested model."""
    return (f'<model name="{name}"><link name="base"><pose>0 0 0.08 0 0 0</pose><inertial>'
            "<mass>2</mass><inertia><ixx>0.01</ixx><iyy>0.02</iyy><izz>0.02</izz></inertia>"
            '</inertial><collision name="c"><geometry><box><size>0.3 0.2 0.08</size></box>'
            '</geometry></collision><collision name="skid"><pose>0.12 0 -0.055 0 0 0</pose>'
            "<geometry><sphere><radius>0.025</radius></sphere></geometry><surface><friction>"
            "<ode><mu>0</mu></ode></friction></surface></collision>"
            f"{sensors}</link>{WHEEL.format(n='left', y=0.13)}"
            f"{WHEEL.format(n='right', y=-0.13)}{nested}{plugins}</model>")


def world(body: str, name: str = "w") -> mb_sim.World:
    return mb_sim.load_world(f'<sdf version="1.9"><world name="{name}"><include><uri>'
                             f"model://ground_plane</uri></include>{body}</world></sdf>")


def specs(w: mb_sim.World) -> tuple[mb_sim.Simulation, dict[str, object]]:
    sim = mb_sim.Simulation(world=w, dt=0.001)
    return sim, {n.rsplit("/", 1)[-1]: sim.sensor(n) for n in sim.sensor_names}


LIDAR = ('<sensor name="{n}" type="gpu_lidar">{extra}<lidar><scan><horizontal><samples>8'
         "</samples></horizontal></scan></lidar></sensor>")
CAMERA = ('<sensor name="{n}" type="{t}">{extra}<camera><image><width>16</width><height>12'
          "</height></image></camera></sensor>")


def test_sensors_without_topic_or_frame_take_gz_sims_scoped_names() -> None:
    """gz-sim: /world/<world>/model/<model>/link/<link>/sensor/<sensor> + the kind's suffix;
    gz-sensors: the frame is the scoped name <model>::<link>::<sensor>; the camera_info beside
    the image; a nested model's link is model/<inner>/link/<link>."""
    nested = ('<model name="head"><pose>0 0 0.2 0 0 0</pose><link name="mount"><inertial><mass>'
              "0.1</mass><inertia><ixx>1e-4</ixx><iyy>1e-4</iyy><izz>1e-4</izz></inertia>"
              f"</inertial>{CAMERA.format(n='eye', t='camera', extra='')}</link></model>"
              '<joint name="neck" type="fixed"><parent>base</parent><child>head::mount</child>'
              "</joint>")
    sensors = (LIDAR.format(n="lidar", extra="") + '<sensor name="imu" type="imu"/>'
               + CAMERA.format(n="depth", t="depth_camera", extra="")
               + CAMERA.format(n="rgbd", t="rgbd_camera", extra=""))
    _, got = specs(world(bot(sensors, nested=nested), name="my world"))
    scope = "/world/my_world/model/bot/link/base/sensor"  # a space becomes _ (gz-transport)
    assert dict(got["lidar"].ros_topics) == {"scan": f"{scope}/lidar/scan",
                                             "points": f"{scope}/lidar/scan/points"}
    assert got["lidar"].frame_id == "bot::base::lidar" and got["lidar"].naming == "gz"
    assert dict(got["imu"].ros_topics) == {"imu": f"{scope}/imu/imu"}
    assert dict(got["depth"].ros_topics) == {
        "image": f"{scope}/depth/depth_image", "info": f"{scope}/depth/camera_info",
        "points": f"{scope}/depth/depth_image/points"}
    assert dict(got["rgbd"].ros_topics) == {"image": f"{scope}/rgbd/image",
                                            "info": f"{scope}/rgbd/camera_info"}
    assert dict(got["rgbd_depth"].ros_topics) == {"image": f"{scope}/rgbd/depth_image",
                                                  "points": f"{scope}/rgbd/points"}
    assert got["rgbd"].frame_id == got["rgbd_depth"].frame_id == "bot::base::rgbd"
    eye = "/world/my_world/model/bot/model/head/link/mount/sensor/eye"
    assert dict(got["eye"].ros_topics) == {"image": f"{eye}/image",
                                           "info": f"{eye}/camera_info"}
    assert got["eye"].frame_id == "bot::head::mount::eye"


def test_declared_topics_and_frames_are_kept_absolute() -> None:
    """<topic> as gz-transport takes it (relative is absolute); <frame_id> before
    <gz_frame_id>; a camera's <optical_frame_id> first; <camera_info_topic> wins for a camera;
    the camera_info of an image topic is its sibling."""
    sensors = (LIDAR.format(n="lidar", extra="<topic>robot1/scan</topic><frame_id>base_scan"
                            "</frame_id><gz_frame_id>ignored</gz_frame_id>")
               + CAMERA.format(n="cam", t="camera", extra="<topic>/front/image_raw</topic>"
                               "<gz_frame_id>cam_link</gz_frame_id>")
               + CAMERA.format(n="cam2", t="camera", extra="<topic>top</topic>").replace(
                   "<camera>", "<camera><optical_frame_id>top_optical</optical_frame_id>"
                   "<camera_info_topic>top_info</camera_info_topic>")
               + '<sensor name="imu" type="imu"><topic>imu data</topic></sensor>')
    _, got = specs(world(bot(sensors)))
    assert dict(got["lidar"].ros_topics) == {"scan": "/robot1/scan",
                                             "points": "/robot1/scan/points"}
    assert got["lidar"].frame_id == "base_scan"
    assert dict(got["cam"].ros_topics) == {"image": "/front/image_raw",
                                           "info": "/front/camera_info"}
    assert got["cam"].frame_id == "cam_link"
    assert dict(got["cam2"].ros_topics) == {"image": "/top", "info": "/top_info"}
    assert got["cam2"].frame_id == "top_optical"
    assert dict(got["imu"].ros_topics) == {"imu": "/imu_data"}
    assert [valid_topic(t) for t in ("a//b", "@x~y", "a:=b", "/c d")] == \
        ["/ab", "/xy", "/ab", "/c_d"]


DRIVE = ('<plugin filename="gz-sim-diff-drive-system" name="gz::sim::systems::DiffDrive">'
         "<left_joint>left_joint</left_joint><right_joint>right_joint</right_joint>"
         "<wheel_separation>0.26</wheel_separation><wheel_radius>0.05</wheel_radius>"
         "{extra}</plugin>")
JSP = ('<plugin filename="gz-sim-joint-state-publisher-system" '
       'name="gz::sim::systems::JointStatePublisher">{extra}</plugin>')


def test_the_drive_and_joint_state_publisher_take_gz_sims_defaults() -> None:
    """DiffDrive: /model/<m>/cmd_vel, /model/<m>/odometry, /model/<m>/tf, frames <m>/odom and
    <m>/<canonical link>, 50 Hz; no command timeout (gz keeps the last command).
    JointStatePublisher: /world/<w>/model/<m>/joint_state, every joint, every step."""
    sim = mb_sim.Simulation(world=world(bot(plugins=DRIVE.format(extra="") + JSP.format(
        extra="")), name="w"), dt=0.001)
    drive = sim.drives["bot"]
    spec = drive.spec
    assert (spec.command_topic, spec.odom_topic, spec.tf_topic) == \
        ("/model/bot/cmd_vel", "/model/bot/odometry", "/model/bot/tf")
    assert (spec.odom_frame, spec.base_frame, spec.odom_rate) == ("bot/odom", "bot/base", 50.0)
    assert spec.naming == "gz" and spec.timeout == math.inf
    (jsp,) = sim.gazebo["bot"].joint_state_publishers
    assert (jsp.topic, jsp.joints, jsp.rate) == ("/world/w/model/bot/joint_state", (), 0.0)
    sim.step(100)
    drive.command(0.2, 0.0, sim.time)
    sim.step(1500)  # 1.5 s: three times mb_sim's own 0.5 s timeout
    assert drive.timed_out(sim.time) is False
    assert sim.robot("bot").base_velocity()[0][0] == pytest.approx(0.2, abs=0.01)


def test_declared_drive_and_joint_state_names_and_joints(caplog) -> None:
    """The declared elements win; the joint state publisher's joints as listed, the robot's
    joints it has no one-number state of left out with a warning naming them."""
    drive = DRIVE.format(extra="<topic>cmd</topic><odom_topic>/odom</odom_topic><tf_topic>tf"
                         "</tf_topic><frame_id>odom</frame_id><child_frame_id>base"
                         "</child_frame_id><odom_publish_frequency>30"
                         "</odom_publish_frequency>")
    jsp = JSP.format(extra="<joint_name>right_joint</joint_name><joint_name>nope</joint_name>"
                     "<topic>joint_states</topic><update_rate>20</update_rate>")
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        sim = mb_sim.Simulation(world=world(bot(plugins=drive + jsp)), dt=0.001)
    spec = sim.drives["bot"].spec
    assert (spec.command_topic, spec.odom_topic, spec.tf_topic, spec.odom_frame,
            spec.base_frame, spec.odom_rate) == ("/cmd", "/odom", "/tf", "odom", "base", 30.0)
    (jsp_spec,) = sim.gazebo["bot"].joint_state_publishers
    assert (jsp_spec.joints, jsp_spec.topic, jsp_spec.rate) == \
        (("right_joint",), "/joint_states", 20.0)
    assert any("'nope'" in r.getMessage() and "not published" in r.getMessage()
               for r in caplog.records)


def test_turtlebot3s_odom_publisher_frequency_is_read_and_said(caplog) -> None:
    """TurtleBot3's models write <odom_publisher_frequency>, a name gz-sim does not read (it
    then publishes at 50 Hz): mb_sim takes the rate the author meant, and says so."""
    drive = DRIVE.format(extra="<odom_publisher_frequency>30</odom_publisher_frequency>")
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        sim = mb_sim.Simulation(world=world(bot(plugins=drive)), dt=0.001)
    assert sim.drives["bot"].spec.odom_rate == 30.0
    assert any("<odom_publisher_frequency> 30 read as <odom_publish_frequency>" in
               r.getMessage() for r in caplog.records)


def test_gazebo_classic_ros_plugins_in_sdf_keep_their_own_names() -> None:
    """A Gazebo Classic model (gazebo_ros plugins) names its ROS topics itself (`<ros>`
    remappings, `<command_topic>`): those are kept as a URDF's are, not gz-sim's defaults."""
    lidar = ('<sensor name="lidar" type="ray"><ray><scan><horizontal><samples>8</samples>'
             '</horizontal></scan></ray><plugin name="p" filename="libgazebo_ros_ray_sensor.so">'
             "<ros><remapping>~/out:=front_scan</remapping></ros></plugin></sensor>")
    drive = ('<plugin name="d" filename="libgazebo_ros_diff_drive.so"><left_joint>left_joint'
             "</left_joint><right_joint>right_joint</right_joint><wheel_separation>0.26"
             "</wheel_separation><wheel_diameter>0.1</wheel_diameter><command_topic>cmd"
             "</command_topic></plugin>")
    sim, got = specs(world(bot(lidar, drive)))
    assert got["lidar"].naming == "mb_sim" and got["lidar"].topic == "front_scan"
    spec = sim.drives["bot"].spec
    assert (spec.naming, spec.command_topic, spec.timeout, spec.wheel_radius) == \
        ("mb_sim", "cmd", 0.5, 0.05)


def test_a_urdfs_own_gazebo_blocks_keep_mb_sims_names() -> None:
    """Without the gz names block, a URDF's sensors and drive read as before: mb_sim's
    topic (the kind's name replaced), the 0.5 s timeout, no joint state publisher."""
    urdf = (REPO_URDF := Path(__file__).resolve().parents[1] / "urdf" / "nav_bot.urdf"
            ).read_text()
    model = mb_sim.load_urdf(str(REPO_URDF), floating_base=True)
    blocks = gazebo_blocks(urdf, "nav_bot.urdf", model.joint_names)
    assert blocks.naming == "mb_sim" and blocks.joint_state_publishers == ()
    assert {s.naming for s in blocks.sensors} == {"mb_sim"}
    assert all(not s.ros_topics for s in blocks.sensors)
    assert blocks.drive is not None and blocks.drive.timeout == 0.5
    assert blocks.drive.naming == "mb_sim" and blocks.drive.command_topic == "cmd_vel"


def test_a_spawned_model_is_named_after_its_spawn_name_and_the_world() -> None:
    """gz's create -name: the spawned name replaces the model's in gz-sim's defaults, the
    world is the simulation's; the model frame stands at the origin."""
    text = (f'<sdf version="1.9">{bot(LIDAR.format(n="lidar", extra=""), DRIVE.format(extra=""))}'
            "</sdf>").replace('<model name="bot">', '<model name="bot"><pose>5 5 1 0 0 0</pose>')
    placed = spawn_tree(text, "<resource_string>", ".", name="rover", world_name="room")
    assert placed is not None and placed.name == "rover" and placed.floating
    np.testing.assert_allclose(placed.xyz, [0.0, 0.0, 0.08])
    model = mb_sim.load_urdf(placed.urdf, floating_base=True)
    blocks = gazebo_blocks(placed.urdf, "rover", model.joint_names)
    (lidar,) = blocks.sensors
    assert dict(lidar.ros_topics)["scan"] == \
        "/world/room/model/rover/link/base/sensor/lidar/scan"
    assert lidar.frame_id == "rover::base::lidar"
    assert blocks.drive is not None and blocks.drive.command_topic == "/model/rover/cmd_vel"
    one_body = ('<sdf version="1.9"><model name="box"><link name="l"><collision name="c">'
                "<geometry><box><size>1 1 1</size></box></geometry></collision></link></model>"
                "</sdf>")
    assert spawn_tree(one_body, "<resource_string>", ".") is None


def test_the_test_robot_drives_straight_on_its_ball_casters() -> None:
    """gz_bot in its room (the ROS tests' robot): 0.2 m/s for 2 s drives it 0.35-0.42 m
    straight ahead (the wheels spin up, then stop), the casters roll on ball joints, nothing
    tips; its lidar sees the east wall 2.5 m from the start, less the distance driven."""
    w = mb_sim.load_world(ROOM / "room.sdf")
    assert w.name == "room"
    sim = mb_sim.Simulation(world=w, dt=0.001)
    robot = sim.robot("gz_bot")
    assert sorted(robot.model.ball_joints) == ["front_caster_joint", "rear_caster_joint"]
    sim.step(300)
    start, _ = robot.base_pose()
    drive = sim.drives["gz_bot"]
    drive.command(0.2, 0.0, sim.time)
    sim.step(1000)
    names = list(robot.joint_names)
    for caster in ("front_caster_joint", "rear_caster_joint"):  # rolling: |w| = v / r
        spin = robot.joint_velocities[[names.index(f"{caster}_{a}") for a in "xyz"]]
        assert np.linalg.norm(spin) == pytest.approx(0.2 / 0.025, rel=0.05), (caster, spin)
    sim.step(1000)
    drive.command(0.0, 0.0, sim.time)
    sim.step(1000)
    end, quat = robot.base_pose()
    moved = end - start
    assert 0.35 <= moved[0] <= 0.42, moved
    assert abs(moved[1]) < 0.01 and abs(moved[2]) < 0.005, moved
    assert abs(quat[0]) < 0.01 and abs(quat[1]) < 0.01  # level: no roll, no pitch
    ranges = sim.read_sensor("lidar")
    lidar_x = sim.sensor_pose("lidar")[0][0]
    assert ranges[179:181].mean() == pytest.approx(2.5 - lidar_x, abs=0.05)
