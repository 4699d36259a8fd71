#!/usr/bin/env bash
# The GPU checks of issue 33, in one go, from the repository root of a CUDA machine:
#   bash benchmarks/gpu_check.sh [PATH/TO/input.txt]
# Needs python3 with torch (CUDA), numpy and pytest; no MLflow, no network. Writes under $OUT
# (default benchmarks/results/gpu): device.txt (nvidia-smi -L, torch and CUDA versions),
# tests.txt (the CUDA tests of tests/lm/test_graph_step.py and tests/lm/test_window_sampler.py,
# run without tests/conftest.py, which imports hypothesis), gpu_step.md/.json and bench.txt
# (benchmarks/gpu_step.py: the step table, the whole runs, nanoGPT's own train.py compiled;
# the results file is rewritten after each part).
# About 4 minutes on an H100 (at most 120 + 320 s: 7.3 minutes); each part has its own time limit,
# and a failing part does not stop the next one (the exit status is the first failure's).
set -uo pipefail

# shellcheck source=benchmarks/gpu_lib.sh
source "$(dirname "$0")/gpu_lib.sh"
gpu_setup gpu_check "${1:-}"

gpu_part 120 "$OUT/tests.txt" python3 -m pytest -q -rA -p no:cacheprovider --noconftest \
    tests/lm/test_graph_step.py tests/lm/test_window_sampler.py

# shellcheck disable=SC2086  # BENCH_ARGS: extra options, e.g. "--device cpu --quick" to try it here
gpu_part 320 "$OUT/bench.txt" python3 benchmarks/gpu_step.py --data "$DATA" \
    --out "$OUT/gpu_step.md" ${BENCH_ARGS:-}

echo "gpu_check: exit status $status; results in $OUT"
exit "$status"
