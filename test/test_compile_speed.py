"""numba's compile flags hashed and compared through `mb_sim.compiling.compile_speed`'s fast path: the
same values and the same hashes as numba's own formulas, whatever options are set, so that
numba's typing cache finds exactly the entries it found before."""

from __future__ import annotations

import pytest

from mb_sim._jit import JIT

pytestmark = pytest.mark.skipif(not JIT, reason="numba's compiler is off (NUMBA_DISABLE_JIT)")


def _numba_values(config: object) -> dict[str, object]:
    """`TargetConfig.values` as numba writes it: every option through its property."""
    return {k: getattr(config, k) for k in type(config).options}


def test_values_and_hashes_are_numba_s() -> None:
    from numba.core.compiler import Flags
    from numba.core.cpu import CPUTargetOptions  # noqa: F401 - registers the CPU options

    from mb_sim.compiling import compile_speed

    assert compile_speed.installed
    plain, set_, other = Flags(), Flags(), Flags()
    set_.nrt = True
    set_.no_cpython_wrapper = True
    set_.error_model = "numpy"
    set_.fastmath = True
    other.nrt = True
    copied = Flags(set_)
    for config in (plain, set_, other, copied):
        assert config.values() == _numba_values(config)
        assert list(config.values()) == list(_numba_values(config))  # same order
        assert hash(config) == hash(tuple(sorted(_numba_values(config))))
    assert set_ == copied and set_ != other and hash(set_) == hash(other)
    lookup = {set_: "set", other: "other"}  # what numba's typing cache does with them
    assert lookup[copied] == "set" and lookup[Flags(other)] == "other"
