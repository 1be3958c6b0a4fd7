# Appended to .venv/bin/activate by tools/setup_env.sh (sh, bash and zsh).
# The ROS 2 wheels and the interface package builds install a ROS prefix at the venv root: make
# it the ament prefix and library path, and keep DDS discovery on this machine.
_mb_sim_prepend() {
    # _mb_sim_prepend VAR DIR: VAR=DIR:VAR without duplicates
    eval "_mb_sim_cur=\${$1:-}"
    case ":$_mb_sim_cur:" in
        *":$2:"*) ;;
        *) if [ -n "$_mb_sim_cur" ]; then eval "export $1=\"$2:\$_mb_sim_cur\""; else eval "export $1=\"$2\""; fi ;;
    esac
    unset _mb_sim_cur
}
_mb_sim_prepend AMENT_PREFIX_PATH "$VIRTUAL_ENV"
_mb_sim_prepend LD_LIBRARY_PATH "$VIRTUAL_ENV/lib"
unset -f _mb_sim_prepend
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
