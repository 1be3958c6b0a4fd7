#!/usr/bin/env bash
# Create or update the project's virtual environment: library, test and ROS 2 (Jazzy wheels)
# dependencies, the fallback build of the interface packages the wheels lack (tf2_msgs,
# simulation_interfaces), the package itself (editable) registered with ament
# like a colcon install, and the additions to bin/activate that make `sim_node`, rclpy and
# tf2_msgs work in an activated shell.
#
# Usage: tools/setup_env.sh [VENV]     (VENV defaults to .venv)
#
# Re-runs are fast: a stamp in the venv records a hash of every input below, and nothing is
# installed while it matches. Set MB_SIM_FORCE_ENV=1 to reinstall anyway.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="${1:-.venv}"
python="${PYTHON:-python3}"
stamp="$venv/.mb_sim_env.stamp"

inputs=(requirements.txt requirements-ros.txt requirements-dev.txt
        tools/setup_env.sh tools/build_interfaces.sh tools/activate_hook.sh
        setup.py setup.cfg package.xml)
# The launch files' names too: each is linked into the venv's share/mb_sim/launch below.
hash="$( (cat "${inputs[@]}"; ls launch; find tools/interfaces -type f -print0 | sort -z \
          | xargs -0 cat) | sha256sum | cut -c1-16)"

if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$hash" \
      && -z "${MB_SIM_FORCE_ENV:-}" ]]; then
    exit 0
fi

start=$SECONDS
if [[ ! -x "$venv/bin/python" ]]; then
    echo "env: creating $venv with $("$python" --version 2>&1)"
    if ! "$python" -m venv "$venv"; then
        echo "env: '$python -m venv' failed; on Debian/Ubuntu: apt-get install python3-venv" >&2
        rm -rf "$venv"
        exit 1
    fi
fi
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)

quiet_pip() {
    # pip warns about every package on each unreachable extra index of a machine's pip.conf
    "${pip[@]}" "$@" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
}

# uv installs the same versions as pip (PyPI's newest that fit), downloading, unpacking and
# compiling the bytecode in parallel: about 40 s here where pip takes two minutes. (The
# bytecode matters: where PYTHONDONTWRITEBYTECODE is set, every process would compile the
# modules it imports from source, numpy's and rclpy's included.) Where uv cannot be had, or
# fails (no PyPI but the mirror of a pip.conf, which uv does not read), pip does it all.
install_requirements() {  # requirement files...
    local args=()
    for file in "$@"; do args+=(-r "$file"); done
    if [[ -x "$venv/bin/uv" ]] || "${pip[@]}" uv > /dev/null 2>&1; then
        if "$venv/bin/uv" pip install --quiet --compile-bytecode --python "$venv/bin/python" \
                "${args[@]}"; then
            return 0
        fi
        echo "env: uv could not install them; pip installs them instead"
    fi
    quiet_pip "${args[@]}"
}

echo "env: installing dependencies (requirements*.txt)"
install_requirements requirements-dev.txt requirements-ros.txt

echo "env: interface packages (tf2_msgs, simulation_interfaces)"
bash tools/build_interfaces.sh "$venv"

echo "env: installing mb_sim (editable)"
quiet_pip --no-deps --use-pep517 -e .

# The venv root is an ament prefix (the ROS wheels install there): register mb_sim in it as
# colcon would, so `ros2 pkg prefix mb_sim`, `ros2 launch mb_sim ...` and `ros2 run mb_sim ...`
# find it. share/ and lib/ point into this checkout, so edits show at once (as
# `colcon build --symlink-install`).
echo "env: registering mb_sim with ament in $venv"
index="$venv/share/ament_index/resource_index/packages"
mkdir -p "$index" "$venv/share/mb_sim" "$venv/lib/mb_sim"
: > "$index/mb_sim"
for item in package.xml urdf config; do
    ln -sfn "$root/$item" "$venv/share/mb_sim/$item"
done
# `ros2 launch` looks for launch files with os.walk, which does not enter a linked directory
rm -rf "$venv/share/mb_sim/launch"
mkdir -p "$venv/share/mb_sim/launch"
for file in launch/*.py; do
    ln -sfn "$root/$file" "$venv/share/mb_sim/$file"
done
for script in sim_node demo_controller quadruped_controller diff_drive_controller replay \
              viewer; do
    if [[ -x "$venv/bin/$script" ]]; then
        ln -sfn "../../bin/$script" "$venv/lib/mb_sim/$script"
    fi
done

# Shell additions for `source .venv/bin/activate`, replaced on every run.
activate="$venv/bin/activate"
begin="# >>> mb_sim ROS environment >>>"
end="# <<< mb_sim ROS environment <<<"
sed -i "/^$begin\$/,/^$end\$/d" "$activate"
{
    echo "$begin"
    cat tools/activate_hook.sh
    echo "$end"
} >> "$activate"

echo "$hash" > "$stamp"
echo "env: ready in $((SECONDS - start)) s ($venv)"
