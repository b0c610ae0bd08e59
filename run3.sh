#!/bin/bash
export FUSED_COMMIT=10b5581 TORCH_EXTENSIONS_DIR=$PWD/.ext PYTHONUNBUFFERED=1 FUSED_RESULTS=$OUT/rows.csv
{
echo "=== $(date -u +%T) info"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
echo "=== $(date -u +%T) builds (parallel)"
python3 -c "import fused_jit as fj; fj.general_kernel(); fj.smem_poisoner(); print('built general')" &
python3 -c "import fused_jit as fj; from pathlib import Path; fj.general_kernel(Path('.ab/base/kernels').resolve()); print('built base')" &
python3 -c "import fused_jit as fj; fj.load('wgmma_wide'); print('built wgmma_wide')" &
wait
echo "=== $(date -u +%T) sanitizers (background) + GPU tests"
(timeout 300 compute-sanitizer --tool memcheck --print-limit 5 python3 scripts/sanitize_case.py backward > /tmp/san_mem.log 2>&1; echo "memcheck exit=$?") > /tmp/san_mem.rc &
(timeout 300 compute-sanitizer --tool racecheck --print-limit 5 python3 scripts/sanitize_case.py backward > /tmp/san_race.log 2>&1; echo "racecheck exit=$?") > /tmp/san_race.rc &
timeout 250 python3 -m pytest -q -m gpu tests/test_gpu.py -k "folded_finish or dw_kernel_backward_writes or trains_with" 2>&1 | tail -30
wait
cat /tmp/san_mem.rc /tmp/san_race.rc; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|sanitize_case" /tmp/san_mem.log /tmp/san_race.log
echo "=== $(date -u +%T) backward ab (folded finish)"
python3 scripts/backward_ab.py base=.ab/base/kernels --no-fold --reps 100 --profile
echo "=== $(date -u +%T) backward bench"
timeout 200 python3 scripts/backward_bench.py
echo "=== $(date -u +%T) done"
} > $OUT/log.txt 2>&1
