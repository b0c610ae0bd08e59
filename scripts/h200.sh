#!/usr/bin/env bash
# One GPU run on the H200 (run from the repo root by the device tool): build every CUDA variant, check
# the battery, compute-sanitizer memcheck + racecheck, bench (fp32 and bf16), GPU tests, notebooks.
#   scripts/h200.sh [install] [build] [check] [sanitize] [bench] [test] [test_sanitize] [kernelbench] [export_timing] [backward]
#                   [backward_ab] [train] [pw_numerics] [shapes] [knobs] [pairs] [targets] [skeleton] [launch_cost] [traces] [fetch_probe] [prebuild] [suite_builds]
#                   [ncu_mem] [notebooks]
#   scripts/h200.sh verify: every stage a launcher, general-path or training change needs (~12 min, more than one
#   device call allows: split it as `build test sanitize`, then `build export_timing kernelbench backward train shapes`)
#   (default: build check sanitize bench test). kernelbench needs KernelBench's src/ and wheels in .kb/ (ignored).
# New results rows go to $OUT/timings_new.csv (merged into results/timings.csv afterwards with
# `python scripts/merge_results.py`); everything printed is appended to $OUT/run.log. Python run beside it in
# the same call needs the same TORCH_EXTENSIONS_DIR (default /tmp/fused_ext; an ignored /.ext keeps builds between warm calls), or it rebuilds every extension.
set -uo pipefail
OUT=${OUT:-/tmp/h200_out}; mkdir -p "$OUT"
mkdir -p /tmp/fused_results
export PYTHONUNBUFFERED=1 FUSED_RESULTS=/tmp/fused_results/timings_new.csv TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-/tmp/fused_ext}
stages=${*:-build check sanitize bench test}
# verify: what a change to the launcher, the general path or the training path needs before anything is claimed
[ "$stages" = verify ] && stages="build test sanitize export_timing kernelbench backward train shapes" &&
  SANITIZE_VARIANTS=${SANITIZE_VARIANTS:-"general backward wgmma_tf32 wgmma_3xtf32 wgmma_bf16"}
log() { echo "=== $(date -u +%H:%M:%S) $*"; }
# TEST_ARGS (env) adds pytest arguments to the test stage, split on spaces (e.g. -x); TEST_K (env) is a -k
# expression passed whole (e.g. TEST_K="trains_with or opcheck": inside TEST_ARGS its quotes would not survive the
# split, and pytest took "or" for a file in the daa094e run).
# VARIANTS (env) restricts build/check/sanitize/bench to some variants; default: every CUDA variant.
# SANITIZE_VARIANTS (env) overrides the sanitized list; an entry may name a knob build, VARIANT:NAME=VALUE[,...].
VARIANTS=$(echo ${VARIANTS:-$(python3 fused_jit.py list | awk '$3 == "cuda" {print $2}')})  # one line: spliced into Python below
VARIANT_ARGS=$(for v in $VARIANTS; do printf -- '--variant %s ' "$v"; done)
# build_specs SPEC...: each variant or knob build (VARIANT[:NAME=VALUE,...]) in a process of its own, in parallel
build_specs() {
  for sp in "$@"; do python3 -c "import fused_jit as fj, time; t = time.time(); fj.load(*fj.variant_spec('$sp')); print('built $sp', round(time.time() - t, 1), 's')" & done
}
# ab_plan PLAN AGAINST: one `fused_jit.py ab` a line of PLAN ("SPEC [ab shape arguments]", ';' between lines), every
# build made first, in parallel; AGAINST=tree: SPEC (a knob build) against its variant's tree, AGAINST=clone: SPEC (a
# variant, a knob build or modelnew, whose build is DEFAULT_VARIANT's) against x.clone(); AGAINST=pair: a line is
# "SPEC_A SPEC_B [ab shape arguments]", two builds of any variants. Each A/B runs under a 120 s
# timeout, which also catches a setmaxnreg that waits for ever (85fa4b3)
ab_plan() {
  local plan=$1 against=$2 def sp args a b rc
  def=$(python3 -c 'import fused_jit as fj; print(fj.DEFAULT_VARIANT)')
  log "$against builds"
  build_specs $(echo "$plan" | tr ';' '\n' | awk -v t="$against" 'NF {print $1; if (t == "tree") {split($1, v, ":"); print v[1]}
    if (t == "pair") print $2}' |
    sed "s/^modelnew$/$def/" | sort -u)
  wait
  echo "$plan" | tr ';' '\n' | while read -r sp args; do
    [ -z "$sp" ] && continue
    if [ "$against" = tree ]; then a=${sp%%:*} b=$sp; elif [ "$against" = pair ]; then a=$sp; read -r b args <<< "$args"
    else a=$sp b=clone; fi
    log "ab $a $b $args"
    timeout 120 python3 fused_jit.py ab "$a" "$b" --reps ${KNOB_REPS:-200} $args < /dev/null 2>&1 | grep -v -i warn
    rc=${PIPESTATUS[0]}; [ "$rc" = 124 ] && echo "HUNG OR SLOW: ab $a $b $args (120 s)"; [ "$rc" != 0 ] && echo "ab exit $rc"
  done
}
run_sanitize() {
  log "compute-sanitizer"
  # (a knob build's log is named without ':', '=' and ',': the device tool brings back no file with such a name)
  for v in ${SANITIZE_VARIANTS:-$VARIANTS}; do for tool in memcheck racecheck; do echo "$tool $v"; done; done |
    xargs -P 7 -L 1 sh -c 'f=/tmp/san_$0_$(echo $1 | tr ":=," "___").log; timeout 400 compute-sanitizer --tool $0 --print-limit 5 python3 scripts/sanitize_case.py $1 > $f 2>&1; echo "$0 $1 exit=$? :: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|sanitize_case" $f | tr "\n" " ")"'
  grep -l -E "[1-9][0-9]* (errors|hazards)" /tmp/san_*.log | xargs -r -n1 sh -c 'echo "--- $0"; head -60 $0'
}
# suite_prebuild SECONDS: tests/gpu_builds.jsonl's builds in parallel under a limit; says so where the limit cut it (the
# builds left are then made inside the tests, one after another: 5da087f's calls, cut at 85 and 100 s)
suite_prebuild() {
  timeout "$1" python3 fused_jit.py prebuild 2>&1 | grep -v -i warn | grep -v "^built "
  [ "${PIPESTATUS[0]}" = 124 ] && echo "PREBUILD CUT at $1 s: the builds it left are made inside the tests, one after another"
}
run_tests() {
  # the whole suite (no TEST_K): tests/gpu_builds.jsonl's builds first, in parallel (one after another in the tests they
  # took 45-65 s each: 13 tests in the da5f1e8 run's 500 s); the builds the tests ask for are recorded in
  # $OUT/gpu_builds.jsonl (FUSED_BUILD_LOG), to refresh that list (a build it misses is made in its test, as before)
  if [ -z "${TEST_K:-}" ]; then
    log "prebuild tests/gpu_builds.jsonl"
    suite_prebuild ${PREBUILD_TIMEOUT:-420}
  fi
  log "pytest -m gpu"
  # (console_output_style=times: each test's line ends with its seconds, which a run cut short keeps too)
  # (sed -u and grep --line-buffered: a run cut short by the device call's limit still leaves every finished test's
  # line in gpu_tests.txt and the log; block-buffered, the aa3bfae run's left none)
  FUSED_BUILD_LOG=$OUT/gpu_builds.jsonl timeout 500 python3 -m pytest -m gpu tests/test_gpu.py -v -o console_output_style=times -p no:cacheprovider ${TEST_ARGS:-} ${TEST_K:+-k "$TEST_K"} 2>&1 | sed -u "/^=* test s[a-z]* starts =*$/d" | tee "$OUT/gpu_tests.txt" |
    grep --line-buffered -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed"
}
{
log "info"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
python3 -c "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.cuda.get_device_name())"
# the device's copy of the tree may carry a stale git HEAD: pass FUSED_COMMIT=<hash> in the device command
python3 -c "import fusedkit.results as r; print('results rows are logged under commit', r.git_commit())"
for stage in $stages; do
  case $stage in
  install)
    # the README's setup as a new user runs it there: torch and most of the list are preinstalled, the rest
    # (nbclient, jupytext, ...) from wheels carried in the ignored .whl/ (carry: [".whl"]; no network)
    log "pip install -r requirements.txt (from .whl)"
    timeout 180 python3 -m pip install -q --no-index --find-links .whl -r requirements.txt papermill 2>&1 | tail -5
    python3 -c "import jupytext, nbclient, ipykernel; print('requirements importable')" ;;
  build)
    log "build (parallel)"
    build_specs $VARIANTS
    python3 -c "import fused_jit; fused_jit.general_kernel(); fused_jit.smem_poisoner(); print('built general + poisoner')" &
    wait
    # a failed build stops the run here: every later stage would retry it and measure nothing (the 96fdd8d run)
    python3 -c "import fused_jit as fj; [fj.load(v) for v in '$VARIANTS'.split()]; fj.general_kernel()" > /tmp/build_check.log 2>&1 ||
      { log "BUILD FAILED: stopping"; grep -m 20 -E "error|Error" /tmp/build_check.log; break; } ;;
  check)
    log "check"; timeout 400 python3 fused_jit.py check $VARIANT_ARGS || echo "CHECK FAILED" ;;
  sanitize) run_sanitize ;;
  bench)
    # fp32 rows for the variants that take float32; bf16 and fp16 rows for those that take 16-bit input
    args_for() { python3 fused_jit.py list | awk -v vs="$VARIANTS" -v dt="$1" \
      'BEGIN {n = split(vs, a); for (i = 1; i <= n; i++) want[a[i]] = 1} want[$2] && $5 ~ dt {printf "--variant %s ", $2}'; }
    log "bench fp32"; timeout 400 python3 fused_jit.py bench $(args_for float32)
    B16=$(args_for bfloat16)
    if [ -n "$B16" ]; then
      log "bench bf16"; python3 fused_jit.py bench $B16 --dtype bfloat16 --no-baselines
      log "bench fp16"; python3 fused_jit.py bench $(args_for float16) --dtype float16 --no-baselines
    fi ;;
  test) run_tests ;;
  suite_builds)
    # the GPU suite's builds (tests/gpu_builds.jsonl) alone, given most of a device call (~7 min on 16 cores): the
    # whole suite is this stage in one call, then `test` in the next call on the same warm machine with the same
    # TORCH_EXTENSIONS_DIR (an ignored .ext); a prebuild cut short leaves its builds to the tests, one after another
    log "suite_builds tests/gpu_builds.jsonl"
    suite_prebuild ${PREBUILD_TIMEOUT:-560} ;;
  prebuild)
    # PREBUILD (env): builds (VARIANT[:NAME=VALUE,...]) the later stages or tests use, made first in parallel processes
    # (the GPU tests make theirs one after another: 45-65 s each for a knob build)
    log "prebuild"; build_specs ${PREBUILD:-}; wait ;;
  test_sanitize)
    # the GPU tests and the sanitizers side by side (neither is timed: no timing stage may run beside them); the
    # sanitizers' lines follow the tests'
    run_sanitize > /tmp/h200_sanitize_stage.log 2>&1 & san_pid=$!
    run_tests; wait $san_pid; cat /tmp/h200_sanitize_stage.log ;;
  kernelbench)
    log "KernelBench's own evaluation (eval_kernel_against_ref + static checker) of the exported ModelNew"
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/kbsite .kb/whl/*.whl
    PYTHONPATH=/tmp/kbsite:.kb/stubs timeout ${KB_TIMEOUT:-500} python3 scripts/kernelbench_eval.py --kernelbench .kb/src \
      --out "$OUT/kernelbench.csv" 2>&1 | grep -v "^\[Profiling\]\|^Trial\|Warning" ;;
  export_timing)
    log "the exported file under KernelBench's timer (scripts/export_timing.py)"
    (cd scripts && timeout 300 python3 export_timing.py) 2>&1 | grep -v -i "warn\|return forward_call" ;;
  backward)
    log "backward: gradients vs float64 and eager, fwd+bwd and bwd timed (scripts/backward_bench.py)"
    timeout 300 python3 scripts/backward_bench.py 2>&1 | grep -v -i "warn\|return forward_call" ;;
  backward_ab)
    # the backward kernel of earlier commits (.ab/REV/kernels, made with `git archive REV kernels | tar -x -C
    # .ab/REV`; carry [".ab"]) against the tree's, in one run; builds in parallel, then `wait` (not a pgrep loop:
    # the 3aeb90c run's `pgrep -f` matched its own command line and hung the call)
    log "backward A/B (scripts/backward_ab.py): ${AB_REVS:-every .ab/*}"
    revs=${AB_REVS:-$(ls .ab 2>/dev/null)}
    for r in $revs; do python3 -c "import fused_jit as fj, pathlib; fj.general_kernel(pathlib.Path('.ab/$r/kernels').resolve()); print('built .ab/$r')" & done
    wait
    timeout 300 python3 scripts/backward_ab.py $(for r in $revs; do printf 'rung_%s=.ab/%s/kernels ' "$r" "$r"; done) 2>&1 |
      grep -v -i warn ;;
  train)
    log "training check (scripts/train_check.py) and the operator's cost (scripts/op_overhead.py)"
    timeout 120 python3 scripts/train_check.py --out "$OUT" 2>&1 | grep -v -i warn
    timeout 90 python3 scripts/op_overhead.py 2>&1 | grep -v -i warn ;;
  pw_numerics)
    # which rounding eager's forward 1x1 conv has at each B and T (C 128), and cuDNN's kernels for it: where it is not
    # the TF32 kernels' (round to nearest even), ModelNew probes their ties-away build (FUSED_TF32_RNA), then the
    # general path (scripts/pw_forward_numerics.py)
    log "pw_numerics"
    timeout 120 python3 scripts/pw_forward_numerics.py 2>&1 | grep -v -i warn ;;
  shapes)
    log "shape sweep"
    timeout ${SHAPES_TIMEOUT:-300} python3 fused_jit.py shape-sweep ${SHAPES_ARGS:-} 2>&1 | grep -v -i "warn\|it/s\]\|return fn"
    cp results/shape_sweep.png "$OUT/" 2>/dev/null ;;
  knobs)
    # timing experiments against their variant's tree: one line of KNOB_PLAN (env; ';' between lines) a knob build
    # and the shape arguments of its A/B, "SPEC [ab args]"; each A/B (`ab`: y against float64, then bit for bit
    # against the tree, then 200 interleaved pairs) by ab_plan. The default plan is the next one to time; those
    # already timed are in git's history and docs/ladder.md (069c5c4's, 6162464's, 5100a4e's, ab64fd8's, 45c73fb's,
    # da5f1e8's and 43db5f8's ran on an H100 on 2026-12-05; e8074e6's (rung 11's x slots issued at once) on an H100 on
    # 2026-12-06). The plans before it, WG_TAIL_HALVES (e805dea), WG_X_BOXES / WG_X_PROMO (2229254), WG_L2_HINT
    # (26ec94f), WG_GRID_TILES (aec361f), WG_Y_ROWS (4fea1f2), WG_Y_FIRST (7cb870a), WG_X_HALVES and WG_DW_FIRST_SHARE
    # (dbf0c39), common.cuh's FUSED_SILU_GUARD_FORM (e24f214), WG_DW_STEAL (1cc62a4) and WG_DW_PIPE (59f6a10), were
    # slower and are gone. No knob against its own rung is prepared now (RS_SPLIT, against rung 10, is the pairs stage's), so
    # the default is the tool's floor: each class's kernel against a build of itself with one knob set to the value it
    # already has (the same SASS: scripts/sass_diff.py --define), at the shapes the plans time. Each line's ratio and
    # interval are what no change reads as there
    plan=${KNOB_PLAN:-"wgmma_wide:WG_DW_EXTRA_SHARE=15; wgmma_wide:WG_DW_EXTRA_SHARE=15 --B 33;
      wgmma_wide:WG_DW_EXTRA_SHARE=15 --B 64 --T 4096; wgmma_3xtf32:WG_CHAINS=2; wgmma_bf16:WG_SILU_LUT=1 --dtype bfloat16"}
    # KNOB_VARIANTS (env): only the lines of these variants
    [ -n "${KNOB_VARIANTS:-}" ] && plan=$(echo "$plan" | tr ';' '\n' | awk -v vs="$KNOB_VARIANTS" \
      'BEGIN {n = split(vs, a); for (i = 1; i <= n; i++) want[a[i]] = 1} {split($1, b, ":")} NF && want[b[1]] {printf "%s;", $0}')
    ab_plan "$plan" tree ;;
  targets)
    # issue 17's measure: a class's kernel against x.clone() of the same dtype, interleaved in one run (`ab SPEC clone`:
    # the ratio printed is the kernel's time over the clone's, the issue's targets: TF32 <= 1.15, strict <= 1.7, bf16
    # <= 1.25). TARGET_PLAN (env) as KNOB_PLAN: "SPEC [ab args]" lines, a SPEC a variant, a knob build or modelnew.
    # The default adds the TF32 and bf16 skeletons (FUSED_ABLATE=3: neither depthwise nor MMA, y wrong): a target under
    # its skeleton's ratio is out of reach of faster compute (no skeleton has run on an H200: docs/ladder.md, 2026-12-07)
    tplan=${TARGET_PLAN:-"modelnew; wgmma_wide:FUSED_ABLATE=3; wgmma_tf32; wgmma_3xtf32; wgmma_bf16 --dtype bfloat16;
      wgmma_bf16:FUSED_ABLATE=3 --dtype bfloat16"}
    ab_plan "$tplan" clone ;;
  pairs)
    # two builds of any variants against each other: one line of PAIR_PLAN (env; ';' between lines) an A/B, "SPEC_A
    # SPEC_B [ab args]", by ab_plan. The default times the one first timed 2026-12-07: rung 12's form with rung 10's
    # 3xTF32 split (wgmma_rs.cuh's RS_SPLIT; the strict class, 1e-6) against rung 10, the strict class's kernel:
    # two warpgroups of one x slot, one of two, four k-steps a chunk, and the first at K 3 and at B 64 T 4096
    pplan=${PAIR_PLAN:-"wgmma_3xtf32 wgmma_rs_tf32:RS_SPLIT=1,RS_X_SLOTS=1,RS_CHUNK=2;
      wgmma_3xtf32 wgmma_rs_tf32:RS_SPLIT=1,RS_X_SLOTS=2,RS_CHUNK=2; wgmma_3xtf32 wgmma_rs_tf32:RS_SPLIT=1;
      wgmma_3xtf32 wgmma_rs_tf32:RS_SPLIT=1,RS_X_SLOTS=1,RS_CHUNK=2 --K 3;
      wgmma_3xtf32 wgmma_rs_tf32:RS_SPLIT=1,RS_X_SLOTS=1,RS_CHUNK=2 --B 64 --T 4096"}
    ab_plan "$pplan" pair ;;
  skeleton)
    # the least each class's pipeline can take: its kernel with the depthwise and the MMA left out (scripts/ablate.py
    # mask 3; 1: the depthwise only; 7: x reads alone; 11: y writes alone; 15: neither; 19: W_pw's fill left out
    # too) against x.clone() of the same dtype in the same run, beside
    # the full kernel: a target under the skeleton's ratio is out of reach of any faster compute (2026-12-05, ab64fd8)
    # (every build first, in parallel: --build-only; B 33 puts 8 tiles on every SM: with the headline, a fixed part and a
    # part per round of tiles)
    log "memory skeletons against the clone"
    sk_runs=("wgmma_wide 0 1 3 7 11 15 19" "wgmma_3xtf32 0 1 3" "wgmma_bf16 0 1 3 7 11 --dtype bfloat16" "wgmma_wide 0 3 --shape B=33")
    # (the B 33 line's builds are the first line's: built once)
    for r in "${sk_runs[@]:0:3}"; do timeout 300 python3 scripts/ablate.py $r --build-only 2>&1 | grep -v -i warn & done; wait
    for r in "${sk_runs[@]}"; do timeout 240 python3 scripts/ablate.py $r --baseline clone 2>&1 | grep -v -i warn; done ;;
  traces)
    # where a block's time goes, tile by tile (scripts/trace_case.py at the headline): one line of TRACE_PLAN (env; ';'
    # between lines) a trace, "VARIANT [NAME=VALUE ...] [--dtype DTYPE] [--flush read]"; every FUSED_TRACE=1 build made
    # first, in parallel; each trace's csv and png into $OUT/traces.tgz (the device tool brings back at most 8 files). The
    # default: rung 09 (rung 13's kernel at the headline) as it is; its skeleton (FUSED_ABLATE=3: the bytes' walk
    # alone); with the GEMM warpgroups' depthwise share at 5%; x's reads alone (FUSED_ABLATE=7: thread 0 waits at once, so
    # its marks are x's landings); after a read flush. The same plan ran on an H100 at e9c42f0 (docs/ladder.md, runs of
    # 2026-12-07); on an H200 it tells whether the walk or the chain sets the period there
    log "traces"
    trplan=${TRACE_PLAN:-"wgmma_tf32; wgmma_tf32 FUSED_ABLATE=3; wgmma_tf32 WG_DW_EXTRA_SHARE=5; wgmma_tf32 FUSED_ABLATE=7;
      wgmma_tf32 --flush read"}
    # (the builds' `wait` inside the pipeline's subshell, whose children they are)
    echo "$trplan" | tr ';' '\n' | { while read -r v rest; do
      [ -n "$v" ] && { timeout 300 python3 scripts/trace_case.py $v $rest --build-only < /dev/null 2>&1 | grep -v -i warn & }
    done; wait; }
    mkdir -p "$OUT/traces"
    echo "$trplan" | tr ';' '\n' | while read -r v rest; do
      [ -z "$v" ] && continue
      n=$(echo "$v $rest" | sed 's/--dtype //; s/--flush /flush_/' | tr -d '=' | xargs | tr ' ' '_')
      log "trace $v $rest"
      timeout 90 python3 scripts/trace_case.py $v $rest --csv "$OUT/traces/$n.csv" --plot "$OUT/traces/$n.png" < /dev/null 2>&1 | grep -v -i warn
    done
    tar czf "$OUT/traces.tgz" -C "$OUT" traces && rm -rf "$OUT/traces" ;;
  fetch_probe)
    # how fast a block can fetch its x tiles, by which path (scripts/x_fetch_probe.cu: TMA boxes, per-row bulk copies,
    # cp.async, TMA with an evict_first hint; 1, 2 or 4 tiles in flight) beside the clone and a plain read of x, after the
    # L2 flush; FETCH_SHAPES (env; ';' between lines): the probe's arguments, "esize B C T TILE_T reps [method [flush
    # [busy]]]" (busy: cycles the skeletons spin a tile, a stand-in for compute)
    # (esize 4 float32, 2 bf16; method -1 every path and the skeletons, 4 the skeletons alone: x in, y = x out;
    # flush 0 bench's, 1 none: x left in L2, 2 a read: clean lines)
    log "x fetch probe"
    nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I kernels scripts/x_fetch_probe.cu -o /tmp/x_fetch_probe 2>&1 |
      grep -v -i warn
    # (the default: every path and skeleton at the headline, float32 and bf16; the skeletons with 2000 busy cycles a tile;
    # the tma path with x left in L2 and after a read flush)
    echo "${FETCH_SHAPES:-"4 16 128 2048 64 50; 2 16 128 2048 64 50; 4 16 128 2048 64 30 4 0 2000; 2 16 128 2048 64 30 4 0 2000;
      4 16 128 2048 64 50 0 1; 4 16 128 2048 64 50 0 2"}" | tr ';' '\n' | while read -r a; do
      [ -z "$a" ] && continue
      log "x_fetch_probe $a"; timeout 120 /tmp/x_fetch_probe $a
    done ;;
  launch_cost)
    # the skeleton's fixed part: empty kernels of the TF32 block's size with and without its shared memory, a 64 KB
    # fill, the clone (and, without LAUNCH_NO_RUNG=1, rung 13 with neither reads nor writes) under bench's timer
    log "launch cost (scripts/launch_cost.py)"
    timeout 300 python3 scripts/launch_cost.py ${LAUNCH_NO_RUNG:+--no-rung} 2>&1 | grep -v -i warn ;;
  ablate)
    for v in ${ABLATE_VARIANTS:-warp_specialized}; do
      log "ablate $v"; timeout 300 python3 scripts/ablate.py $v 2>&1 | grep -v -i warn
    done ;;
  sweep)
    log "sweep"
    timeout 500 python3 fused_jit.py sweep tf32_mma WARPS_M=4,8 WARPS_N=1,2,4 WARP_M=16,32 WARP_N=16,32 --reps 50
    [ -z "${TC_GRID:-}" ] && timeout 400 python3 fused_jit.py sweep vectorized_pipelined TILE_T=32,64,128 BLOCKS_PER_SM=1,2 IC_CHUNK=16,32 --reps 50
    cp results/tuned.json "$OUT/" ;;
  sweep_ws)
    log "sweep warp_specialized"
    timeout 400 python3 fused_jit.py sweep warp_specialized ${WS_GRID:-WARPS_M=4,8 WARPS_N=1,2 WARP_M=16,32 WARP_N=32,64 PRODUCER_WARPS=4,8} --reps 50 | grep -v "^$"
    cp results/tuned.json "$OUT/" ;;
  sweep_wg)
    log "sweep wgmma rungs (09 tf32, 10 3xtf32, 11 bf16)"
    timeout 300 python3 fused_jit.py sweep wgmma_tf32 ${WG_GRID:-TILE_T=32,64 WARPGROUPS=2,4} --reps 100 | grep -v "^$"
    timeout 300 python3 fused_jit.py sweep wgmma_3xtf32 ${WG3_GRID:-TILE_T=16,32 WARPGROUPS=2,4 WG_CHAINS=1,2,4} --reps 100 | grep -v "^$"
    timeout 300 python3 fused_jit.py sweep wgmma_bf16 ${WGB_GRID:-TILE_T=64,128 WARPGROUPS=2,4} --reps 100 --dtype bfloat16 | grep -v "^$"
    cp results/tuned.json "$OUT/" ;;
  sweep2)
    log "sweep 3xtf32 + bf16"
    timeout 300 python3 fused_jit.py sweep 3xtf32_mma WARPS_M=4,8 WARPS_N=2,4 WARP_M=16,32 WARP_N=16,32 --reps 50 | grep -v "^$"
    timeout 300 python3 fused_jit.py sweep bf16_io WARPS_M=4,8 WARPS_N=2,4 WARP_M=16,32 WARP_N=16,32 --reps 50 --dtype bfloat16
    cp results/tuned.json "$OUT/" ;;
  ncu)
    log "ncu"
    for v in ${NCU_VARIANTS:-tf32_mma vectorized_pipelined}; do
      # NCU_REGEX: the kernels to profile (the default also matches PyTorch's vectorized_elementwise kernels: for the
      # backward use NCU_REGEX=dw_silu_backward; the 62c86ae run profiled a PyTorch kernel instead)
      timeout 200 ncu --clock-control none --launch-skip 2 --launch-count 1 --kernel-name regex:"${NCU_REGEX:-vectorized|tc_|wg_}" \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
        --section InstructionStats --section MemoryWorkloadAnalysis --section SourceCounters --print-details all \
        python3 scripts/ncu_case.py $v > "$OUT/ncu_$v.txt" 2>&1; echo "ncu $v exit $?"
    done ;;
  ncu_mem)
    # DRAM bytes, throughput and L2 hit rate of the skeletons' x reads alone (FUSED_ABLATE=7) and whole skeletons (3),
    # each under the same ncu (caches flushed before each pass, as bench's timer flushes L2; docs/ladder.md, the runs of
    # a631394 and e805dea). x.clone() is a cudaMemcpy, which ncu does not profile (e805dea's clone lines came back empty):
    # the clone's side is bench's time. NCU_MEM_SPECS (env): SPEC[@DTYPE] ..., SPEC a variant or a knob build (ab's form)
    log "ncu memory: the skeletons' reads"
    specs=${NCU_MEM_SPECS:-"wgmma_wide:FUSED_ABLATE=7 wgmma_wide:FUSED_ABLATE=3 wgmma_bf16:FUSED_ABLATE=7@bfloat16 wgmma_bf16:FUSED_ABLATE=3@bfloat16"}
    build_specs $(for sd in $specs; do echo "${sd%@*}"; done | sort -u); wait
    for sd in $specs; do
      sp=${sd%@*}; dt=float32; [ "$sd" != "$sp" ] && dt=${sd#*@}
      timeout 150 ncu --clock-control none --profile-from-start off --launch-skip 2 --launch-count 1 \
        --kernel-name regex:"elementwise|wg_" --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct python3 scripts/ncu_case.py "$sp" "$dt" 2>&1 |
        grep -E "^ +(dram__|gpu__time|lts__)|ERROR|Context [0-9]"
      echo "ncu $sd exit ${PIPESTATUS[0]}"
    done ;;
  diagnose)
    log "diagnose"; timeout 200 python3 scripts/diagnose_timing.py 2>&1 | grep -v -i warn ;;
  notebooks)
    log "notebooks"
    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .gpu-wheels/*.whl 2>&1 | grep -v "Target directory"
    export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH; python3 -m ipykernel install --user --name python3 >/dev/null
    mkdir -p "$OUT/nb"
    for nb in ${NOTEBOOKS:-notebooks/*.ipynb}; do
      python3 -m papermill --cwd notebooks "$nb" "$OUT/nb/$(basename "$nb")" -k python3 --log-level WARNING && echo "executed $nb" || echo "NOTEBOOK FAILED $nb"
    done
    # the device tool returns at most 8 files from $OUT: the executed notebooks travel as one archive
    tar czf "$OUT/notebooks.tgz" -C "$OUT" nb && rm -rf "$OUT/nb" ;;
  esac
  [ -f "$FUSED_RESULTS" ] && cp "$FUSED_RESULTS" "$OUT/timings_new.csv"
done
log "done"
} 2>&1 | tee -a "$OUT/run.log"  # -a: a second invocation in one call adds to the log
