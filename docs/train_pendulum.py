"""Swing up the pendulum of Wawrzyński 2009, sec. 13.1 with the cross-entropy method, in numpy.

    .venv/bin/python docs/train_pendulum.py [--iterations 40] [--plot docs/learning_curve.png]

The policy is a small neural network (5 inputs: cos theta, sin theta, theta_d, the energy
above the upright rest and its product with theta_d; 8 tanh units; 1 tanh output = the
normalised torque). Each iteration draws a population of parameter vectors
from a Gaussian, runs one episode of each on `mb_sim/Pendulum-v0` (all in one vector
environment, the same start for everyone), keeps the best fifth and fits the Gaussian to them.
Prints the mean return (mean reward per step, 1 = upright all the time) of the population and
of the mean policy per iteration, then how the learned policy swings up in a single
environment; --plot saves the learning curve and that episode.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import mb_sim.envs

HIDDEN = 8
SIZES = ((5, HIDDEN), (HIDDEN,), (HIDDEN, 1), (1,))
N_PARAMS = sum(int(np.prod(s)) for s in SIZES)


def features(obs: np.ndarray) -> np.ndarray:
    """cos theta, sin theta, theta_d, the energy above the upright rest E - 1 (E = theta_d^2 / 2
    + cos theta: unit mass, length and gravity, Wawrzyński 2009, sec. 13.1) and theta_d (E - 1), the
    direction in which a torque adds energy."""
    energy = 0.5 * obs[:, 2] ** 2 + obs[:, 0] - 1.0
    return np.column_stack([obs, energy, obs[:, 2] * energy])


def act(params: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """Actions (n, 1) of n parameter vectors (n, N_PARAMS) on n observations (n, 3)."""
    x = features(obs)
    parts, k = [], 0
    for shape in SIZES:
        size = int(np.prod(shape))
        parts.append(params[:, k:k + size].reshape(-1, *shape))
        k += size
    w1, b1, w2, b2 = parts
    hidden = np.tanh(np.einsum("ni,nij->nj", x, w1) + b1)
    return np.tanh(np.einsum("ni,nij->nj", hidden, w2) + b2)


def episode_returns(envs: mb_sim.envs.MbSimVectorEnv, params: np.ndarray, seed: int,
                    ) -> np.ndarray:
    """Mean reward per step of one whole episode per parameter vector, all from one start."""
    obs, _ = envs.reset(seed=[seed] * envs.num_envs)
    total = np.zeros(envs.num_envs)
    steps = envs.max_episode_steps
    for _ in range(steps):
        obs, reward, *_ = envs.step(act(params, obs).astype(np.float32))
        total += reward
    return total / steps


def train(iterations: int, population: int = 64, elite: float = 0.2, seed: int = 0,
          ) -> tuple[list[tuple[float, float]], np.ndarray]:
    """(population mean return, mean policy's return) per iteration; the final mean policy."""
    rng = np.random.default_rng(seed)
    envs = mb_sim.envs.make_vec("mb_sim/Pendulum-v0", population)
    judge = mb_sim.envs.make_vec("mb_sim/Pendulum-v0", 1)
    mean, std = np.zeros(N_PARAMS), np.ones(N_PARAMS)
    keep = max(2, round(elite * population))
    curve = []
    for it in range(iterations):
        start = time.perf_counter()
        params = mean + std * rng.standard_normal((population, N_PARAMS))
        returns = episode_returns(envs, params, seed=1000 + it)
        best = params[np.argsort(returns)[-keep:]]
        extra = max(0.5 * (1 - it / (0.75 * iterations)), 0.0)  # keeps it exploring early
        mean, std = best.mean(axis=0), best.std(axis=0) + extra
        check = float(episode_returns(judge, mean[None], seed=7)[0])
        curve.append((float(returns.mean()), check))
        print(f"iteration {it + 1:3d}: population {returns.mean():.3f} (best "
              f"{returns.max():.3f}), mean policy {check:.3f}  [{time.perf_counter() - start:.1f} s]",
              flush=True)
    return curve, mean


def swing(params: np.ndarray, seed: int = 7) -> np.ndarray:
    """cos theta (1 = upright) over one episode of the policy, in a single environment."""
    env = gym.make("mb_sim/Pendulum-v0")
    obs, _ = env.reset(seed=seed)
    heights = [obs[0]]
    done = False
    while not done:
        obs, _, terminated, truncated, _ = env.step(act(params[None], obs[None])[0]
                                                    .astype(np.float32))
        heights.append(obs[0])
        done = terminated or truncated
    return np.array(heights)


def plot(curve: list[tuple[float, float]], heights: np.ndarray, period: float,
         path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    population, policy = np.array(curve).T
    x = np.arange(1, len(curve) + 1)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 3.8))
    ax.plot(x, population, label="population mean")
    ax.plot(x, policy, label="mean policy")
    ax.set_xlabel("CEM iteration (64 episodes of 40 s each)")
    ax.set_ylabel("mean reward per step")
    ax.set_ylim(0, 1)
    ax.set_title("learning curve")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    bx.plot(np.arange(len(heights)) * period, heights)
    bx.set_xlabel("time (s)")
    bx.set_ylabel("cos theta (1: upright)")
    bx.set_ylim(-1.05, 1.05)
    bx.set_title("the learned policy, one episode")
    bx.grid(alpha=0.3)
    fig.suptitle("mb_sim/Pendulum-v0 swing-up (Wawrzyński 2009, sec. 13.1, torque within 0.225), CEM in numpy")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--plot", default=None, help="save the learning curve (PNG)")
    args = parser.parse_args()
    start = time.perf_counter()
    curve, policy = train(args.iterations)
    print(f"{args.iterations} iterations in {time.perf_counter() - start:.0f} s")
    heights = swing(policy)
    period = mb_sim.envs.TASKS["Pendulum"].control_period
    up = np.flatnonzero(heights > np.cos(np.radians(10)))
    last = heights[-round(10 / period):]
    print(f"learned policy: first within 10 degrees of upright after "
          f"{up[0] * period if up.size else float('nan'):.1f} s; "
          f"{100 * np.mean(last > np.cos(np.radians(10))):.0f} % of the last 10 s there")
    if args.plot:
        plot(curve, heights, period, args.plot)


if __name__ == "__main__":
    main()
