"""`MbSimEnv`: one Gymnasium environment over one `mb_sim.Simulation`.

    import gymnasium as gym, mb_sim.envs
    env = gym.make("mb_sim/Pendulum-v0")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

A step clips the action to [-1, 1], sets the efforts (action x effort limit, `Task`), advances
the simulation by the task's substeps and evaluates the task on the new state. The episode's
start comes from the environment's seeded generator only, so a seeded run gives the same bits
in any process. Truncation after `max_episode_steps` is Gymnasium's TimeLimit (`gym.make`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from mb_sim.envs.render import RENDER_MODES, Canvas, check_render_mode
from mb_sim.envs.tasks import TASKS, Task


def spaces(task: Task) -> tuple[gym.spaces.Box, gym.spaces.Box]:
    """(observation space, action space) of one environment of `task`."""
    observation = gym.spaces.Box(-np.inf, np.inf, (task.obs_size,), np.float64)
    action = gym.spaces.Box(-1.0, 1.0, (len(task.actuated),), np.float32)
    return observation, action


class MbSimEnv(gym.Env):
    """A task of `mb_sim.envs.tasks` (by name or object) as a Gymnasium environment.

    render_mode: None, "rgb_array" (a side view, `mb_sim.envs.render`) or "human" (the
    browser viewer, `mb_sim.viewer`, when it is installed)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": RENDER_MODES, "render_fps": 30}

    def __init__(self, task: str | Task, render_mode: str | None = None):
        self.task = TASKS[task] if isinstance(task, str) else task
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.sim = self.task.simulation()
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.task.control_period)}
        self.observation_space, self.action_space = spaces(self.task)
        self._initial = self.sim.save_state()
        self._context = self.task.prepare(self.sim)
        self._scale = self.task.effort_scale(self.sim)
        self._act = np.array([self.sim.model.joint_index(n) for n in self.task.actuated])
        self._goal = np.zeros(self.task.goal_size)
        self._canvas: Canvas | None = None
        self._viewer: Any = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        state = self._initial.copy()
        self._goal = self.task.start(state, self.np_random)
        self.sim.restore_state(state)
        obs, _, _ = self._evaluate(np.zeros((1, len(self.task.actuated))))
        return obs, {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(1, -1), -1.0, 1.0)
        effort = np.zeros(self.sim.n_joints)
        effort[self._act] = a[0] * self._scale[self._act]
        self.sim.set_effort(effort)
        self.sim.step(self.task.substeps)
        obs, reward, terminated = self._evaluate(a)
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, False, {}

    def _evaluate(self, action: np.ndarray) -> tuple[np.ndarray, float, bool]:
        st = self.sim.state
        obs, reward, terminated = self.task.evaluate(st.q[None], st.qd[None], action,
                                                     self._goal[None], self._context)
        return obs[0], float(reward[0]), bool(terminated[0])

    @property
    def goal(self) -> np.ndarray:
        """The episode's goal (ArmReach: the target's position), empty for the others."""
        return self._goal.copy()

    def render(self) -> np.ndarray | None:
        if self.render_mode == "rgb_array":
            if self._canvas is None:
                self._canvas = Canvas(self.sim)
            return self._canvas.draw(self.sim, self._goal if self.task.goal_size == 3 else None)
        if self.render_mode == "human" and self._viewer is None:
            from mb_sim import viewer

            self._viewer = viewer.show(self.sim)
        return None

    def close(self) -> None:
        viewer, self._viewer = self._viewer, None
        if viewer is not None and hasattr(viewer, "close"):
            viewer.close()
