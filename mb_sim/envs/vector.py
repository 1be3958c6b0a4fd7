"""`MbSimVectorEnv`: n environments of one task stepped in one compiled call.

    envs = mb_sim.envs.make_vec("mb_sim/CartDoublePole-v0", num_envs=256)
    obs, info = envs.reset(seed=0)
    obs, rewards, terminated, truncated, info = envs.step(envs.action_space.sample())

Gymnasium's vector API with next-step autoreset: the step after an environment ends resets
it (its action is ignored; it returns the new episode's first observation, reward 0). The
simulations live in a `mb_sim.envs.batch.SimBatch`: the actions of all environments become
their efforts in one numpy operation, one compiled call advances every simulation (a numba
prange), one more evaluates the task on the stacked states. Environment i seeded with s + i
gives exactly the bits of `gym.make(id)` reset with seed s + i and given the same actions.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from mb_sim.envs.batch import SimBatch
from mb_sim.envs.env import spaces
from mb_sim.envs.render import Canvas, check_render_mode
from mb_sim.envs.tasks import TASKS, Task


class MbSimVectorEnv(VectorEnv):
    """num_envs environments of one task (by name or object); render_mode None or
    "rgb_array" (a tuple of every environment's side view)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"],
                                          "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, task: str | Task, num_envs: int, max_episode_steps: int | None = None,
                 render_mode: str | None = None):
        self.task = TASKS[task] if isinstance(task, str) else task
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps or self.task.max_episode_steps
        template = self.task.simulation()
        self.batch = SimBatch(template, num_envs)
        self._template = template
        self._initial = template.save_state()
        self._context = self.task.prepare(template)
        scale = self.task.effort_scale(template)
        self._act = np.array([template.model.joint_index(n) for n in self.task.actuated])
        self._scale = scale[self._act]
        self.single_observation_space, self.single_action_space = spaces(self.task)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._rngs: list[np.random.Generator | None] = [None] * num_envs
        self._goal = np.zeros((num_envs, self.task.goal_size))
        self._action = np.zeros((num_envs, len(self.task.actuated)))
        self._elapsed = np.zeros(num_envs, dtype=np.int64)
        self._autoreset = np.zeros(num_envs, dtype=bool)
        self._canvas: Canvas | None = None

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every environment (or those of options["reset_mask"]); seed: an int s seeds
        environment i with s + i, a list one seed per environment."""
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, int):
            seeds = [seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"reset: {len(seeds)} seeds for num_envs = {self.num_envs}")
        mask = np.ones(self.num_envs, dtype=bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"], dtype=bool)
            if mask.shape != (self.num_envs,):
                raise ValueError(f"reset: options['reset_mask'] has shape {mask.shape}, "
                                 f"needs ({self.num_envs},)")
        for i in np.flatnonzero(mask):
            if seeds[i] is not None or self._rngs[i] is None:
                self._rngs[i] = seeding.np_random(seeds[i])[0]
            self._start(i)
        self._autoreset[mask] = False
        obs, _, _ = self._evaluate()
        return obs, {}

    def _start(self, i: int) -> None:
        state = self._initial.copy()
        self._goal[i] = self.task.start(state, self._rngs[i])
        self.batch.set_state(i, state)
        self._action[i] = 0.0
        self._elapsed[i] = 0

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        a = np.asarray(actions, dtype=np.float64).reshape(self.num_envs, -1)
        np.clip(a, -1.0, 1.0, out=self._action)
        restart = self._autoreset
        self.batch.state.effort[:, self._act] = self._action * self._scale
        self.batch.step(np.where(restart, 0, self.task.substeps))
        for i in np.flatnonzero(restart):
            self._start(int(i))
        self._elapsed += ~restart
        obs, reward, terminated = self._evaluate()
        truncated = self._elapsed >= self.max_episode_steps  # as gymnasium's TimeLimit
        reward[restart] = 0.0
        terminated[restart] = False
        truncated[restart] = False
        self._autoreset = terminated | truncated
        return obs, reward, terminated, truncated, {}

    def _evaluate(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        st = self.batch.state
        return self.task.evaluate(st.q, st.qd, self._action, self._goal, self._context)

    def render(self) -> tuple[np.ndarray, ...] | None:
        """Every environment's side view (render_mode "rgb_array")."""
        if self.render_mode != "rgb_array":
            return None
        sim = self._template
        if self._canvas is None:
            self._canvas = Canvas(sim)
        frames = []
        for i in range(self.num_envs):
            sim.restore_state(self.batch.state_of(i))
            frames.append(self._canvas.draw(sim, self._goal[i] if self.task.goal_size == 3
                                            else None))
        return tuple(frames)


def make_vec(env_id: str, num_envs: int, **kwargs: Any) -> MbSimVectorEnv:
    """`gymnasium.make_vec(env_id, num_envs)` with the batched vector environment of mb_sim."""
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                        **kwargs)
