"""Kernels written to a folder of their own and run in fresh processes with a kernel cache of
their own: shared by the compile tests (cache, linking, parallel compile, compile log)."""

from __future__ import annotations

import os
from pathlib import Path


def kernel_folder(tmp_path: Path, source: str, name: str = "kernels.py") -> Path:
    """A folder `src` under tmp_path holding `source` as the module `name`."""
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / name).write_text(source)
    return folder


def compiling_env(cache: Path) -> dict[str, str]:
    """This process's environment with the kernels compiled (no NUMBA_DISABLE_JIT) and cached
    in `cache`."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    env["NUMBA_CACHE_DIR"] = str(cache)
    return env
