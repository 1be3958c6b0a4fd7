"""ABA against the closed-form benchmark dynamics of Wawrzyński 2009 Part III.

Each benchmark URDF in urdf/benchmarks is the object of one section of Part III; the header
comment of each file derives how its joint coordinates map to the angles of the section.
At 20 seeded random states (q, qd, tau) `mb_sim.aba` must give the accelerations of the
printed equations to 1e-9 (absolute, scaled by max(1, |qdd|)).

Corrections to the printed forms (Wawrzyński 2009 flags them as typos; the forms below are the
ones a Lagrangian derivation of the same model gives):
- 14.1 cart-pole: the pole friction term is -mu_p theta_d / (m_p l) (the report prints "+",
  Barto, Sutton and Anderson have "-"); mu_p is the pole joint's viscous damping.
- 14.3 triple pendulum on a cart: A10 = I1 + m1 l1^2 + (m2 + m3) L1^2 (the report prints m2).
Coulomb terms (mu_c sgn x_d in 14.1, the mu_x and mu_i terms of f in 14.3) are left out: they
are not smooth forces and ABA does not apply them (the impulse solver does, Mikhailyuk &
Strashnov 2016); the URDFs carry them as joint `friction`. Viscous terms (mu_p, C_c, C_i) are
URDF `damping`, which ABA
applies as tau - damping * qd.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import mb_sim

BENCHMARKS = Path(__file__).resolve().parents[1] / "urdf" / "benchmarks"
N_STATES = 20
TOL = 1e-9

Vec = np.ndarray


# --- 13.1 single pendulum: theta from the upward vertical, g = 1, unit mass and length -------
def single_pendulum(q: Vec, qd: Vec, tau: Vec) -> Vec:
    """theta_dd = sin(theta) + tau (Wawrzyński 2009, sec. 13.1); q = theta."""
    return np.array([np.sin(q[0]) + tau[0]])


# --- 13.2 acrobot: theta1 from the horizontal, theta2 relative ------------------------------
ACRO = {"l1": 1.0, "lc1": 0.5, "lc2": 0.5, "m1": 1.0, "m2": 1.0, "I1": 1.0, "I2": 1.0, "g": 9.81}


def acrobot(q: Vec, qd: Vec, tau: Vec) -> Vec:
    """B(theta) theta_dd + c + h = tau with the B, c, h of Wawrzyński 2009, sec. 13.2; q = theta."""
    p = ACRO
    t1, t2 = q
    d1, d2 = qd
    l1, lc1, lc2, g = p["l1"], p["lc1"], p["lc2"], p["g"]
    m1, m2, I1, I2 = p["m1"], p["m2"], p["I1"], p["I2"]
    b11 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * np.cos(t2)) + I1 + I2
    b12 = m2 * (lc2**2 + l1 * lc2 * np.cos(t2)) + I2
    b22 = m2 * lc2**2 + I2
    c1 = -m2 * l1 * lc2 * d2**2 * np.sin(t2) - 2 * m2 * l1 * lc2 * d1 * d2 * np.sin(t2)
    c2 = m2 * l1 * lc2 * d1**2 * np.sin(t2)
    h1 = (m1 * lc1 + m2 * l1) * g * np.cos(t1) + m2 * lc2 * g * np.cos(t1 + t2)
    h2 = m2 * lc2 * g * np.cos(t1 + t2)
    B = np.array([[b11, b12], [b12, b22]])
    return np.linalg.solve(B, tau - np.array([c1 + h1, c2 + h2]))


# --- 13.3 three-link arm: point masses 1, 1, m on unit massless links -----------------------
ARM3_LOAD = 1.5  # the report does not give m; urdf/benchmarks/three_link_arm.urdf uses 1.5 kg


def three_link_arm(q: Vec, qd: Vec, tau: Vec, m: float = ARM3_LOAD, g: float = 9.81) -> Vec:
    """B theta_dd + c + h = tau with B, c, h exactly as printed in Wawrzyński 2009, sec. 13.3; q =
    theta."""
    t1, t2, t3 = q
    d1, d2, d3 = qd
    c2, c3, c23 = np.cos(t2), np.cos(t3), np.cos(t2 + t3)
    s2, s3, s23 = np.sin(t2), np.sin(t3), np.sin(t2 + t3)
    B = np.empty((3, 3))
    B[0, 0] = 3 + 2 * c2 + m * (3 + 2 * c2 + 2 * c23 + 2 * c3)
    B[0, 1] = B[1, 0] = 1 + c2 + m * (2 + c2 + c23 + 2 * c3)
    B[0, 2] = B[2, 0] = m * (1 + c23 + c3)
    B[1, 1] = 1 + m * 2 * (1 + c3)
    B[1, 2] = B[2, 1] = m * (1 + c3)
    B[2, 2] = m
    k2 = s2 + m * (s2 + s23)
    k3 = m * (s23 + s3)
    c = np.array(
        [
            -d1 * d2 * 2 * k2 - d1 * d3 * 2 * k3 - d2**2 * k2 - d2 * d3 * 2 * k3 - d3**2 * k3,
            d1**2 * k2 - d1 * d3 * m * 2 * s3 - d2 * d3 * m * 2 * s3 - d3**2 * m * s3,
            d1**2 * k3 + d1 * d2 * m * 2 * s3 + d2**2 * m * s3,
        ]
    )
    h = g * np.array(
        [
            (2 + m) * np.cos(t1) + (1 + m) * np.cos(t1 + t2) + m * np.cos(t1 + t2 + t3),
            (1 + m) * np.cos(t1 + t2) + m * np.cos(t1 + t2 + t3),
            m * np.cos(t1 + t2 + t3),
        ]
    )
    return np.linalg.solve(B, tau - c - h)


# --- 14.1 cart-pole (Barto, Sutton, Anderson) -----------------------------------------------
CART_POLE = {"mc": 1.0, "mp": 0.1, "l": 0.5, "g": 9.81}


def cart_pole(q: Vec, qd: Vec, tau: Vec, mu_p: float) -> Vec:
    """Wawrzyński 2009, sec. 14.1 with mu_c = 0 and the pole friction sign corrected; q = (x,
    theta).

    theta_dd = (cos(th) (-F - m_p l th_d^2 sin th) / (m_c + m_p) + g sin th - mu_p th_d / (m_p l)
                + tau_p / (m_p l)) / (l (4/3 - m_p cos^2 th / (m_c + m_p)))
    x_dd = (F + m_p l (th_d^2 sin th - th_dd cos th)) / (m_c + m_p)
    tau_p, a torque at the pole joint (zero in the benchmark), enters like -mu_p th_d: both are
    torques on the pole, divided by m_p l when the pole equation is divided by m_p l.
    """
    p = CART_POLE
    mc, mp, ll, g = p["mc"], p["mp"], p["l"], p["g"]
    th, thd = q[1], qd[1]
    force, tau_p = tau
    mt = mc + mp
    num = (
        np.cos(th) * (-force - mp * ll * thd**2 * np.sin(th)) / mt
        + g * np.sin(th)
        + (tau_p - mu_p * thd) / (mp * ll)
    )
    thdd = num / (ll * (4.0 / 3.0 - mp * np.cos(th) ** 2 / mt))
    xdd = (force + mp * ll * (thd**2 * np.sin(th) - thdd * np.cos(th))) / mt
    return np.array([xdd, thdd])


# --- 14.2 double pendulum on a cart (Bogdanov) ----------------------------------------------
def _relative_to_absolute(q: Vec, qd: Vec, tau: Vec) -> tuple[Vec, Vec, Vec]:
    """URDF (x, relative angles) -> (x, absolute angles theta_i = q_1 + ... + q_i).

    With theta = T q (T lower triangular ones on the angles) the generalised forces are
    Q_theta = T^-T tau: Q_i = tau_i - tau_{i+1} on the angles, the cart force unchanged.
    """
    th = q.copy()
    th[1:] = np.cumsum(q[1:])
    thd = qd.copy()
    thd[1:] = np.cumsum(qd[1:])
    f = tau.copy()
    f[1:-1] = tau[1:-1] - tau[2:]
    return th, thd, f


def _absolute_to_relative(thdd: Vec) -> Vec:
    qdd = thdd.copy()
    qdd[2:] = np.diff(thdd[1:])
    return qdd


BOGDANOV = {"m0": 1.5, "m1": 0.5, "m2": 0.75, "L1": 0.5, "L2": 0.75, "g": 9.81}


def cart_double_pendulum(q: Vec, qd: Vec, tau: Vec) -> Vec:
    """B q_dd + C q_d + h = f of Wawrzyński 2009, sec. 14.2 (Bogdanov), theta absolute from the
    vertical."""
    p = BOGDANOV
    m0, m1, m2, L1, L2, g = (p[k] for k in ("m0", "m1", "m2", "L1", "L2", "g"))
    l1, l2 = L1 / 2, L2 / 2
    I1, I2 = m1 * L1**2 / 12, m2 * L2**2 / 12
    d1 = m0 + m1 + m2
    d2 = m1 * l1 + m2 * L1
    d3 = m2 * l2
    d4 = m1 * l1**2 + m2 * L1**2 + I1
    d5 = m2 * L1 * l2
    d6 = m2 * l2**2 + I2
    f1 = (m1 * l1 + m2 * L1) * g
    f2 = m2 * l2 * g
    th, thd, f = _relative_to_absolute(q, qd, tau)
    _, t1, t2 = th
    _, w1, w2 = thd
    B = np.array(
        [
            [d1, d2 * np.cos(t1), d3 * np.cos(t2)],
            [d2 * np.cos(t1), d4, d5 * np.cos(t1 - t2)],
            [d3 * np.cos(t2), d5 * np.cos(t1 - t2), d6],
        ]
    )
    C = np.array(
        [
            [0.0, -d2 * np.sin(t1) * w1, -d3 * np.sin(t2) * w2],
            [0.0, 0.0, d5 * np.sin(t1 - t2) * w2],
            [0.0, -d5 * np.sin(t1 - t2) * w1, 0.0],
        ]
    )
    h = np.array([0.0, -f1 * np.sin(t1), -f2 * np.sin(t2)])
    return _absolute_to_relative(np.linalg.solve(B, f - C @ thd - h))


# --- 14.3 triple pendulum on a cart (Si and Wang, Table 3) ----------------------------------
SI_WANG = {
    "g": 9.8,
    "M": 1.014,
    "m1": 0.4506,
    "m2": 0.219,
    "m3": 0.0568,
    "l1": 0.37,
    "l2": 0.3,
    "l3": 0.05,
    "L1": 0.43,
    "L2": 0.33,
    "I1": 0.0042,
    "I2": 0.0012,
    "I3": 0.00010609,
    "Cc": 5.5,
    "C1": 0.00026875,
    "C2": 0.00026875,
    "C3": 0.00026875,
}


def cart_triple_pendulum(q: Vec, qd: Vec, tau: Vec) -> Vec:
    """B q_dd + C q_d + h = f of Wawrzyński 2009, sec. 14.3 (Tables 2, 3), A10 with m1, Coulomb
    terms off."""
    p = SI_WANG
    g, M, m1, m2, m3 = p["g"], p["M"], p["m1"], p["m2"], p["m3"]
    l1, l2, l3, L1, L2 = p["l1"], p["l2"], p["l3"], p["L1"], p["L2"]
    I1, I2, I3 = p["I1"], p["I2"], p["I3"]
    Cc, C1, C2, C3 = p["Cc"], p["C1"], p["C2"], p["C3"]
    A = np.zeros(41)
    A[1] = M + m1 + m2 + m3
    A[2] = A[9] = m1 * l1 + (m2 + m3) * L1
    A[3] = A[18] = m2 * l2 + m3 * L2
    A[4] = A[28] = m3 * l3
    A[5] = Cc
    A[6] = -A[2]
    A[7] = -A[3]
    A[8] = -m3 * l3
    A[10] = I1 + m1 * l1**2 + (m2 + m3) * L1**2  # printed with m2; m1 is the Lagrangian term
    A[11] = A[14] = A[19] = (m2 * l2 + m3 * L2) * L1
    A[12] = A[16] = A[29] = m3 * l3 * L1
    A[13] = C1 + C2
    A[15] = -C2
    A[17] = -g * (m1 * l1 + m2 * L1 + m3 * L1)
    A[20] = I2 + m3 * L2**2 + m2 * l2**2
    A[21] = A[25] = A[30] = m3 * l3 * L2
    A[22] = -(m2 * l2 + m3 * L2) * L1
    A[23] = -C2
    A[24] = C2 + C3
    A[26] = -C3
    A[27] = -g * (m2 * l2 + m3 * L2)
    A[31] = I3 + m3 * l3**2
    A[32] = C3
    A[33] = -m3 * l3 * L1
    A[34] = -g * m3 * l3
    A[35] = -m3 * l3 * L2
    A[36] = -C3
    th, thd, f = _relative_to_absolute(q, qd, tau)
    _, t1, t2, t3 = th
    _, w1, w2, w3 = thd
    c1, c2, c3 = np.cos(t1), np.cos(t2), np.cos(t3)
    s1, s2, s3 = np.sin(t1), np.sin(t2), np.sin(t3)
    c12, c13, c23 = np.cos(t1 - t2), np.cos(t1 - t3), np.cos(t2 - t3)
    s12, s13, s23 = np.sin(t1 - t2), np.sin(t1 - t3), np.sin(t2 - t3)
    B = np.array(
        [
            [A[1], A[2] * c1, A[3] * c2, A[4] * c3],
            [A[9] * c1, A[10], A[11] * c12, A[12] * c13],
            [A[18] * c2, A[19] * c12, A[20], A[21] * c23],
            [A[28] * c3, A[29] * c13, A[30] * c23, A[31]],
        ]
    )
    C = np.array(
        [
            [A[5], A[6] * s1 * w1, A[7] * s2 * w2, A[8] * s3 * w3],
            [0.0, A[13], A[14] * s12 * w2 + A[15], A[16] * s13 * w3],
            [0.0, A[22] * s12 * w1 + A[23], A[24], A[25] * s23 * w3 + A[26]],
            [0.0, A[33] * s13 * w1, A[35] * s23 * w2 + A[36], A[32]],
        ]
    )
    h = np.array([0.0, A[17] * s1, A[27] * s2, A[34] * s3])
    return _absolute_to_relative(np.linalg.solve(B, f - C @ thd - h))


# --- the cases ------------------------------------------------------------------------------
ClosedForm = Callable[[Vec, Vec, Vec], Vec]


class Case:
    def __init__(
        self,
        urdf: str,
        joints: tuple[str, ...],
        closed_form: ClosedForm,
        gravity: tuple[float, float, float],
        tau_scale: tuple[float, ...],
        prismatic: tuple[bool, ...] = (),
        xml_edit: Callable[[str], str] | None = None,
    ) -> None:
        self.urdf = urdf
        self.joints = joints
        self.closed_form = closed_form
        self.gravity = gravity
        self.tau_scale = np.array(tau_scale)
        self.prismatic = np.array(prismatic or (False,) * len(joints))
        self.xml_edit = xml_edit

    def model(self) -> mb_sim.Model:
        path = BENCHMARKS / self.urdf
        if self.xml_edit is None:
            return mb_sim.load_urdf(str(path))
        return mb_sim.load_urdf(self.xml_edit(path.read_text()))


POLE_DAMPING = 0.05


def _stronger_pole_damping(xml: str) -> str:
    """The cart-pole with mu_p = 0.05 so that a sign error in the damping term is visible."""
    edited = xml.replace('damping="0.000002"', f'damping="{POLE_DAMPING}"')
    assert edited != xml
    return edited


CASES = {
    "single_pendulum": Case(
        "single_pendulum.urdf", ("joint1",), single_pendulum, (0.0, 0.0, -1.0), (0.5,)
    ),
    "acrobot": Case("acrobot.urdf", ("joint1", "joint2"), acrobot, (0.0, 0.0, -9.81), (20, 20)),
    "three_link_arm": Case(
        "three_link_arm.urdf",
        ("joint1", "joint2", "joint3"),
        three_link_arm,
        (0.0, 0.0, -9.81),
        (50, 30, 15),
    ),
    "cart_pole": Case(
        "cart_pole.urdf",
        ("cart_joint", "pole_joint"),
        lambda q, qd, tau: cart_pole(q, qd, tau, mu_p=0.000002),
        (0.0, 0.0, -9.81),
        (10, 0.5),
        (True, False),
    ),
    "cart_pole_damped": Case(
        "cart_pole.urdf",
        ("cart_joint", "pole_joint"),
        lambda q, qd, tau: cart_pole(q, qd, tau, mu_p=POLE_DAMPING),
        (0.0, 0.0, -9.81),
        (10, 0.5),
        (True, False),
        _stronger_pole_damping,
    ),
    "cart_double_pendulum": Case(
        "cart_double_pendulum.urdf",
        ("cart_joint", "pole1_joint", "pole2_joint"),
        cart_double_pendulum,
        (0.0, 0.0, -9.81),
        (20, 2, 2),
        (True, False, False),
    ),
    "cart_triple_pendulum": Case(
        "cart_triple_pendulum.urdf",
        ("cart_joint", "pole1_joint", "pole2_joint", "pole3_joint"),
        cart_triple_pendulum,
        (0.0, 0.0, -9.8),
        (20, 1, 0.5, 0.1),
        (True, False, False, False),
    ),
}


def random_states(case: Case, seed: int) -> list[tuple[Vec, Vec, Vec]]:
    rng = np.random.default_rng(seed)
    n = len(case.joints)
    out = []
    for _ in range(N_STATES):
        q = np.where(case.prismatic, rng.uniform(-1.0, 1.0, n), rng.uniform(-np.pi, np.pi, n))
        qd = np.where(case.prismatic, rng.uniform(-2.0, 2.0, n), rng.uniform(-4.0, 4.0, n))
        tau = case.tau_scale * rng.uniform(-1.0, 1.0, n)
        out.append((q, qd, tau))
    return out


def _order(model: mb_sim.Model, joints: tuple[str, ...]) -> np.ndarray:
    """Index of each closed-form coordinate in the model's q."""
    assert sorted(model.joint_names) == sorted(joints), model.joint_names
    return np.array([model.joint_names.index(name) for name in joints])


@pytest.mark.parametrize("name", list(CASES))
def test_aba_matches_closed_form(name: str) -> None:
    case = CASES[name]
    model = case.model()
    idx = _order(model, case.joints)
    for k, (q, qd, tau) in enumerate(random_states(case, seed=1000 + len(name))):
        qm, qdm, taum = (np.zeros(model.nv) for _ in range(3))
        qm[idx], qdm[idx], taum[idx] = q, qd, tau
        qdd = mb_sim.aba(model, qm, qdm, taum, gravity=case.gravity)[idx]
        expected = case.closed_form(q, qd, tau)
        scale = max(1.0, float(np.max(np.abs(expected))))
        err = float(np.max(np.abs(qdd - expected)))
        assert err <= TOL * scale, (
            f"{name} state {k}: q={q}, qd={qd}, tau={tau}\n"
            f"aba={qdd}\nclosed form={expected}\nmax error {err:.3e} (scale {scale:.3g})"
        )


def test_pole_damping_is_visible() -> None:
    """The damped cart-pole case only proves the sign if damping changes the answer."""
    q, qd, tau = np.array([0.1, 0.4]), np.array([0.3, 2.0]), np.array([1.0, 0.0])
    light = cart_pole(q, qd, tau, mu_p=0.000002)
    heavy = cart_pole(q, qd, tau, mu_p=POLE_DAMPING)
    assert abs(light[1] - heavy[1]) > 1e-3


def test_three_link_arm_is_the_point_mass_lagrangian() -> None:
    """13.3's printed B, c, h equal the Lagrangian of unit massless links with point masses.

    Checked by finite differences, independently of the simulator: B = sum m_i J_i^T J_i,
    h = dV/dq = sum m_i g J_i[z], c = (dB/dt) qd - 1/2 d(qd^T B qd)/dq.
    """
    m, g = ARM3_LOAD, 9.81
    masses = (1.0, 1.0, m)
    eps = 1e-6

    def jacobians(q: Vec) -> list[Vec]:
        """d p_i / d q_j of the mass points p_i = sum_{k<=i} (cos a_k, sin a_k), a = cumsum q."""
        a = np.cumsum(q)
        tangent = np.stack([-np.sin(a), np.cos(a)])  # column k: d/d a_k of link k
        out = []
        for i in range(3):
            J = np.zeros((2, 3))
            for j in range(i + 1):
                J[:, j] = tangent[:, j : i + 1].sum(axis=1)
            out.append(J)
        return out

    def mass_matrix(q: Vec) -> Vec:
        return sum(mi * J.T @ J for mi, J in zip(masses, jacobians(q)))

    rng = np.random.default_rng(7)
    zero = np.zeros(3)
    for _ in range(5):
        q = rng.uniform(-np.pi, np.pi, 3)
        qd = rng.uniform(-2.0, 2.0, 3)
        B = mass_matrix(q)
        h = sum(mi * g * J[1] for mi, J in zip(masses, jacobians(q)))
        dB = [(mass_matrix(q + eps * e) - mass_matrix(q - eps * e)) / (2 * eps) for e in np.eye(3)]
        c = sum(dB[k] * qd[k] for k in range(3)) @ qd - 0.5 * np.array([qd @ d @ qd for d in dB])
        # the printed model: qdd = B^-1 (tau - c - h); recover its B, h and c
        cols = [three_link_arm(q, zero, e) - three_link_arm(q, zero, zero) for e in np.eye(3)]
        B_printed = np.linalg.inv(np.stack(cols, axis=1))
        np.testing.assert_allclose(B_printed, B, atol=1e-6)
        np.testing.assert_allclose(-B @ three_link_arm(q, zero, zero), h, atol=1e-5)
        np.testing.assert_allclose(-B @ three_link_arm(q, qd, zero) - h, c, atol=1e-4)
