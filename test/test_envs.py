"""Gymnasium environments (mb_sim.envs): the API, the physics under them, seeding, batching.

- gymnasium's own checker passes on every registered environment;
- the benchmark objects' free motion is mb_sim.aba on the environment's URDF: RK4 of aba
  gives the environment's velocities (Coulomb friction, where the URDF has it, adds an impulse
  no larger than its bound), and an independent integrator (scipy's DOP853) agrees over 1 s;
- seeded resets and rollouts give the same bits in another process;
- the vector environment (one compiled call for all) gives exactly the single environments'
  observations, rewards, terminations and truncations, autoresets included;
- rewards and terminations as documented (mb_sim.envs.tasks).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.utils.passive_env_checker import env_render_passive_checker

import mb_sim
import mb_sim.envs
from mb_sim.ros.process.paths import data_file

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ("Pendulum", "Acrobot", "ThreeLinkArm", "CartPole", "CartDoublePole",
              "CartTriplePole")


@pytest.mark.parametrize("env_id", mb_sim.envs.IDS)
def test_gymnasium_checker_passes(env_id):
    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)  # "human" needs a browser: below
    env.close()
    picture = gym.make(env_id, render_mode="rgb_array")
    picture.reset(seed=0)
    env_render_passive_checker(picture)
    frame = picture.render()
    assert frame.shape == (320, 320, 3) and frame.dtype == np.uint8
    assert (frame != 255).any()  # something was drawn


def test_human_render_needs_the_viewer(monkeypatch):
    monkeypatch.setitem(sys.modules, "viser", None)  # as if the viewer extra were missing
    with pytest.raises(gym.error.DependencyNotInstalled, match=r"mb_sim\[viewer\]"):
        gym.make("mb_sim/Pendulum-v0", render_mode="human")
    with pytest.raises(ValueError, match="not one of"):
        mb_sim.envs.make_vec("mb_sim/Pendulum-v0", 2, render_mode="ansi")


def _kicked(name, seed, speed):
    """(environment reset with `seed`, then every joint at `speed` so that everything moves;
    the model of its URDF loaded here)."""
    env = gym.make(f"mb_sim/{name}-v0").unwrapped
    env.reset(seed=seed)
    env.sim.set_state(qd=np.full(env.sim.nv, speed))
    return env, mb_sim.load_urdf(str(data_file(env.task.urdf)))


def _rk4_of_aba(model, gravity, q, qd, h):
    """One RK4 step of qdd = aba(q, qd, 0)."""
    def f(q, qd):
        return mb_sim.aba(model, q, qd, np.zeros_like(qd), gravity=gravity)
    k1v, k1a = qd, f(q, qd)
    k2v, k2a = qd + h / 2 * k1a, f(q + h / 2 * k1v, qd + h / 2 * k1a)
    k3v, k3a = qd + h / 2 * k2a, f(q + h / 2 * k2v, qd + h / 2 * k2a)
    k4v, k4a = qd + h * k3a, f(q + h * k3v, qd + h * k3a)
    return (q + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v),
            qd + h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a))


@pytest.mark.parametrize("name", BENCHMARKS)
def test_free_motion_is_aba_of_the_urdf(name):
    """Zero action from a seeded start, one physics step at a time: the velocities are RK4 of
    mb_sim.aba on the URDF loaded here, plus a Coulomb impulse M dqd within +-friction x h
    per joint (zero for the frictionless objects), and the positions move with them."""
    env, model = _kicked(name, seed=11, speed=2.0)
    task, sim = env.task, env.sim
    h = task.dt
    bound = model.friction * h
    q_start = sim.q
    for _ in range(round(0.3 / h)):
        q, qd = sim.q, sim.qd
        q_free, qd_free = _rk4_of_aba(model, task.gravity, q, qd, h)
        sim.set_effort(np.zeros(sim.n_joints))
        sim.step(1)
        impulse = mb_sim.crba(model, q) @ (sim.qd - qd_free)
        assert np.all(np.abs(impulse) <= bound * (1 + 1e-6) + 1e-12), (sim.time, impulse, bound)
        np.testing.assert_allclose(sim.q, q_free + h * (sim.qd - qd_free), rtol=0, atol=1e-12)
    assert np.abs(sim.q - q_start).max() > 0.1  # it moved


@pytest.mark.parametrize("name", ["Pendulum", "Acrobot", "ThreeLinkArm", "CartDoublePole"])
def test_free_motion_matches_an_independent_integrator(name):
    """The frictionless objects over 1 s of environment steps against scipy's DOP853 on
    mb_sim.aba (rtol 1e-10): the difference is RK4's at the environment's dt."""
    from scipy.integrate import solve_ivp

    env, model = _kicked(name, seed=4, speed=1.0)
    task = env.task
    assert not model.friction.any()
    n = model.nv

    def f(t, y):
        return np.concatenate([y[n:], mb_sim.aba(model, y[:n], y[n:], np.zeros(n),
                                                 gravity=task.gravity)])

    steps = round(1.0 / task.control_period)
    path = [np.concatenate([env.sim.q, env.sim.qd])]
    for _ in range(steps):
        env.step(np.zeros(len(task.actuated)))
        path.append(np.concatenate([env.sim.q, env.sim.qd]))
    times = np.arange(steps + 1) * task.control_period
    ref = solve_ivp(f, (0, times[-1]), path[0], t_eval=times, rtol=1e-10, atol=1e-12,
                    method="DOP853").y.T
    np.testing.assert_allclose(np.array(path), ref, rtol=0, atol=1e-5)
    assert np.abs(ref[:, n:]).max() > 0.5


def rollout_digest(env_id: str) -> str:
    """sha256 of a seeded reset and 40 steps of seeded random actions, resets included."""
    env = gym.make(env_id)
    digest = hashlib.sha256()
    obs, _ = env.reset(seed=123)
    env.action_space.seed(7)
    digest.update(obs.tobytes())
    for _ in range(40):
        obs, r, te, tr, _ = env.step(env.action_space.sample())
        digest.update(obs.tobytes() + np.float64(r).tobytes() + bytes([te, tr]))
        if te or tr:
            obs, _ = env.reset()
            digest.update(obs.tobytes())
    return digest.hexdigest()


@pytest.mark.parametrize("env_id", ["mb_sim/CartTriplePole-v0", "mb_sim/ArmReach-v0",
                                    "mb_sim/QuadrupedStand-v0"])
def test_seeded_rollouts_are_identical_across_processes(env_id):
    there = ("import sys; sys.path.insert(0, 'test'); from test_envs import rollout_digest; "
             "print(rollout_digest(sys.argv[1]))")
    out = subprocess.run([sys.executable, "-c", there, env_id], cwd=ROOT, check=True,
                         capture_output=True, text=True, timeout=300)
    assert out.stdout.split()[-1] == rollout_digest(env_id)
    again, _ = gym.make(env_id).reset(seed=123)
    other, _ = gym.make(env_id).reset(seed=124)
    assert np.array_equal(again, gym.make(env_id).reset(seed=123)[0])
    assert not np.array_equal(again, other)


def _rollouts(env_id, n, steps, max_steps, seed, push):
    """The vector environment and n single ones, same seeds and actions: every output."""
    venv = mb_sim.envs.make_vec(env_id, n, max_episode_steps=max_steps)
    singles = [gym.make(env_id, max_episode_steps=max_steps) for _ in range(n)]
    rng = np.random.default_rng(seed)
    size = venv.single_action_space.shape[0]
    vector, single = [venv.reset(seed=seed)[0]], [np.array([e.reset(seed=seed + i)[0]
                                                             for i, e in enumerate(singles)])]
    ended = np.zeros(n, dtype=bool)
    for _ in range(steps):
        a = np.clip(push + rng.uniform(-1, 1, (n, size)), -1, 1).astype(np.float32)
        vector.append(venv.step(a)[:4])
        outs = []
        for i, env in enumerate(singles):
            if ended[i]:  # next-step autoreset: the vector environment ignores the action
                outs.append((env.reset()[0], 0.0, False, False))
            else:
                outs.append(env.step(a[i])[:4])
            ended[i] = outs[-1][2] or outs[-1][3]
        single.append(tuple(np.array(x) for x in zip(*outs, strict=True)))
    return vector, single


@pytest.mark.parametrize("env_id,steps,max_steps,push", [
    ("mb_sim/CartPole-v0", 90, 200, 0.9),        # pushed into the track's end: terminations
    ("mb_sim/CartTriplePole-v0", 40, 15, 0.0),   # truncations
    ("mb_sim/ArmReach-v0", 30, 12, 0.0),         # contacts with the table world
    ("mb_sim/QuadrupedStand-v0", 45, 40, -0.5),  # falls: terminations, floating base, contacts
])
def test_vector_env_gives_exactly_the_single_envs(env_id, steps, max_steps, push):
    vector, single = _rollouts(env_id, 3, steps, max_steps, seed=21, push=push)
    assert np.array_equal(vector[0], single[0])
    ends = 0
    for t, (v, s) in enumerate(zip(vector[1:], single[1:], strict=True)):
        for k, what in enumerate(("observations", "rewards", "terminated", "truncated")):
            assert np.array_equal(v[k], s[k]), f"{env_id} step {t}: {what} differ"
        ends += int(v[2].sum() + v[3].sum())
    assert ends >= 3  # every environment ended an episode at least once and went on


def test_cart_pole_ends_at_the_end_of_its_track():
    env = gym.make("mb_sim/CartPole-v0")
    env.reset(seed=0)
    for step in range(200):
        obs, reward, terminated, _, _ = env.step(np.ones(1, dtype=np.float32))
        if terminated:
            break
    assert terminated and reward == 0.0 and abs(obs[0]) >= 2.4 - 0.005
    assert 10 < step < 100  # about 1 s at 10 N on 1.1 kg: x = a t^2 / 2 = 2.4 m


def test_pendulum_reward_is_the_height_of_its_mass():
    env = gym.make("mb_sim/Pendulum-v0").unwrapped
    obs, _ = env.reset(seed=0)
    assert obs[0] < -0.99  # starts hanging: cos(theta) = -1
    env.sim.set_state(q=[0.0], qd=[0.0])  # upright, at rest
    obs, reward, *_ = env.step(np.zeros(1, dtype=np.float32))
    assert reward == pytest.approx(1.0, abs=1e-6) and obs[0] == pytest.approx(1.0, abs=1e-6)


def test_arm_reach_observes_the_tip_where_the_simulation_puts_it():
    env = gym.make("mb_sim/ArmReach-v0").unwrapped
    obs, _ = env.reset(seed=3)
    for _ in range(3):
        obs, reward, *_ = env.step(env.action_space.sample())
    tip, _ = env.sim.link_pose("tool0")
    np.testing.assert_allclose(obs[14:17], tip, atol=1e-12)
    np.testing.assert_allclose(obs[17:20], env.goal - tip, atol=1e-12)
    assert reward <= -np.linalg.norm(env.goal - tip) + 1e-12


NO_JIT = """
import numpy as np, mb_sim.envs
envs = mb_sim.envs.make_vec("mb_sim/CartPole-v0", 3, max_episode_steps=6)
out = [envs.reset(seed=2)[0]]
for k in range(8):
    out += list(envs.step(np.full((3, 1), 0.5 - 0.2 * k, dtype=np.float32))[:4])
print(np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in out]).tobytes().hex())
"""


def test_vector_env_runs_without_numba():
    """NUMBA_DISABLE_JIT=1: the batch runs as a serial Python loop with the same results."""
    def run(disable: str) -> str:
        env = dict(os.environ, NUMBA_DISABLE_JIT=disable)
        return subprocess.run([sys.executable, "-c", NO_JIT], cwd=ROOT, env=env, check=True,
                              capture_output=True, text=True, timeout=300).stdout.split()[-1]
    compiled, interpreted = run("0"), run("1")
    a, b = (np.frombuffer(bytes.fromhex(x)) for x in (compiled, interpreted))
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_batch_equals_simulations_across_a_workspace_growth():
    """SimBatch against Simulation.step on the contact scene, with copy 1's workspace grown
    (as when its contacts outgrow it) half-way: the same bits before and after."""
    from mb_sim.envs.batch import SimBatch

    model = mb_sim.load_urdf(str(ROOT / "urdf" / "arm.urdf"))
    world = mb_sim.load_world(str(ROOT / "config" / "worlds" / "table.yaml"))
    sims = [mb_sim.Simulation(model, world=world) for _ in range(2)]
    batch = SimBatch(sims[0], 2)
    rng = np.random.default_rng(5)
    for k in range(6):
        if k == 3:
            batch._grow(np.array([1]))
        effort = rng.uniform(-1, 1, (2, 7)) * model.effort_limit
        batch.state.effort[:] = effort
        batch.step([40, 25])
        for i, n in enumerate((40, 25)):
            sims[i].set_effort(effort[i])
            sims[i].step(n)
            assert np.array_equal(batch.state.q[i], sims[i].state.q)
            assert np.array_equal(batch.state.body_pos[i], sims[i].state.body_pos)
    assert len(sims[0].contacts) > 0


def test_share_threads_run_side_by_side_raise_and_end():
    """The batch's threads: each call runs the caller's share and every thread's at the same
    time (each waits for all the others to begin), an error in a thread's share is raised
    by the caller once every share is done, and `close` ends the threads."""
    import threading

    from mb_sim.envs.batch import ShareThreads

    before = set(threading.enumerate())
    threads = ShareThreads(2)
    started = [t for t in threading.enumerate() if t not in before]
    assert len(started) == 2
    met = threading.Barrier(3, timeout=10)
    ran: list[str] = []

    def share(name: str):
        def job() -> None:
            met.wait()  # all three shares under way at once, or it times out
            ran.append(name)
        return job

    for _ in range(3):
        threads.run(share("mine"), [share("a"), share("b")])
    assert sorted(ran) == sorted(["mine", "a", "b"] * 3)

    def bad() -> None:
        raise ValueError("share a failed")

    ran.clear()
    with pytest.raises(ValueError, match="share a failed"):
        threads.run(lambda: ran.append("mine"), [bad, lambda: ran.append("b")])
    assert sorted(ran) == ["b", "mine"]  # the other shares still ran to their end
    threads.close()
    for t in started:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in started)
