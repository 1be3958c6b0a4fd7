"""`show(sim)`: the browser view of a library `Simulation`, updated as the script steps it.

The view wraps the `step` of that one `Simulation` object: after each call, if a frame is due
(at most `fps` a second, the browser's pace), it reads the poses, contacts and joints and hands
them to the page; otherwise it only reads the clock. The page's buttons act on the script:
Pause holds the next `sim.step` call until Resume (or Step, which lets one call through);
Reset calls `sim.reset()` at the next call. `real_time_factor` paces the script to simulated
time = wall time x factor (None: as fast as it steps). `update()` shows the state at once (after
the last step of a script, or a `set_state`); `close()` puts `step` back. Contact arrows are
ARROW_PER_NEWTON long per newton of normal force, as sim_node's markers at its defaults.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from mb_sim.viewer.scene import Snapshot, contact_arrows, library_scene, sensor_overlays
from mb_sim.viewer.view import Controls, View

FPS = 30.0
"""Most frames a second sent to the browser."""
ARROW_PER_NEWTON = 0.01
"""Contact arrow length per newton of normal force (impulse / dt), m/N: sim_node's default
contact_marker_scale (10 m / (N s)) at its default 1 kHz."""
RTF_WINDOW = 1.0
"""Wall seconds over which the achieved real-time factor is measured."""


class LiveView:
    """The view of one `Simulation` (see the module docstring). `url` is the page's address."""

    def __init__(self, sim: Any, host: str = "127.0.0.1", port: int = 8080, fps: float = FPS,
                 real_time_factor: float | None = None) -> None:
        if real_time_factor is not None and not real_time_factor > 0:
            raise ValueError(f"real_time_factor must be > 0 or None, got {real_time_factor!r}")
        if not fps > 0:
            raise ValueError(f"fps must be > 0, got {fps!r}")
        self.sim = sim
        self.period = 1.0 / fps
        self.real_time_factor = real_time_factor
        self.contact_scale = ARROW_PER_NEWTON / sim.dt
        """Arrow length per normal impulse, m / (N s)."""
        self._paused = False
        self._steps_allowed = 0
        self._reset_due = False
        self._wake = threading.Condition()
        self.view = View(host, port, title=f"mb_sim: {_name(sim)}",
                         controls=Controls(self._pause, self._step_once, self._reset))
        self.url = self.view.url
        self.view.set_scene(library_scene(sim.model, sim.world), tuple(sim.joint_names))
        self._next_frame = 0.0
        self._rate_mark = (time.monotonic(), sim.time)
        self._rtf: float | None = None
        self._anchor = (time.monotonic(), sim.time)
        self._sim_step = sim.step  # the class's bound method; detach() puts it back
        self.attach()
        self.update()

    def attach(self) -> None:
        """Follow `sim.step` (show does this)."""
        self.sim.step = self._stepped

    def detach(self) -> None:
        """Give the simulation its own `step` back (the page stays, still)."""
        if self.sim.__dict__.get("step") == self._stepped:
            del self.sim.step

    # --- the wrapped step --------------------------------------------------------------------

    def _stepped(self, n: int = 1) -> None:
        if self._paused or self._reset_due:
            self._hold()
        self._sim_step(n)
        if self.real_time_factor is not None:
            self._pace()
        now = time.monotonic()
        if now >= self._next_frame:
            self._next_frame = now + self.period
            self.update(now)

    def _hold(self) -> None:
        """Wait while paused (a Step lets one call through); do a reset that is due. The
        script's thread: the only one that reads or changes the simulation."""
        shown = False
        with self._wake:
            while True:
                if self._reset_due:
                    self._reset_due = False
                    self.sim.reset()
                    self._anchor = self._rate_mark = (time.monotonic(), self.sim.time)
                    shown = False
                if not self._paused:
                    return
                if self._steps_allowed > 0:
                    self._steps_allowed -= 1
                    self._next_frame = 0.0  # show the step
                    return
                if not shown:
                    self.update()
                    shown = True
                self._wake.wait(0.1)

    def _pace(self) -> None:
        wall0, sim0 = self._anchor
        ahead = wall0 + (self.sim.time - sim0) / self.real_time_factor - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
        elif ahead < -0.2:  # fell behind (a slow step, a pause): do not race to catch up
            self._anchor = (time.monotonic(), self.sim.time)

    # --- the page's buttons (viser's threads) ------------------------------------------------

    def _pause(self, pause: bool) -> None:
        with self._wake:
            self._paused = pause
            if not pause:
                self._anchor = self._rate_mark = (time.monotonic(), self.sim.time)
            self._wake.notify_all()

    def _step_once(self) -> None:
        with self._wake:
            self._steps_allowed += 1
            self._wake.notify_all()

    def _reset(self) -> None:
        with self._wake:
            self._reset_due = True
            self._wake.notify_all()

    # --- frames ------------------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        return self._paused

    def update(self, now: float | None = None) -> None:
        """Send the simulation's current state to the page now (the wrapped step does this
        at most `fps` times a second)."""
        sim = self.sim
        now = time.monotonic() if now is None else now
        wall0, sim0 = self._rate_mark
        if now - wall0 >= RTF_WINDOW:
            self._rtf = (sim.time - sim0) / (now - wall0) if not self._paused else None
            self._rate_mark = (now, sim.time)
        poses = sim.link_poses() if sim.model is not None else {}
        for name in sim.body_names:
            poses[name] = sim.body_pose(name)
        c = sim.contacts
        arrows = contact_arrows(c.points, c.normals, c.impulses, self.contact_scale)
        joints = dict(zip(sim.joint_names, (float(v) for v in sim.joint_positions),
                          strict=True))
        points, frustums = sensor_overlays(sim)
        self.view.show(Snapshot(sim.time, poses, arrows, joints, self._rtf, self._paused,
                                points, frustums))

    def close(self) -> None:
        """Stop the server and give the simulation its own `step` back."""
        self.detach()
        with self._wake:
            self._paused = False
            self._wake.notify_all()
        self.view.close()


def _name(sim: Any) -> str:
    return sim.model.name if sim.model is not None else "world"


def show(sim: Any, host: str = "127.0.0.1", port: int = 8080, *, fps: float = FPS,
         real_time_factor: float | None = None) -> LiveView:
    """Serve the view of `sim` on http://host:port and follow it as the script steps it.

    host: the address to bind, 127.0.0.1 (this machine only) unless given; fps: most frames a
    second; real_time_factor: pace `sim.step` to that multiple of wall time (None: no pacing).
    Returns the `LiveView` (`.url`, `.update()`, `.close()`)."""
    return LiveView(sim, host, port, fps=fps, real_time_factor=real_time_factor)
