"""Records are declared once (mb_sim.records): the arrays the simulation allocates and the
compiled model match their declarations, and docs/architecture.md shows the declarations."""

from __future__ import annotations

import gc
import math
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

import mb_sim
import mb_sim.sim.step  # declares the step's records (the others come with it)
from mb_sim import records
from mb_sim.bvh import STACK
from mb_sim.collision.gjk import EPA_MAX_FACES, EPA_MAX_VERTS
from mb_sim.collision.separating_axes import SLOTS_MAX
from mb_sim.collision.work import CAP_POINTS, HITS, MESH_CANDIDATES
from mb_sim.records import ARANGE, IDENTITY, REAL, Field, allocate, dimension, mismatches, record
from mb_sim.sim.state import State, StateArrays
from mb_sim.solver.rows import SUBSPACE_ROWS
from mb_sim.warmup import ROBOT, WORLD

ROOT = Path(__file__).resolve().parents[1]


def test_every_record_and_view_is_declared_with_meanings() -> None:
    names = {d.name for d in records.declarations()}
    assert {"Tree", "Bodies", "Geoms", "WorldJoints", "Options", "SceneModel", "TreeWork",
            "StateArrays", "Rows", "CollisionWork", "ContactList", "BodyFrames", "JointBlocks",
            "StepWork", "Data", "Sim", "Dynamics", "Shapes"} <= names
    for d in records.declarations():
        assert d.doc.strip(), d.name
        for f in d.fields:
            assert f.doc.strip(), f"{d.name}.{f.name} has no meaning"


def _scene(floating: bool) -> mb_sim.Simulation:
    model = mb_sim.load_urdf(ROBOT, floating_base=floating, inertia_from_geometry=500.0)
    return mb_sim.Simulation(model, world=mb_sim.load_world(WORLD))


@pytest.mark.parametrize("floating", [False, True])
def test_arrays_match_their_declarations(floating: bool) -> None:
    sim = _scene(floating)
    sc, d = sim.scene.arrays, sim._data
    n, nb = sim.n_joints, len(sim.body_names)
    nv, nq = sim.nv, sim.nq
    g = sc.geoms
    rows = d.rows.kind.shape[0]
    ng = g.kind.shape[0]
    geom_sizes = {"g": ng, "v": g.verts.shape[0], "h": g.face_normal.shape[0],
                  "k": g.face_verts.shape[0], "e": g.edge_verts.shape[0],
                  "t": g.tri_flags.shape[0], "nd": g.bvh_count.shape[0],
                  "a": g.adjacent.shape[0], "c": g.listed_pairs.shape[0],
                  "fa": g.face_adjacent.shape[0]}
    assert g.verts.shape[0] > 0 and g.edge_verts.shape[0] > 0
    polygon = 2 * max(g.max_face_verts, CAP_POINTS) + 4
    work_sizes = {"o": n + nb + 1, "g": ng, "p": ng * (ng - 1) // 2, "pv": EPA_MAX_VERTS,
                  "pf": EPA_MAX_FACES, "hv": g.max_verts, "hf": g.max_faces, "c": polygon,
                  "m": max(polygon + 2, g.max_verts + 2, 16), "nodes": max(2 * ng - 1, 1),
                  "stack": STACK, "hits": HITS, "mc": MESH_CANDIDATES,
                  # the separating-axis table: the power of two >= 2 p (16 to SLOTS_MAX)
                  "ac": 1 << max(4, math.ceil(math.log2(min(ng * (ng - 1), SLOTS_MAX))))}
    problems = (
        mismatches(sc.tree, n=n, m=sc.tree.mimic.shape[0], t=1)
        + mismatches(sc.bodies, b=nb) + mismatches(g, **geom_sizes)
        + mismatches(sc.joints, j=len(sim.scene.world_joint_names)) + mismatches(sc.options)
        + mismatches(sc) + mismatches(d)
        + mismatches(d.tree, n=n, t=1, nv=nv, nq=nq, w=nv) + mismatches(d.frames, b=nb)
        + mismatches(d.collision, **work_sizes)
        + mismatches(d.rows, r=rows, w=nv, b=nb, t=1, s=SUBSPACE_ROWS, v=nv)
        + mismatches(d.push, r=rows, w=nv, b=nb, t=1, s=SUBSPACE_ROWS, v=nv)
        + mismatches(d.joints, j=len(sim.scene.world_joint_names), b=nb)
        + mismatches(d.work, n=n, nv=nv, b=nb, t=1, r=rows)
        + mismatches(d.before, n=n, nq=nq, nv=nv, b=nb, w=rows)
        + mismatches(d.contacts, k=d.contacts.depth.shape[0])
        + mismatches(sim.state.arrays(), n=n, nq=nq, nv=nv, b=nb, w=rows)
    )
    assert problems == []


def test_a_wrong_shape_or_type_is_reported() -> None:
    sim = _scene(False)
    tree = sim.scene.arrays.tree
    bad = tree._replace(axis=np.zeros((1, 3)), parent=tree.parent.astype(float))
    problems = mismatches(bad, n=sim.n_joints, m=tree.mimic.shape[0], t=1)
    assert any("Tree.axis: shape (1, 3)" in p for p in problems), problems
    assert any("Tree.parent: dtype float64" in p for p in problems), problems


def test_state_is_the_declared_state() -> None:
    assert [f.name for f in fields(State)] == list(StateArrays._fields)


def test_shapes_and_fills() -> None:
    assert dimension("n+1", {"n": 4}) == 5
    assert dimension("2*g", {"g": 3}) == 6
    assert dimension("3*r+1", {"r": 2}) == 7
    with pytest.raises(ValueError, match="size 'x' not given"):
        dimension("x+1", {"n": 1})
    Sample, _ = record("Sample", "a record of the test", (
        Field("eye", REAL, ("n", 3, 3), "identities", fill=IDENTITY),
        Field("ids", np.int64, (2, "2*n"), "counting", fill=ARANGE),
        Field("minus", np.int64, ("n",), "minus one", fill=-1),
    ), {"n": "count"})
    try:
        s = allocate(Sample, n=2)
        np.testing.assert_array_equal(s.eye, np.tile(np.eye(3), (2, 1, 1)))
        np.testing.assert_array_equal(s.ids, [[0, 1, 2, 3]] * 2)
        np.testing.assert_array_equal(s.minus, [-1, -1])
        assert mismatches(s, n=2) == []
    finally:
        records.DECLARED.pop("Sample")


# -- records lend their arrays (mb_sim._jit.record_fields) ------------------------------------

if records.JIT:
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    from mb_sim._jit import njit, record_fields
    from mb_sim.sim.state import new_state

    @intrinsic
    def _counted(typingctx, ary):  # type: ignore[no-untyped-def]
        """Whether compiled code counts references to `ary` (it has a memory-info pointer)."""
        def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
            meminfo = context.make_array(ary)(context, builder, value=args[0]).meminfo
            return builder.icmp_unsigned("!=", meminfo, cgutils.get_null_value(meminfo.type))
        return types.boolean(ary), codegen

    @intrinsic
    def _held(typingctx, meminfo):  # type: ignore[no-untyped-def]
        """Whether a lender's item holds memory (is not null)."""
        def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
            return builder.icmp_unsigned("!=", args[0], cgutils.get_null_value(args[0].type))
        return types.boolean(meminfo), codegen

    @njit
    def _q_of(state):  # type: ignore[no-untyped-def]
        held = 0
        for item in state.lender:
            held += _held(item)
        return state.q, _counted(state.q), held, len(state.lender)


    Holder, HolderRecord = record("Holder", "A state record inside a record.", (
        Field("inner", StateArrays, (), "a state"),
        Field("tag", REAL, (1,), "an array beside it"),
    ))

    @njit
    def _new_holder(values):  # type: ignore[no-untyped-def]
        return HolderRecord(*record_fields(values))

    @intrinsic
    def _count(typingctx, rec):  # type: ignore[no-untyped-def]
        """The reference count of a record's memory info."""
        def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
            pointer = cgutils.create_struct_proxy(rec)(context, builder, value=args[0]).meminfo
            return builder.load(builder.bitcast(pointer, cgutils.intp_t.as_pointer()))
        return types.intp(rec), codegen

    @njit
    def _inner_q(holder):  # type: ignore[no-untyped-def]
        total = 0.0
        for _ in range(1000):  # loops and calls: no count is taken for the inner record
            total += holder.inner.q.sum()
        return total / 1000, _count(holder.inner)

    @njit
    def _inner(holder):  # type: ignore[no-untyped-def]
        return holder.inner

    @njit
    def _count_of(rec):  # type: ignore[no-untyped-def]
        return _count(rec)


@pytest.mark.skipif(not records.JIT, reason="interpreted, a record is its namedtuple")
def test_a_record_inside_a_record_is_held_by_it_and_never_counted() -> None:
    """A record made with records inside it holds each in its lender (one count); compiled
    code reads it without counting, in loops and calls; handed to Python it gets a count of
    its own, so it outlives the record it came from."""
    state = allocate(StateArrays, n=3, nq=3, nv=3, b=0, w=4)
    state.q[:] = [1.0, 2.0, 3.0]
    inner = new_state(state)
    assert _count_of(inner) == 1  # Python's proxy
    holder = _new_holder(Holder(inner, np.zeros(1)))
    assert _count_of(inner) == 2  # and the holder's lender
    del inner, state
    gc.collect()
    assert _inner_q(holder) == (6.0, 1)
    back = _inner(holder)
    assert _count_of(back) == 2
    del holder
    gc.collect()
    assert _count_of(back) == 1
    assert _inner_q(_new_holder(Holder(back, np.zeros(1))))[0] == 6.0


@pytest.mark.skipif(not records.JIT, reason="interpreted, a record is its namedtuple")
def test_a_record_lends_its_arrays_and_keeps_them() -> None:
    """Compiled code reads a record's arrays without counting references (no memory info);
    the record's `lender` holds each array's memory info, so the arrays live as long as the
    record even when Python lets go of them, and read back in Python each is the array it
    was made from."""
    state = allocate(StateArrays, n=3, nq=3, nv=3, b=0, w=4)
    q = state.q
    q[:] = np.arange(q.shape[0]) + 0.5
    rec = new_state(state)
    del state
    gc.collect()
    back, lent_counted, held, arrays = _q_of(rec)
    assert back is q
    assert not lent_counted
    assert held == arrays == sum(f.is_array for f in records.declaration(StateArrays).fields)
    assert np.array_equal(back, np.arange(q.shape[0]) + 0.5)
