"""How the kernels compile: linked kernels (`kernel_linking`), numba's typing cache made
cheap (`compile_speed`), worker processes compiling side by side (`parallel_compile`), the
step's compile planned as their jobs (`step_plan`), and what a compile says while it runs
(`compile_log`). `mb_sim._jit` installs them; the kernel cache is `mb_sim.kernel_cache`."""
