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

OUT=${OUT:-benchmarks/results/gpu}
mkdir -p "$OUT"
DATA=${1:-${ATTNREF_DATA:-}}
if [[ -z "$DATA" ]]; then
    for candidate in shared/data/tinyshakespeare/input.txt ../shared/data/tinyshakespeare/input.txt \
        "$HOME/.cache/attnref/tinyshakespeare.txt"; do
        if [[ -f "$candidate" ]]; then DATA=$candidate; break; fi
    done
fi
if [[ -z "$DATA" || ! -f "$DATA" ]]; then
    echo "gpu_check: no Tiny Shakespeare found; pass its input.txt as the first argument" >&2
    exit 2
fi
export ATTNREF_DATA=$DATA PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1
status=0

{
    nvidia-smi -L
    python3 -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda,
        "available", torch.cuda.is_available(),
        torch.cuda.get_device_name() if torch.cuda.is_available() else "")'
} 2>&1 | tee "$OUT/device.txt"

timeout 120 python3 -m pytest -q -rA -p no:cacheprovider --noconftest \
    tests/lm/test_graph_step.py tests/lm/test_window_sampler.py 2>&1 | tee "$OUT/tests.txt"
rc=${PIPESTATUS[0]}; [[ $status -eq 0 && $rc -ne 0 ]] && status=$rc

# shellcheck disable=SC2086  # BENCH_ARGS: extra options, e.g. "--device cpu --quick" to try it here
timeout 320 python3 benchmarks/gpu_step.py --data "$DATA" --out "$OUT/gpu_step.md" ${BENCH_ARGS:-} 2>&1 \
    | tee "$OUT/bench.txt"
rc=${PIPESTATUS[0]}; [[ $status -eq 0 && $rc -ne 0 ]] && status=$rc

echo "gpu_check: exit status $status; results in $OUT"
exit "$status"
