"""`viewer` (also `python -m mb_sim.viewer`, `ros2 run mb_sim viewer`): the browser view.

    viewer [BAG] [--host 127.0.0.1] [--port 8080] [--node sim_node] [ROS arguments]

Without BAG: the running sim_node (needs rclpy). With BAG: a bag sim_node recorded (needs
only rosbags). Serves until Ctrl-C or SIGTERM, then exits 0 without a traceback. Exit status 1
when it cannot start (viser missing, an unreadable bag, the port taken), with one line saying
why.
"""

from __future__ import annotations

from mb_sim.ros.process.signals import exit_quietly_until_started

exit_quietly_until_started()  # before the imports below: a signal exits quietly

import argparse
import sys

from mb_sim.ros.process.signals import Signals
from mb_sim.viewer import INSTALL_HINT, ViewerUnavailable, require_viser


def _arguments(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="viewer", description="The browser view of mb_sim: the running sim_node, or a "
        "bag it recorded (with a timeline).")
    parser.add_argument("bag", nargs="?", help="a bag recorded by sim_node (folder or .mcap)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to serve on (default 127.0.0.1: this machine only; "
                             "0.0.0.0 shares the page with the network)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    parser.add_argument("--node", default="sim_node",
                        help="the simulator node whose topics and services to use (a "
                             "relative name is in the viewer's namespace)")
    if "--ros-args" in argv:  # `ros2 run` and launch files add these; rclpy reads them
        i = argv.index("--ros-args")
        return parser.parse_args(argv[:i]), argv[i:]
    return parser.parse_args(argv), []


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args, ros_args = _arguments(argv)
    signals = Signals()
    signals.exit_at_once()  # importing viser, reading a bag: a signal ends it at once
    stop = signals.stop
    try:
        require_viser()
    except ViewerUnavailable:
        print(f"viewer: {INSTALL_HINT}", file=sys.stderr)
        return 1
    try:
        if args.bag:
            return _show_bag(args, signals)
        from mb_sim.viewer.node import serve

        signals.running()
        return serve(args.node, args.host, args.port, stop, ["viewer", *ros_args])
    except OSError as e:  # the port is taken, the address is not this machine's
        print(f"viewer: cannot serve on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 1
    finally:
        signals.finish()


def _show_bag(args: argparse.Namespace, signals: Signals) -> int:
    from mb_sim.viewer.bag import BagError, BagView

    try:
        bag = BagView(args.bag, args.host, args.port)
    except BagError as e:
        print(f"viewer: {e}", file=sys.stderr)
        return 1
    signals.running()  # serving: a signal closes the page's server
    rec = bag.recording
    print(f"viewer: {args.bag}: {rec.messages} messages, t = {rec.start:.3f} .. {rec.end:.3f} s"
          f"{'' if rec.complete else ' (the recording ended early)'}; serving on {bag.url}; "
          f"{bag.view.camera}", flush=True)
    try:
        signals.stop.wait()
    finally:
        bag.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
