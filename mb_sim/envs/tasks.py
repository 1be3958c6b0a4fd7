"""The tasks: which robot in which world, what an action drives, what is observed and rewarded.

A `Task` turns a simulation into a reinforcement-learning problem. The same task object serves
the single environment (`mb_sim.envs.env`, over a `mb_sim.Simulation`) and the vector
environment (`mb_sim.envs.vector`, over a `mb_sim.envs.batch.SimBatch`); both call the same
functions below on (n, ...) arrays, n = 1 for a single environment, so the two give the
same bits.

Actions are normalised: a in [-1, 1] per actuated joint, effort = a x the joint's URDF effort
limit (the limit of the report where it gives one). Observations are float64 arrays of the
simulation's state in the kernels' layout (`mb_sim.dynamics.floating`: joints first, then a
floating base's position, quaternion x, y, z, w and twist [omega; v] in base axes).

The six objects of Wawrzyński 2009 Part III (urdf/benchmarks, constants in each file's header) are
swing-up tasks: they start hanging down and are rewarded for the height of the chain's tip,
r = (1 + h / L) / 2 in [0, 1] with L the length of the chain, so r = 1 upright and 0 hanging
straight down (Doya's swing-up reward, the height of the tip, moved into [0, 1] so that ending
an episode early never pays). The report states the objects, constants, torque bounds and the
goal (swing up and stabilise upright, 13 and 14 intro; the cart track |x| <= 2.4 m, 14.1);
rewards, time steps, episode lengths and start states are ours and listed per task.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

import mb_sim
from mb_sim._jit import njit
from mb_sim.dynamics.kinematics import tree_poses
from mb_sim.model.forest import compile_forest, new_tree
from mb_sim.ros.process.paths import data_file
from mb_sim.rotations import quat_from_matrix, quat_to_matrix
from mb_sim.sim.state import State


@dataclass(frozen=True)
class Task:
    """What every environment of one id shares. Subclasses give the observation, reward and
    termination (`evaluate`) and the start state (`start`)."""

    urdf: str
    """Robot description, relative to the package's share directory."""
    actuated: tuple[str, ...]
    """The joints the action drives, in action order."""
    dt: float
    """Physics step, s."""
    substeps: int
    """Physics steps per environment step."""
    max_episode_steps: int
    obs_size: int
    world: str | None = None
    """World file, relative to the share directory (None: the robot alone)."""
    integrator: str = "rk4"
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    floating_base: bool = False
    goal_size: int = 0
    """Numbers drawn per episode besides the state (a target)."""
    noise: float = 0.05
    """Half-width of the uniform noise on the start positions and velocities."""

    @property
    def control_period(self) -> float:
        return self.dt * self.substeps

    def simulation(self) -> mb_sim.Simulation:
        """A new simulation of this task's robot and world, at its start state."""
        model = mb_sim.load_urdf(str(data_file(self.urdf)), floating_base=self.floating_base)
        world = mb_sim.load_world(str(data_file(self.world))) if self.world else None
        return mb_sim.Simulation(model, world=world, dt=self.dt, integrator=self.integrator,
                                 gravity=self.gravity)

    def effort_scale(self, sim: mb_sim.Simulation) -> np.ndarray:
        """(n_joints,) effort per unit action; 0 for joints the action does not drive."""
        scale = np.zeros(sim.n_joints)
        for name in self.actuated:
            i = sim.model.joint_index(name)
            scale[i] = sim.model.effort_limit[i]
        return scale

    def prepare(self, sim: mb_sim.Simulation) -> tuple:
        """What `evaluate` needs to know of the simulation besides its state (its `context`)."""
        return ()

    def start(self, state: State, rng: np.random.Generator) -> np.ndarray:
        """Draw an episode's start into `state` (in place) and return its goal (goal_size
        numbers)."""
        raise NotImplementedError

    def evaluate(self, q: np.ndarray, qd: np.ndarray, action: np.ndarray, goal: np.ndarray,
                 context: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(observations (n, obs_size), rewards (n,), terminated (n,)) of n simulations'
        states after the actions (n, len(actuated)) in [-1, 1]."""
        raise NotImplementedError


# --- the planar chains of Wawrzyński 2009 Part III
# ---------------------------------------------------

TRACK_MARGIN = 0.005
"""m: a cart within this of x_max has reached the end of its track (the URDF's joint limit
at x_max stops it there, a fraction of a millimetre short of x_max)."""


@njit
def _chain_evaluate(q: np.ndarray, qd: np.ndarray, cart: bool, lengths: np.ndarray,
                    from_horizontal: bool, absolute: bool, x_max: float, obs: np.ndarray,
                    reward: np.ndarray, terminated: np.ndarray) -> None:
    """Observations [x, cos a_1, sin a_1, ..., x_d, a_1_d, ...] (x: the cart, when there is
    one) with a_i the report's angles: the joint angles themselves, or (absolute) the link
    angles, sums of the joint angles; reward (1 + h / L) / 2 with h the height of the tip
    above the first joint and L the chain's length; terminated (reward 0) when the cart
    reaches the end of its track, |x| >= x_max - TRACK_MARGIN."""
    first = 1 if cart else 0
    n = q.shape[1] - first
    length = 0.0
    for j in range(n):
        length += lengths[j]
    for e in range(q.shape[0]):
        k = 0
        if cart:
            obs[e, 0] = q[e, 0]
            k = 1
        link, link_rate, height = 0.0, 0.0, 0.0
        for j in range(n):
            link += q[e, first + j]
            link_rate += qd[e, first + j]
            a = link if absolute else q[e, first + j]
            obs[e, k + 2 * j] = math.cos(a)
            obs[e, k + 2 * j + 1] = math.sin(a)
            obs[e, k + 2 * n + j + first] = link_rate if absolute else qd[e, first + j]
            height += lengths[j] * (math.sin(link) if from_horizontal else math.cos(link))
        if cart:
            obs[e, k + 2 * n] = qd[e, 0]
        reward[e] = 0.5 * (1.0 + height / length)
        terminated[e] = cart and abs(q[e, 0]) >= x_max - TRACK_MARGIN
        if terminated[e]:
            reward[e] = 0.0


@dataclass(frozen=True)
class Chain(Task):
    """A planar chain of Wawrzyński 2009 Part III: a pendulum on a fixed joint or on a cart.

    `lengths`: the links' lengths, base to tip; `down`: the start angle of the first joint
    that hangs the chain straight down (the others start at 0); `from_horizontal`: the first
    angle is measured from the horizontal (13.2, 13.3) rather than from the upward vertical;
    `absolute`: the observed angles are the links' angles from the vertical (14.2, 14.3)
    rather than the joint angles; `x_max`: the end of the cart's track (m; 0: no cart)."""

    lengths: tuple[float, ...] = ()
    down: float = math.pi
    from_horizontal: bool = False
    absolute: bool = False
    x_max: float = 0.0

    def start(self, state: State, rng: np.random.Generator) -> np.ndarray:
        n = state.q.shape[0]
        q = rng.uniform(-self.noise, self.noise, n)
        qd = rng.uniform(-self.noise, self.noise, n)
        q[1 if self.x_max else 0] += self.down
        state.q[:] = q
        state.qd[:] = qd
        return np.zeros(0)

    def evaluate(self, q: np.ndarray, qd: np.ndarray, action: np.ndarray, goal: np.ndarray,
                 context: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = q.shape[0]
        obs, reward, terminated = np.empty((n, self.obs_size)), np.empty(n), np.empty(n, bool)
        _chain_evaluate(q, qd, self.x_max > 0, np.asarray(self.lengths), self.from_horizontal,
                        self.absolute, self.x_max, obs, reward, terminated)
        return obs, reward, terminated


def _chain(urdf: str, actuated: tuple[str, ...], lengths: tuple[float, ...], dt: float,
           substeps: int, steps: int, **kw: Any) -> Chain:
    cart = kw.get("x_max", 0.0) > 0
    n = len(lengths)
    return Chain(urdf=f"urdf/benchmarks/{urdf}", actuated=actuated, lengths=lengths, dt=dt,
                 substeps=substeps, max_episode_steps=steps,
                 obs_size=3 * n + (2 if cart else 0), **kw)


PENDULUM = _chain("single_pendulum.urdf", ("joint1",), (1.0,), 0.01, 10, 400,
                  gravity=(0.0, 0.0, -1.0))
"""13.1 (Perkins and Barto): theta_dd = sin theta + tau, tau in [-0.225, 0.225] (action 1 =
0.225), g normalised to 1. theta from the upward vertical. Observation [cos theta, sin theta,
theta_d]. Ours: control period 0.1 s (10 RK4 steps of 0.01 s), 400 steps (40 s: the torque
lifts the mass only after several swings), start theta = pi +- 0.05, theta_d +- 0.05."""

ACROBOT = _chain("acrobot.urdf", ("joint1", "joint2"), (1.0, 1.0), 0.01, 5, 400,
                 down=-math.pi / 2, from_horizontal=True)
"""13.2: torques at both joints, as the report assumes (the "hips" and the "wrist"); theta1
from the horizontal, theta2 relative. Observation [cos theta1, sin theta1, cos theta2, sin
theta2, theta1_d, theta2_d]. The report bounds neither torque: the URDF's 10 N m each (action
1), ours, as are the control period 0.05 s (5 RK4 steps of 0.01 s), 400 steps and the start
theta1 = -pi/2 (hanging) +- 0.05."""

THREE_LINK_ARM = _chain("three_link_arm.urdf", ("joint1", "joint2", "joint3"),
                        (1.0, 1.0, 1.0), 0.01, 5, 400, down=-math.pi / 2,
                        from_horizontal=True)
"""13.3 (Rosenstein and Barto's weightlifting): three torques, unit links, point masses 1, 1
and m = 1.5 kg (the report gives no m; the URDF's choice). Observation as the acrobot's with
three joints; reward for the height of the load. Ours: torques up to 100 N m (the URDF), the
control period 0.05 s, 400 steps, start hanging (theta1 = -pi/2) +- 0.05."""

CART_POLE = _chain("cart_pole.urdf", ("cart_joint",), (1.0,), 0.01, 2, 500, x_max=2.4)
"""14.1 (Barto, Sutton and Anderson; swing-up: Doya): force F in [-10, 10] N on the cart (action
1 = 10 N), m_c = 1, m_p = 0.1, l = 0.5 (pole length 1 m), mu_c, mu_p as the report; the
episode ends (terminated, reward 0) when the cart reaches the end of its track, x_max = 2.4 m (`TRACK_MARGIN`). Observation [x, cos theta,
sin theta, x_d, theta_d], theta from the upward vertical. Ours: control period 0.02 s (the
period of Barto et al.; 2 RK4 steps of 0.01 s), 500 steps (10 s), start theta = pi +- 0.05,
x, x_d, theta_d +- 0.05."""

CART_DOUBLE_POLE = _chain("cart_double_pendulum.urdf", ("cart_joint",), (0.5, 0.75), 0.01, 5,
                          400, x_max=2.5, absolute=True)
"""14.2 (Bogdanov): force u on the cart; theta1, theta2 the links' angles from the upward
vertical (the report's coordinates; the URDF's second joint is theta2 - theta1). Observation
[x, cos theta1, sin theta1, cos theta2, sin theta2, x_d, theta1_d, theta2_d]. The report
bounds neither u nor the track: 20 N (action 1) and |x| <= 2.5 m are the URDF's. Ours: control
period 0.05 s (5 RK4 steps of 0.01 s, as MuJoCo's InvertedDoublePendulum), 400 steps (20 s),
start hanging (theta1 = theta2 = pi) +- 0.05."""

CART_TRIPLE_POLE = _chain("cart_triple_pendulum.urdf", ("cart_joint",), (0.43, 0.33, 0.13),
                          0.005, 4, 500, x_max=1.0, absolute=True, gravity=(0.0, 0.0, -9.8))
"""14.3 (Si and Wang), g = 9.8: the force K_s u on the cart, K_s = 24.7125 N/V; action 1 =
50 N (u = 2.02 V), the URDF's bound, and the track |x| <= 1 m are the model's (the report
bounds neither). Observation [x, cos theta1, sin theta1, ..., cos theta3, sin theta3, x_d,
theta1_d, theta2_d, theta3_d], the links' angles from the upward vertical. Ours: control
period 0.02 s (4 RK4 steps of 0.005 s: the light third link swings fast), 500 steps (10 s),
start hanging +- 0.05."""


# --- the shipped arm reaching over the table ------------------------------------------------

@njit
def _reach_evaluate(q: np.ndarray, qd: np.ndarray, action: np.ndarray, goal: np.ndarray,
                    tree: Any, body: int, offset: np.ndarray, obs: np.ndarray,
                    reward: np.ndarray) -> None:
    """Observations [q, qd, tip, goal - tip]; reward -|goal - tip| - 0.01 |a|^2 / n_a.
    `tree`: the robot alone as a forest record (mb_sim.model.forest), its base placed."""
    n = q.shape[1]
    rot, pos = np.empty((n + 1, 3, 3)), np.empty((n + 1, 3))
    for e in range(q.shape[0]):
        tree_poses(tree, 0, q[e], rot, pos)
        obs[e, :n] = q[e]
        obs[e, n:2 * n] = qd[e]
        distance, effort = 0.0, 0.0
        for r in range(3):
            tip = pos[body, r]
            for c in range(3):
                tip += rot[body, r, c] * offset[c]
            obs[e, 2 * n + r] = tip
            obs[e, 2 * n + 3 + r] = goal[e, r] - tip
            distance += (goal[e, r] - tip) ** 2
        for k in range(action.shape[1]):
            effort += action[e, k] ** 2
        reward[e] = -math.sqrt(distance) - 0.01 * effort / action.shape[1]


@dataclass(frozen=True)
class Reach(Task):
    """Bring the origin of link `tip` to a target drawn per episode in the box `targets`
    (low corner, high corner; world frame, m)."""

    tip: str = "tool0"
    targets: tuple[tuple[float, ...], tuple[float, ...]] = ((0.0,) * 3, (0.0,) * 3)

    def prepare(self, sim: mb_sim.Simulation) -> tuple:
        """The robot alone as a forest record with its fixed base where the simulation has
        it, the tip's body and offset."""
        model = sim.model
        pos, quat = sim.link_pose(model.base_link)
        T_base = np.eye(4)
        T_base[:3, :3] = quat_to_matrix(quat)
        T_base[:3, 3] = pos
        T_base = T_base @ np.linalg.inv(model.link_offset[model.base_link])
        placement = SimpleNamespace(xyz=T_base[:3, 3].copy(),
                                    quat_xyzw=quat_from_matrix(T_base[:3, :3]))
        tree = new_tree(compile_forest([(model, placement)], np.zeros(3)))
        return (tree, model.link_body[self.tip], model.link_offset[self.tip][:3, 3].copy())

    def start(self, state: State, rng: np.random.Generator) -> np.ndarray:
        n = state.q.shape[0]
        state.q[:] += rng.uniform(-self.noise, self.noise, n)
        state.qd[:] = 0.0
        low, high = np.asarray(self.targets[0]), np.asarray(self.targets[1])
        return rng.uniform(low, high)

    def evaluate(self, q: np.ndarray, qd: np.ndarray, action: np.ndarray, goal: np.ndarray,
                 context: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = q.shape[0]
        obs, reward = np.empty((n, self.obs_size)), np.empty(n)
        _reach_evaluate(q, qd, action, goal, *context, obs, reward)
        return obs, reward, np.zeros(n, dtype=bool)



ARM_REACH = Reach(urdf="urdf/arm.urdf", world="config/worlds/table.yaml",
                  actuated=tuple(f"joint{i}" for i in range(1, 8)), dt=0.001, substeps=20,
                  max_episode_steps=250, obs_size=20, integrator="semi_implicit_euler",
                  goal_size=3, targets=((0.45, -0.35, 0.35), (0.8, 0.35, 0.6)))
"""The shipped 7-joint arm on the table world (boxes and a ball on the table): bring `tool0`
to a target drawn over the table, x in [0.45, 0.8], y in [-0.35, 0.35], z in [0.35, 0.6] m
(the top is at 0.30 m, so the hand meets the table, the boxes and the ball on its way).
Action: the seven joint efforts (1 = the URDF limit, 87 or 12 N m). Observation [q (7), qd
(7), tip position (3), target - tip (3)], world frame. Reward -|target - tip| (m) - 0.01 x
the mean squared action. Ours throughout: dt 1 ms (semi-implicit Euler, as the node), control
period 0.02 s, 250 steps (5 s), start at q = 0 +- 0.05 rad."""


# --- the shipped quadruped standing ---------------------------------------------------------

STAND_HEIGHT = 0.29
"""m: the trunk's height standing (hip pitch 0.8, knee -1.6 rad; bench_legged: 0.290)."""


@njit
def _stand_evaluate(q: np.ndarray, qd: np.ndarray, action: np.ndarray, obs: np.ndarray,
                    reward: np.ndarray, terminated: np.ndarray) -> None:
    """Observations [z, quaternion x y z w, v (base axes), omega (base axes), joint q, joint
    qd]; reward height x uprightness - 0.01 |a|^2 / n_a; terminated when the trunk is below
    0.15 m or tilted by more than 60 degrees."""
    n = action.shape[1]
    for e in range(q.shape[0]):
        z = q[e, n + 2]
        qx, qy = q[e, n + 3], q[e, n + 4]
        obs[e, 0] = z
        for k in range(4):
            obs[e, 1 + k] = q[e, n + 3 + k]
        for k in range(3):
            obs[e, 5 + k] = qd[e, n + 3 + k]
            obs[e, 8 + k] = qd[e, n + k]
        obs[e, 11:11 + n] = q[e, :n]
        obs[e, 11 + n:11 + 2 * n] = qd[e, :n]
        up = 1.0 - 2.0 * (qx * qx + qy * qy)  # the trunk's z axis, world z component
        effort = 0.0
        for k in range(n):
            effort += action[e, k] ** 2
        height = min(max(z / STAND_HEIGHT, 0.0), 1.0)
        reward[e] = height * 0.5 * (1.0 + up) - 0.01 * effort / n
        terminated[e] = z < 0.15 or up < 0.5


@dataclass(frozen=True)
class Stand(Task):
    """Stand a floating-base robot on its feet from the world file's pose."""

    def start(self, state: State, rng: np.random.Generator) -> np.ndarray:
        n = len(self.actuated)
        state.q[:n] += rng.uniform(-self.noise, self.noise, n)
        return np.zeros(0)

    def evaluate(self, q: np.ndarray, qd: np.ndarray, action: np.ndarray, goal: np.ndarray,
                 context: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = q.shape[0]
        obs, reward, terminated = np.empty((n, self.obs_size)), np.empty(n), np.empty(n, bool)
        _stand_evaluate(q, qd, action, obs, reward, terminated)
        return obs, reward, terminated


QUADRUPED_JOINTS = tuple(f"{leg}_{j}" for leg in ("fl", "fr", "rl", "rr")
                         for j in ("hip_roll", "hip_pitch", "knee"))

QUADRUPED_STAND = Stand(urdf="urdf/quadruped.urdf", world="config/worlds/flat.yaml",
                        floating_base=True, actuated=QUADRUPED_JOINTS, dt=0.001, substeps=10,
                        max_episode_steps=500, obs_size=35, integrator="semi_implicit_euler")
"""The shipped quadruped (12 joints, floating base) on the flat world: it starts in the world
file's standing pose 2 cm above the ground (joints +- 0.05 rad) and must stay up. Action: the
12 joint efforts (1 = the URDF limit, 23.7 N m at the hips, 35.5 at the knees). Observation
[trunk height, trunk quaternion x y z w, trunk linear velocity (3), angular velocity (3), both
in trunk axes, joint positions (12), joint velocities (12)]. Reward min(z / 0.29, 1) x (1 +
up) / 2 - 0.01 x the mean squared action, up = the world z component of the trunk's z axis;
terminated when the trunk is below 0.15 m or tilted by more than 60 degrees. Ours throughout:
dt 1 ms, control period 0.01 s (the demo PD stands with up to 16 ms of delay), 500 steps (5 s)."""


TASKS: dict[str, Task] = {
    "Pendulum": PENDULUM,
    "Acrobot": ACROBOT,
    "ThreeLinkArm": THREE_LINK_ARM,
    "CartPole": CART_POLE,
    "CartDoublePole": CART_DOUBLE_POLE,
    "CartTriplePole": CART_TRIPLE_POLE,
    "ArmReach": ARM_REACH,
    "QuadrupedStand": QUADRUPED_STAND,
}
"""Every task by the name of its environment id (mb_sim/<name>-v0)."""
