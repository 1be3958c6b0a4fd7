"""The browser page: a viser server drawing a `Scene` and the `Snapshot`s a source hands it.

Scene tree: `/frames/<frame>` is a moving frame (a robot link or a world body) posed in the
world; its shapes hang below it at their fixed offsets, so one pose update moves them all.
`/contacts` holds the contact arrows (yellow) and points (red); `/sensors` the points where
the lidars' rays hit (green) and each camera's frustum (blue). The panel shows simulated
time, achieved RTF and state, the source's buttons (pause, step, reset for a running
simulation; play, speed and a timeline slider for a bag) and a plot of the chosen joints.
Button callbacks run on viser's threads; `show` may be called from any one thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from mb_sim.viewer.history import JointHistory
from mb_sim.viewer.scene import Camera, Scene, Snapshot, Visual, framing_camera

PLOT_SPAN = 10.0
"""Seconds of simulated time the joint plot shows, up to the time shown."""
PLOTTED_AT_START = 3
"""Joints plotted when a scene appears (the first ones; the panel changes the choice)."""
ARROW_COLOR = (255, 217, 26)
POINT_COLOR = (255, 38, 26)
SCAN_COLOR = (40, 200, 60)
FRUSTUM_COLOR = (40, 90, 230)
HEMISPHERE_LIGHT = 2.0
"""Intensity of the sky light (with viser's default directional lights)."""
GROUND_SIZE = 6.0
"""Side of the ground grid, m."""


def _rgb(rgba: tuple[float, ...]) -> tuple[int, int, int]:
    return (round(255 * rgba[0]), round(255 * rgba[1]), round(255 * rgba[2]))


def _wxyz(quat_xyzw: Any) -> tuple[float, float, float, float]:
    x, y, z, w = (float(v) for v in quat_xyzw)
    return (w, x, y, z)


def _node(frame: str) -> str:
    """A scene-tree path for a frame name (viser splits paths at '/')."""
    return "/frames/" + frame.replace("/", "|")


@lru_cache(maxsize=64)
def _mesh(path: str, scale: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray] | None:
    """(vertices, faces) of a mesh file, scaled; None when it cannot be read."""
    from mb_sim.model.mesh import MeshError, load_mesh

    try:
        vertices, faces = load_mesh(path, scale)
    except (MeshError, OSError, ValueError):
        return None
    return np.asarray(vertices, dtype=np.float32), np.asarray(faces, dtype=np.uint32)


@dataclass
class Controls:
    """What the panel's buttons do (None: no such button). pause(True) pauses, pause(False)
    resumes; step() advances while paused; reset() goes back to the start."""

    pause: Callable[[bool], None] | None = None
    step: Callable[[], None] | None = None
    reset: Callable[[], None] | None = None


@dataclass
class Timeline:
    """A bag's time axis: the slider runs from start to end (s); seek(t) shows time t; the
    view plays it at `speed` x wall time while playing."""

    start: float
    end: float
    seek: Callable[[float], None]
    step: float = 0.01


class View:
    """A viser server on host:port (loopback by default: pass host="0.0.0.0" to share)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8080, title: str = "mb_sim",
                 controls: Controls | None = None) -> None:
        import viser

        self.server = viser.ViserServer(host=host, port=port, label=title, verbose=False)
        # Plain lights instead of the image-based environment: a software-rendered page (no
        # GPU) draws its first frame in seconds instead of tens of seconds.
        self.server.scene.configure_environment_map(hdri=None)
        self.server.scene.add_light_hemisphere("/lights/sky", sky_color=(255, 255, 255),
                                               ground_color=(120, 120, 130),
                                               intensity=HEMISPHERE_LIGHT)
        self.url = f"http://{host}:{self.server.get_port()}"
        self._lock = threading.RLock()
        self._scene: Scene | None = None
        self._frames: dict[str, Any] = {}
        self._sent: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {}
        self._arrows = np.zeros((0, 2, 3))
        self._scanned = False
        self._frustums: dict[str, Any] = {}
        self.camera: Camera | None = None
        self._unframed_pages: list[Any] = []
        self.history = JointHistory()
        self._plotted: list[str] = []
        self._plot: Any = None
        self._joint_boxes: dict[str, Any] = {}
        self._last: Snapshot | None = None
        self._paused = False
        self.note = ""
        """A line under the status (e.g. that the node is not heard)."""
        self.record_history = True
        """Whether `show` appends the snapshots' joints to `history` (a bag fills it whole)."""
        self.page_opened: Callable[[Camera], None] | None = None
        """Told the camera a page that connects starts on (the node logs it)."""
        self.server.on_client_connect(self._frame_new_page)
        self.server.on_client_disconnect(self._forget_page)
        gui = self.server.gui
        self._status = gui.add_markdown("waiting for the simulation ...")
        self._controls = controls or Controls()
        self._pause_button = self._step_button = self._reset_button = None
        if self._controls.pause is not None:
            self._pause_button = gui.add_button("Pause")
            self._pause_button.on_click(lambda _e: self._toggle_pause())
        if self._controls.step is not None:
            self._step_button = gui.add_button("Step")
            self._step_button.on_click(lambda _e: self._controls.step())  # type: ignore[misc]
        if self._controls.reset is not None:
            self._reset_button = gui.add_button("Reset")
            self._reset_button.on_click(lambda _e: self._controls.reset())  # type: ignore[misc]
        self._timeline_gui: list[Any] = []
        self._plot_folder = gui.add_folder("Joints plotted", expand_by_default=False)

    # --- panel -------------------------------------------------------------------------------

    def _toggle_pause(self) -> None:
        pause = not self._paused
        self._controls.pause(pause)  # type: ignore[misc]
        self.set_paused(pause)

    def set_paused(self, paused: bool) -> None:
        """The state the pause button shows (its label is what a click does)."""
        self._paused = paused
        if self._pause_button is not None:
            self._pause_button.label = "Resume" if paused else "Pause"

    def add_timeline(self, timeline: Timeline) -> Any:
        """A slider over the bag's time, play/pause and a speed choice. Returns the slider."""
        gui = self.server.gui
        slider = gui.add_slider("Time (s)", min=timeline.start, max=max(timeline.end,
                                timeline.start + timeline.step), step=timeline.step,
                                initial_value=timeline.start)
        play = gui.add_button("Play")
        speed = gui.add_dropdown("Speed", options=("0.25", "0.5", "1", "2", "4"),
                                 initial_value="1")
        player = _Player(slider, play, speed, timeline)
        slider.on_update(lambda _e: timeline.seek(float(slider.value)))
        play.on_click(lambda _e: player.toggle())
        self._timeline_gui = [slider, play, speed, player]
        return slider

    def _make_plot_choice(self, joints: tuple[str, ...]) -> None:
        for box in self._joint_boxes.values():
            box.remove()
        self._joint_boxes = {}
        self._plotted = list(joints[:PLOTTED_AT_START])
        with self._plot_folder:
            for name in joints:
                box = self.server.gui.add_checkbox(name, initial_value=name in self._plotted)
                box.on_update(lambda _e, name=name, box=box: self._choose(name, box.value))
                self._joint_boxes[name] = box
        self._replot()

    def _choose(self, name: str, chosen: bool) -> None:
        with self._lock:
            if chosen and name not in self._plotted:
                self._plotted.append(name)
            elif not chosen and name in self._plotted:
                self._plotted.remove(name)
            self._replot()

    def _replot(self) -> None:
        """A new chart for the chosen joints (the series change), fed by `_update_plot`."""
        from viser import uplot

        if self._plot is not None:
            self._plot.remove()
            self._plot = None
        if not self._plotted:
            return
        series = (uplot.Series(label="t (s)"),
                  *(uplot.Series(label=name, stroke=_PLOT_COLORS[i % len(_PLOT_COLORS)],
                                 width=2)
                    for i, name in enumerate(self._plotted)))
        data = (np.zeros(1), *(np.zeros(1) for _ in self._plotted))
        self._plot = self.server.gui.add_uplot(
            data, series, title="joint positions (rad or m)", aspect=1.6,
            scales={"x": uplot.Scale(time=False)})
        if self._last is not None:
            self._update_plot(self._last.time)

    def _update_plot(self, t: float) -> None:
        if self._plot is None:
            return
        times, values = self.history.window(t - PLOT_SPAN, t, self._plotted)
        if len(times) == 0:
            return
        self._plot.data = (times, *(values[:, i] for i in range(len(self._plotted))))

    # --- scene -------------------------------------------------------------------------------

    def set_scene(self, scene: Scene, joints: tuple[str, ...] = ()) -> None:
        """Draw `scene` (replacing the one drawn); `joints` can be plotted."""
        with self._lock, self.server.atomic():
            for handle in self._frames.values():
                handle.remove()
            self._frames = {}
            self._sent = {}
            self._arrows = np.zeros((0, 2, 3))
            self.camera = None
            add = self.server.scene
            if scene.ground is not None:
                add.add_grid("/ground", width=GROUND_SIZE, height=GROUND_SIZE, cell_size=0.25,
                             section_size=1.0, position=(0.0, 0.0, scene.ground),
                             plane_color=(236, 236, 232), plane_opacity=1.0,
                             shadow_opacity=0.2)
            for frame in scene.frames:
                self._frames[frame] = add.add_frame(_node(frame), show_axes=False,
                                                    visible=False)
            for i, visual in enumerate(scene.visuals):
                if visual.frame in self._frames:
                    self._add_visual(f"{_node(visual.frame)}/shape{i}", visual)
            self._scene = scene
        self._make_plot_choice(joints)

    def _add_visual(self, name: str, v: Visual) -> None:
        add = self.server.scene
        pose = {"position": v.xyz, "wxyz": _wxyz(v.quat_xyzw)}
        color = _rgb(v.rgba)
        opacity = None if v.rgba[3] >= 1.0 else float(v.rgba[3])
        if v.kind == "box":
            add.add_box(name, color=color, dimensions=v.size[:3], opacity=opacity, **pose)
        elif v.kind == "sphere":
            add.add_icosphere(name, radius=v.size[0], color=color, opacity=opacity, **pose)
        elif v.kind == "cylinder":
            add.add_cylinder(name, radius=v.size[0], height=v.size[1], color=color,
                             opacity=opacity, **pose)
        elif v.kind == "capsule":
            import trimesh

            capsule = trimesh.creation.capsule(height=v.size[1], radius=v.size[0])
            add.add_mesh_simple(name, capsule.vertices, capsule.faces, color=color,
                                opacity=opacity, **pose)
        elif v.kind == "mesh" and v.mesh is not None:
            mesh = _mesh(v.mesh, v.scale)
            if mesh is not None:
                add.add_mesh_simple(name, mesh[0], mesh[1], color=color, opacity=opacity,
                                    flat_shading=False, **pose)
        elif v.kind == "heightfield" and v.heights is not None:
            from mb_sim.model.triangles import grid

            vertices, faces = grid(v.heights, (v.size[0], v.size[1], v.size[2]))
            add.add_mesh_simple(name, vertices.astype(np.float32), faces.astype(np.uint32),
                                color=color, opacity=opacity, flat_shading=False, **pose)
        elif v.kind == "triangles" and v.points is not None and len(v.points) >= 3:
            count = len(v.points) // 3
            add.add_mesh_simple(name, v.points[:3 * count].astype(np.float32),
                                np.arange(3 * count, dtype=np.uint32).reshape(-1, 3),
                                color=color, opacity=opacity, flat_shading=False, **pose)

    def _frame_new_page(self, client: Any) -> None:
        """A page that connects starts on the framing camera, set on the page itself (the
        server's initial camera alone can reach a page before its camera is ready, which then
        keeps viser's default); one that connects before the view is framed, once it is.
        Pages already open keep their own."""
        with self._lock:
            if self.camera is None:
                self._unframed_pages.append(client)
            else:
                self._frame_page(client, self.camera)

    def _forget_page(self, client: Any) -> None:
        with self._lock:
            if client in self._unframed_pages:
                self._unframed_pages.remove(client)

    def _frame_page(self, client: Any, camera: Camera) -> None:
        cam = client.camera
        cam.up_direction = (0.0, 0.0, 1.0)
        cam.fov = camera.fov
        cam.position = camera.position  # moves the point looked at along with it
        cam.look_at = camera.look_at
        if self.page_opened is not None:
            self.page_opened(camera)

    def show(self, snap: Snapshot) -> None:
        """Move the frames to the snapshot's poses, draw its contacts, update the panel."""
        with self._lock:
            scene = self._scene
            if scene is None:
                self._status.content = self.note or "waiting for the simulation ..."
                return
            if self.camera is None and all(f in snap.poses for f in scene.frames):
                self.camera = framing_camera(scene, snap.poses)
                cam = self.server.initial_camera
                cam.fov = self.camera.fov
                cam.look_at = self.camera.look_at
                cam.position = self.camera.position
                cam.up = (0.0, 0.0, 1.0)
                for client in self._unframed_pages:
                    self._frame_page(client, self.camera)
                self._unframed_pages = []
            if self.record_history:
                self.history.add(snap.time, snap.joints)
            with self.server.atomic():
                for frame, handle in self._frames.items():
                    pose = snap.poses.get(frame)
                    if pose is None:
                        continue
                    # to 0.01 mm and 1e-6: what did not move is not sent again
                    sent = (tuple(round(float(v), 5) for v in pose[0]),
                            tuple(round(float(v), 6) for v in _wxyz(pose[1])))
                    if self._sent.get(frame) == sent:
                        continue
                    self._sent[frame] = sent
                    handle.position, handle.wxyz = sent
                    if not handle.visible:
                        handle.visible = True
                if not np.array_equal(snap.arrows, self._arrows):
                    self._arrows = snap.arrows
                    self._draw_contacts(snap.arrows)
                self._draw_sensors(snap)
                self._status.content = _status_text(snap) + (
                    f"\n\n{self.note}" if self.note else "")
                if snap.paused is not None and snap.paused != self._paused:
                    self.set_paused(snap.paused)
                self._last = snap
                self._update_plot(snap.time)

    def _draw_contacts(self, arrows: np.ndarray) -> None:
        add = self.server.scene
        if len(arrows) == 0:
            add.add_point_cloud("/contacts/points", np.zeros((0, 3)), POINT_COLOR,
                                visible=False)
            add.add_arrows("/contacts/arrows", np.zeros((0, 2, 3)), ARROW_COLOR, visible=False)
            return
        add.add_point_cloud("/contacts/points", arrows[:, 0].astype(np.float32), POINT_COLOR,
                            point_size=0.015, point_shape="circle")
        add.add_arrows("/contacts/arrows", arrows.astype(np.float32), ARROW_COLOR,
                       shaft_radius=0.003, head_radius=0.008, head_length=0.012)

    def _draw_sensors(self, snap: Snapshot) -> None:
        """The lidars' hit points (green) and the cameras' frustums, when there are any."""
        add = self.server.scene
        if len(snap.scan_points) or self._scanned:
            self._scanned = len(snap.scan_points) > 0
            add.add_point_cloud("/sensors/scan", snap.scan_points.astype(np.float32),
                                SCAN_COLOR, point_size=0.012, point_shape="circle",
                                visible=self._scanned)
        for f in snap.frustums:
            handle = self._frustums.get(f.name)
            if handle is None:
                handle = self._frustums[f.name] = add.add_camera_frustum(
                    f"/sensors/{f.name}", fov=f.fov, aspect=f.aspect, scale=0.15,
                    color=FRUSTUM_COLOR)
            handle.position, handle.wxyz = tuple(f.pose[0]), _wxyz(f.pose[1])

    def close(self) -> None:
        for item in self._timeline_gui:
            if isinstance(item, _Player):
                item.stop()
        self.server.stop()


_PLOT_COLORS = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4",
                "#f032e6", "#9a6324")


def _status_text(snap: Snapshot) -> str:
    rtf = "n/a" if snap.rtf is None else f"{snap.rtf:.2f}"
    state = "" if snap.paused is None else (" · **paused**" if snap.paused else " · running")
    return (f"**sim time** {snap.time:.3f} s · **RTF** {rtf}{state} · "
            f"**contacts** {len(snap.arrows)}")


class _Player:
    """Advances a timeline slider at speed x wall time while playing (its own thread)."""

    PERIOD = 1.0 / 30.0

    def __init__(self, slider: Any, button: Any, speed: Any, timeline: Timeline) -> None:
        self._slider, self._button, self._speed, self._timeline = slider, button, speed, timeline
        self._playing = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="viewer-player", daemon=True)
        self._thread.start()

    def toggle(self) -> None:
        if self._playing.is_set():
            self._playing.clear()
            self._button.label = "Play"
        else:
            if float(self._slider.value) >= self._timeline.end:
                self._slider.value = self._timeline.start
            self._playing.set()
            self._button.label = "Pause"

    def _run(self) -> None:
        import time

        last = time.monotonic()
        while not self._stop.is_set():
            if not self._playing.wait(0.1):
                last = time.monotonic()
                continue
            time.sleep(self.PERIOD)
            if self._stop.is_set():
                return
            now = time.monotonic()
            t = float(self._slider.value) + (now - last) * float(self._speed.value)
            last = now
            if t >= self._timeline.end:
                t = self._timeline.end
                self._playing.clear()
                self._button.label = "Play"
            self._slider.value = t  # its update callback seeks

    def stop(self) -> None:
        self._stop.set()
        self._playing.set()
