#!/usr/bin/env bash
# Build the ROS 2 interface packages that mb_sim uses and the PyPI wheels lack, from their
# definitions in tools/interfaces/<package>:
#   tf2_msgs               TFMessage (/tf, /tf_static)
#   simulation_interfaces  the standard simulator interface, 2.1.0 field for field
# against the ROS 2 prefix that the wheels install into a virtual environment, and install them
# into that same prefix (the venv root) beside the wheels' own message packages. The wheels put
# <venv>/lib on LD_LIBRARY_PATH when Python starts, and that is where the middleware looks up
# type support libraries by name.
#
# Usage: tools/build_interfaces.sh [VENV]        (VENV defaults to .venv)
#
# A package is not built when it already works (a sourced ROS 2 install, or a previous build
# whose stamp matches its sources). The build needs cmake, make and a C/C++ compiler; it installs
# the wheels listed in tools/interfaces/requirements-build.txt into the venv. Only the C and
# Python generators run (tools/interfaces/pypi_prefix.cmake).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$(cd "${1:-.venv}" && pwd)"
py="$venv/bin/python"
interfaces="$here/interfaces"

# package | Python statement that uses it | CMAKE_BUILD_TYPE (TFMessage is published at the TF
# rate: optimised; the simulator services are called now and then: compiled quicker without)
packages=(
    "tf2_msgs|from tf2_msgs.msg import TFMessage as T|Release"
    "simulation_interfaces|from simulation_interfaces.action import SimulateSteps as T|"
)

works() {  # package, statement
    # The import alone succeeds without the middleware's type support library, so load that too.
    "$py" -c "
import ctypes
$2
T.__class__.__import_type_support__()
ctypes.CDLL('lib$1__rosidl_typesupport_fastrtps_c.so')
" >/dev/null 2>&1
}

source_hash() {  # package
    find "$interfaces/$1" -type f -print0 | sort -z | xargs -0 cat \
        | cat - "$interfaces/pypi_prefix.cmake" "$interfaces/requirements-build.txt" \
            "${BASH_SOURCE[0]}" \
        | sha256sum | cut -c1-16
}

todo=()
for entry in "${packages[@]}"; do
    IFS='|' read -r pkg statement _ <<< "$entry"
    stamp="$venv/share/$pkg/mb_sim_build.stamp"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$(source_hash "$pkg")" ]] \
            && works "$pkg" "$statement"; then
        echo "$pkg: cached build in $venv"
    elif [[ ! -f "$stamp" ]] && works "$pkg" "$statement"; then
        echo "$pkg: provided by the environment, nothing to build"
    else
        todo+=("$entry")
    fi
done
[[ ${#todo[@]} -eq 0 ]] && exit 0

# with the uv of tools/setup_env.sh when it is there (the same versions, faster), else pip
if ! { [[ -x "$venv/bin/uv" ]] && "$venv/bin/uv" pip install --quiet --compile-bytecode \
        --python "$py" -r "$interfaces/requirements-build.txt"; }; then
    "$py" -m pip install --quiet -r "$interfaces/requirements-build.txt" 2>&1 \
        | { grep -v "is ignored: it is neither a file nor a directory" || true; }
fi

build="$(mktemp -d "${TMPDIR:-/tmp}/mb_sim_interfaces.XXXXXX")"
trap 'rm -rf "$build"' EXIT
export AMENT_PREFIX_PATH="$venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
export PATH="$venv/bin:$PATH"

for entry in "${todo[@]}"; do
    IFS='|' read -r pkg statement build_type <<< "$entry"
    start=$SECONDS
    echo "$pkg: building from $interfaces/$pkg into $venv"
    log="$build/$pkg.log"
    {
        cmake -S "$interfaces/$pkg" -B "$build/$pkg" \
            -DCMAKE_BUILD_TYPE="$build_type" \
            -DCMAKE_INSTALL_PREFIX="$venv" \
            -DCMAKE_PREFIX_PATH="$venv" \
            -DPython3_EXECUTABLE="$py" \
            -DPYTHON_EXECUTABLE="$py" \
            -DBUILD_TESTING=OFF \
            -DCMAKE_INSTALL_RPATH="$venv/lib" &&
        cmake --build "$build/$pkg" -j "$(nproc)" &&
        cmake --install "$build/$pkg"
    } > "$log" 2>&1 || { tail -n 80 "$log" >&2; echo "$pkg: build failed" >&2; exit 1; }
    if ! works "$pkg" "$statement"; then
        echo "$pkg: built, but it does not load:" >&2
        "$py" -c "$statement; T.__class__.__import_type_support__()" >&2 || true
        exit 1
    fi
    source_hash "$pkg" > "$venv/share/$pkg/mb_sim_build.stamp"
    echo "$pkg: installed into $venv in $((SECONDS - start)) s"
done
