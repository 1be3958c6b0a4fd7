"""Where the package's data files (urdf/, config/, launch/) are: the source tree when running
from a checkout (pip install -e, make run), else the installed share/mb_sim (colcon, ROS)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = "mb_sim"
SOURCE_ROOT = Path(__file__).resolve().parents[3]


def share_dir() -> Path:
    """The directory holding urdf/, config/ and launch/ of mb_sim."""
    if (SOURCE_ROOT / "package.xml").is_file() and (SOURCE_ROOT / "urdf").is_dir():
        return SOURCE_ROOT
    from ament_index_python.packages import get_package_share_directory

    return Path(get_package_share_directory(PACKAGE))


def data_file(relative: str) -> Path:
    """A file below share_dir(); FileNotFoundError naming it when absent."""
    path = share_dir() / relative
    if not path.exists():
        raise FileNotFoundError(f"{PACKAGE} data file {relative!r} not found at {path}")
    return path


def own_file(uri: str) -> str:
    """package://mb_sim/... as the file of this installation (a source checkout is no ament
    package); other uris as they are."""
    prefix = f"package://{PACKAGE}/"
    return str(share_dir() / uri[len(prefix):]) if uri.startswith(prefix) else uri
