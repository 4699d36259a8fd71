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

# shellcheck source=benchmarks/gpu_lib.sh
source "$(dirname "$0")/gpu_lib.sh"
gpu_setup gpu_stretch "${1:-}"

gpu_part 90 "$OUT/tests.txt" python3 -m pytest -q -rA -p no:cacheprovider --noconftest \
    tests/lm/test_graph_step.py tests/lm/test_window_sampler.py

# shellcheck disable=SC2086  # BABY_ARGS: extra options, e.g. "--device cpu --quick" to try it here
gpu_part 400 "$OUT/bench.txt" python3 benchmarks/baby_gpt.py --data "$DATA" --out "$OUT" \
    ${BABY_ARGS:-}

# shellcheck disable=SC2086  # SEEDS_ARGS: e.g. "--device cpu --steps 3 --reps 1" to try it here
GPU_APPEND=1 gpu_part 100 "$OUT/bench.txt" python3 benchmarks/seeds_vmap.py --device cuda \
    --shape q02 --seeds 1,3,8 --steps 100 --reps 3 --out "$OUT" ${SEEDS_ARGS:-}

echo "gpu_stretch: exit status $status; results in $OUT"
exit "$status"
