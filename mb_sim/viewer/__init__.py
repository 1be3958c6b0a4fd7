"""The browser view of mb_sim (viser): a running `sim_node`, a library `Simulation`, or a bag.

    python -m mb_sim.viewer              # the node running now (ros2 run mb_sim viewer)
    python -m mb_sim.viewer BAG          # a bag recorded by sim_node, with a timeline
    mb_sim.viewer.show(sim)              # a Simulation in this script, as it steps

The page is served on http://127.0.0.1:8080 unless `--host`/`--port` (or show's arguments)
say otherwise. viser is an optional dependency (`pip install mb_sim[viewer]`); the rest of
mb_sim never imports this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mb_sim.viewer.live import LiveView

INSTALL_HINT = ("the browser viewer needs viser: pip install 'mb_sim[viewer]' (or: pip install "
                "viser)")


class ViewerUnavailable(ImportError):
    """viser is not installed; the message says how to install it."""


def require_viser() -> None:
    """ViewerUnavailable (with the install command) when viser cannot be imported."""
    try:
        import viser  # noqa: F401
    except ImportError as e:
        raise ViewerUnavailable(f"{INSTALL_HINT} ({e})") from None


def show(sim: Any, host: str = "127.0.0.1", port: int = 8080, **options: Any) -> LiveView:
    """Serve the view of the library `Simulation` `sim` and follow it as the script steps it
    (`mb_sim.viewer.live.show`: fps, real_time_factor)."""
    require_viser()
    from mb_sim.viewer.live import show as show_live

    return show_live(sim, host, port, **options)


__all__ = ["INSTALL_HINT", "ViewerUnavailable", "require_viser", "show"]
