#!/usr/bin/env bash
# Issue 33's GPU checks after benchmarks/gpu_check.sh, in one go, from the repository root of a
# CUDA machine:   bash benchmarks/gpu_stretch.sh [PATH/TO/input.txt]
# Needs python3 with torch (CUDA), numpy and pytest; no MLflow, no network. Writes under $OUT
# (default benchmarks/results/gpu): device.txt (nvidia-smi -L, torch and CUDA versions),
# tests.txt (the CUDA tests of tests/lm/test_graph_step.py, dropout in the graph among them, and
# tests/lm/test_window_sampler.py, run without tests/conftest.py), baby_gpt.json/.md
# (benchmarks/baby_gpt.py: attnref train --preset nanogpt-shakespeare-char against nanoGPT's own
# train.py config/train_shakespeare_char.py, to a validation loss of 1.47), seeds_vmap.json/.md
# (benchmarks/seeds_vmap.py at Q02's shape on the GPU: N seeds at once against one after the
# other) and bench.txt (both benchmarks' output). Each part has its own time limit (at most
# 90 + 400 + 100 s: 9.8 minutes; about 5 expected on an H200), and a failing part does not stop
# the next one (the exit status is the first failure's).
set -uo pipefail

OUT=${OUT:-benchmarks/results/gpu}
mkdir -p "$OUT"
DATA=${1:-${ATTNREF_DATA:-}}
if [[ -z "$DATA" ]]; then
    for candidate in shared/data/tinyshakespeare/input.txt ../shared/data/tinyshakespeare/input.txt \
        .devdata/input.txt "$HOME/.cache/attnref/tinyshakespeare.txt"; do
        if [[ -f "$candidate" ]]; then DATA=$candidate; break; fi
    done
fi
if [[ -z "$DATA" || ! -f "$DATA" ]]; then
    echo "gpu_stretch: no Tiny Shakespeare found; pass its input.txt as the first argument" >&2
    exit 2
fi
export ATTNREF_DATA=$DATA PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
status=0

{
    nvidia-smi -L
    python3 -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda,
        "available", torch.cuda.is_available(),
        torch.cuda.get_device_name() if torch.cuda.is_available() else "")'
} 2>&1 | tee "$OUT/device.txt"

timeout 90 python3 -m pytest -q -rA -p no:cacheprovider --noconftest \
    tests/lm/test_graph_step.py tests/lm/test_window_sampler.py 2>&1 | tee "$OUT/tests.txt"
rc=${PIPESTATUS[0]}; [[ $status -eq 0 && $rc -ne 0 ]] && status=$rc

# shellcheck disable=SC2086  # BABY_ARGS: extra options, e.g. "--device cpu --quick" to try it here
timeout 400 python3 benchmarks/baby_gpt.py --data "$DATA" --out "$OUT" ${BABY_ARGS:-} 2>&1 \
    | tee "$OUT/bench.txt"
rc=${PIPESTATUS[0]}; [[ $status -eq 0 && $rc -ne 0 ]] && status=$rc

# shellcheck disable=SC2086  # SEEDS_ARGS: e.g. "--device cpu --steps 3 --reps 1" to try it here
timeout 100 python3 benchmarks/seeds_vmap.py --device cuda --shape q02 --seeds 1,3,8 \
    --steps 100 --reps 3 --out "$OUT" ${SEEDS_ARGS:-} 2>&1 | tee -a "$OUT/bench.txt"
rc=${PIPESTATUS[0]}; [[ $status -eq 0 && $rc -ne 0 ]] && status=$rc

echo "gpu_stretch: exit status $status; results in $OUT"
exit "$status"
