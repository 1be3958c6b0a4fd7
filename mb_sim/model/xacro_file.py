"""xacro files expanded to URDF text with the `xacro` package, with or without a ROS install.

xacro answers `$(find pkg)` (and `find('pkg')` in `$(eval ...)`) through the ament index, which
needs a sourced ROS 2 workspace: without one it fails with "Environment variable
'AMENT_PREFIX_PATH' is not set or empty" although the package sits beside the file. While mb_sim
expands a file, both are answered by `mb_sim.model.resources.Search.find_package` instead,
which asks the ament index first and then looks where `package://` files are looked for
(ROS_PACKAGE_PATH, `package_dirs`, the xacro's own folder tree). The hook is xacro's
`substitution_args._eval_find`, the one function both forms call, swapped for the expansion
and restored after it (under a lock: xacro keeps its state in module globals). xacro itself
knows no `$(find-pkg-share pkg)`, launch's spelling.

The top file is read as URDF files are (a byte-order mark and blank lines before `<?xml`
accepted); the files it includes are read by xacro.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, redirect_stderr
from pathlib import Path
from typing import Any

from mb_sim.errors import ModelError
from mb_sim.model.resources import Search, read_text_file, xml_text
from mb_sim.model.urdf_filter import MAX_URDF_BYTES

log = logging.getLogger("mb_sim")

_LOCK = threading.Lock()


@contextmanager
def _finding_with(search: Search, failures: list[str]) -> Iterator[None]:
    """xacro's `$(find pkg)` answered by `search` inside the block; why a package was not
    found is appended to `failures` (xacro wraps the exception's text in its own)."""
    try:
        from xacro import substitution_args
    except ImportError:  # a xacro without substitution args: expanded as it is
        yield
        return
    if not callable(getattr(substitution_args, "_eval_find", None)):
        log.debug("xacro %s has no _eval_find: $(find) goes to the ament index only",
                  getattr(substitution_args, "__file__", "?"))
        yield
        return

    def find(package: str) -> str:
        folder, why = search.find_package(str(package))
        if folder is None:
            failures.append(f"$(find {package}): {why}")
            raise substitution_args.SubstitutionException(failures[-1])
        return folder

    table = getattr(substitution_args, "_eval_dict", {})
    saved = substitution_args._eval_find, table.get("find")
    substitution_args._eval_find = find
    table["find"] = find
    try:
        yield
    finally:
        substitution_args._eval_find = saved[0]
        if saved[1] is not None:
            table["find"] = saved[1]


def expand_xacro(path: Path, xacro_args: Mapping[str, Any] | None = None,
                 search: Search | None = None) -> str:
    """The URDF text of a xacro file, expanded by the `xacro` package with `xacro_args`;
    `$(find pkg)` resolved by `search` (default: a search from the file's folder)."""
    try:
        import xacro
    except ImportError:
        raise ModelError(f"{path}: expanding xacro files needs the xacro package "
                         "(pip install xacro, or apt install ros-<distro>-xacro)") from None
    text = xml_text(read_text_file(path, str(path), "xacro", MAX_URDF_BYTES, ModelError))
    search = search or Search(path.resolve().parent, (), str(path))
    mappings = {str(k): str(v) for k, v in (xacro_args or {}).items()}
    failures: list[str] = []
    with _LOCK, _finding_with(search, failures), redirect_stderr(io.StringIO()) as err:
        try:
            xacro.init_stacks(str(path.resolve()))
            doc = xacro.parse(text, str(path.resolve()))
            xacro.process_doc(doc, mappings=mappings)
            return doc.toxml()
        except Exception as exc:  # noqa: BLE001 (xacro raises its own and the XML parser's errors)
            if failures:
                raise ModelError(f"{path}: xacro: {failures[-1]}") from None
            detail = " ".join(err.getvalue().split())[:300]
            raise ModelError(f"{path}: xacro: {str(exc)[:300]}"
                             f"{' (' + detail + ')' if detail else ''}") from None
