"""Gymnasium environments on mb_sim: the benchmark objects of Wawrzyński 2009, the arm, the
quadruped.

    pip install mb_sim[learning]

    import gymnasium as gym
    import mb_sim.envs                    # registers the ids below

    env = gym.make("mb_sim/Pendulum-v0")
    envs = mb_sim.envs.make_vec("mb_sim/Pendulum-v0", num_envs=64)   # one compiled step

| id | object |
| --- | --- |
| mb_sim/Pendulum-v0 | Wawrzyński 2009, sec. 13.1, the single pendulum (Perkins and Barto), swing-up |
| mb_sim/Acrobot-v0 | Wawrzyński 2009, sec. 13.2, the acrobot, torques at both joints, swing-up |
| mb_sim/ThreeLinkArm-v0 | Wawrzyński 2009, sec. 13.3, the three-link arm lifting a weight |
| mb_sim/CartPole-v0 | Wawrzyński 2009, sec. 14.1, the cart-pole (Barto, Sutton and Anderson), swing-up |
| mb_sim/CartDoublePole-v0 | Wawrzyński 2009, sec. 14.2, the double pendulum on a cart (Bogdanov), swing-up |
| mb_sim/CartTriplePole-v0 | Wawrzyński 2009, sec. 14.3, the triple pendulum on a cart (Si and Wang), swing-up |
| mb_sim/ArmReach-v0 | urdf/arm.urdf on config/worlds/table.yaml reaching a target, with contacts |
| mb_sim/QuadrupedStand-v0 | urdf/quadruped.urdf (floating base) standing on config/worlds/flat.yaml |

Observations, actions, rewards and limits of each: `mb_sim.envs.tasks`. The core library
never imports this package.
"""

from __future__ import annotations

try:
    import gymnasium
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError("mb_sim.envs needs gymnasium: pip install mb_sim[learning] (or pip "
                      "install gymnasium)") from e

from mb_sim.envs.env import MbSimEnv
from mb_sim.envs.tasks import TASKS, Task
from mb_sim.envs.vector import MbSimVectorEnv, make_vec

IDS = tuple(f"mb_sim/{name}-v0" for name in TASKS)
"""Every registered environment id."""


def register() -> None:
    """Register every task with gymnasium (done on import; registering again is harmless)."""
    for name, task in TASKS.items():
        env_id = f"mb_sim/{name}-v0"
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(id=env_id, entry_point="mb_sim.envs.env:MbSimEnv",
                           vector_entry_point="mb_sim.envs.vector:MbSimVectorEnv",
                           max_episode_steps=task.max_episode_steps, kwargs={"task": name})


register()

__all__ = ["IDS", "TASKS", "MbSimEnv", "MbSimVectorEnv", "Task", "make_vec", "register"]
