"""fusedkit: the modules behind fused_jit.py, one job each.

    config     paths, the headline shape, accuracy classes, route names
    model      the reference Model, KernelBench's inputs
    registry   the variants (kernels/NN_name.cu|cpp) and what their first line says
    jit        build on first use, cache across processes (load, general_kernel, backward_builds)
    routing    ModelNew, its routes, the fused_jit::dwsep_conv1d operator
    check      the shape battery, float64 reference, NaN poisoning, check
    timing     the timer, bench, ab
    sweeps     compile-time parameter sweeps, the shape sweep
    results    the append-only results log
    report     ladder table and plots, the roofline, a lesson's rungs beside the ones before, the README table
    trace      a FUSED_TRACE build's per-block event clocks: decode, summarize, draw the timeline
    export     the copy-paste KernelBench file
    cli        the command line
    notebook   helpers the lesson notebooks share

`import fused_jit as fj` gives all of the public names below.
"""
from .config import (ROOT, LAUNCHER, HEADLINE, TOLERANCE, DTYPES, DEFAULT_VARIANT, DEFAULT_EXPORT_VARIANT,
                     FUSED_TF32, FUSED_STRICT, FUSED_16BIT, TF32_TIES_AWAY, clone_target, GENERAL, EAGER, ROUTES, BACKWARDS, DEFAULT_BACKWARD, BASELINES, batch_size,
                     in_channels, out_channels, length, kernel_size, dilation)
from .model import Model, get_inputs, get_init_inputs, forward_args, copy_model
from .registry import Variant, variants, variant_info, tolerance
from .jit import (KernelBuildError, cuda_home, build_root, cuda_arch, source_hash, build_plan, tuned_table,
                  tuned_defines, defines_over_tuned, load, load_built, general_kernel, backward_build_spec,
                  backward_builds, build_entry)
from .prebuild import GPU_SUITE_BUILDS, read_build_list, build_one, prebuild
from .check import (shape_battery, wide_shapes, make_case, reference, eager_output, max_diff, rel_err, gradients, smem_poisoner,
                    tf32_rne, DW_WGRAD_OUTPUTS, dw_wgrad_case, SPLIT_OUTPUTS, split_case, silu_exhaustive, run_variant, check)
from .routing import (Route, ModelNew, choose_route, preferred_variant, probe_against_eager, ties_away_build,
                      ties_away_name, eager_forward, general_forward, eager_is_faster, eager_backward, dwsep_conv1d,
                      dwsep_conv1d_backward, reset_route_cache)
from .timing import (Timer, host_time_us, kernel_times, kernel_summary, interleaved_rows, training_step_fn, backward_fn, BuildModel, min_bytes, flops, copy_bandwidth, callable_for, cudnn_tf32,
                     deterministic_algorithms, bench, defines_str,
                     variant_spec, ab)
from .results import environment, git_commit, shape_cols, result_row, append_results, read_rows, read_results
from .sweeps import SWEEP_CHECK_SHAPES, build_quietly, sweep, shape_grid, shape_sweep
from .report import (ladder_table, plot_ladder, plot_shape_sweep, report, roofline_table, plot_roofline,
                     plot_rung_times, PEAK_FLOPS)
from .trace import decode_trace, trace_table, trace_summary, trace_walk, trace_walks, plot_trace, traced_build, traced_launch
from .export import export_modelnew
from .cli import main
