#!/usr/bin/env bash
# Build the tf2_msgs interface package (TFMessage) against the ROS 2 prefix that the PyPI wheels
# install into a virtual environment, and install it into that same prefix (the venv root) beside
# the wheels' own message packages. The wheels put <venv>/lib on LD_LIBRARY_PATH when Python
# starts, and that is where the middleware looks up type support libraries by name.
#
# Usage: tools/build_tf2_msgs.sh [VENV]        (VENV defaults to .venv)
#
# Nothing is built when tf2_msgs already works (a sourced ROS 2 install, or a previous build whose
# stamp matches these sources). The build needs cmake, make and a C/C++ compiler; it installs the
# wheels listed in tools/requirements-tf2-build.txt into the venv.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$(cd "${1:-.venv}" && pwd)"
py="$venv/bin/python"
src="$here/tf2_msgs"
stamp="$venv/share/tf2_msgs/mb_sim_build.stamp"

src_hash="$(cat "$src/CMakeLists.txt" "$src/package.xml" "$src/msg/"*.msg \
    "$here/requirements-tf2-build.txt" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)"

works() {
    # The import alone succeeds without the middleware's type support library, so load that too.
    "$py" -c '
import ctypes
from tf2_msgs.msg import TFMessage
TFMessage.__class__.__import_type_support__()
ctypes.CDLL("libtf2_msgs__rosidl_typesupport_fastrtps_c.so")
' >/dev/null 2>&1
}

if [[ -f "$stamp" && "$(cat "$stamp")" == "$src_hash" ]] && works; then
    echo "tf2_msgs: cached build in $venv"
    exit 0
fi
if [[ ! -f "$stamp" ]] && works; then
    echo "tf2_msgs: provided by the environment, nothing to build"
    exit 0
fi

echo "tf2_msgs: building from $src into $venv"
"$py" -m pip install --quiet -r "$here/requirements-tf2-build.txt" 2>&1 \
    | { grep -v "is ignored: it is neither a file nor a directory" || true; }

build="$(mktemp -d "${TMPDIR:-/tmp}/tf2_msgs_build.XXXXXX")"
trap 'rm -rf "$build"' EXIT

export AMENT_PREFIX_PATH="$venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
export PATH="$venv/bin:$PATH"

log="$build/build.log"
{
    cmake -S "$src" -B "$build/b" \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX="$venv" \
        -DCMAKE_PREFIX_PATH="$venv" \
        -DPython3_EXECUTABLE="$py" \
        -DPYTHON_EXECUTABLE="$py" \
        -DBUILD_TESTING=OFF \
        -DCMAKE_INSTALL_RPATH="$venv/lib" &&
    cmake --build "$build/b" -j "$(nproc)" &&
    cmake --install "$build/b"
} > "$log" 2>&1 || { tail -n 80 "$log" >&2; echo "tf2_msgs: build failed" >&2; exit 1; }

if ! works; then
    echo "tf2_msgs: built, but it does not load:" >&2
    "$py" -c 'from tf2_msgs.msg import TFMessage; TFMessage.__class__.__import_type_support__()' >&2 || true
    exit 1
fi
echo "$src_hash" > "$stamp"
echo "tf2_msgs: installed into $venv"
