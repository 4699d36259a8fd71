# shellcheck shell=bash
# What benchmarks/gpu_check.sh and benchmarks/gpu_stretch.sh share, sourced by both:
#   gpu_setup NAME [PATH/TO/input.txt]  finds Tiny Shakespeare (the argument, $ATTNREF_DATA,
#       ../shared or shared/, .devdata/ or the user cache), exports the environment the
#       benchmarks need, makes $OUT (default benchmarks/results/gpu) and writes device.txt
#       (nvidia-smi -L, torch and CUDA versions); exits 2 with one line when no data is found
#   gpu_part SECONDS FILE COMMAND...  runs one part under its time limit, its output shown and
#       written to FILE (appended with GPU_APPEND=1); the first failing part's status is kept in
#       $status, and the next part runs all the same

gpu_setup() {
    local name=$1 candidate
    OUT=${OUT:-benchmarks/results/gpu}
    mkdir -p "$OUT"
    DATA=${2:-${ATTNREF_DATA:-}}
    if [[ -z "$DATA" ]]; then
        for candidate in shared/data/tinyshakespeare/input.txt \
            ../shared/data/tinyshakespeare/input.txt .devdata/input.txt \
            "$HOME/.cache/attnref/tinyshakespeare.txt"; do
            if [[ -f "$candidate" ]]; then DATA=$candidate; break; fi
        done
    fi
    if [[ -z "$DATA" || ! -f "$DATA" ]]; then
        echo "$name: no Tiny Shakespeare found; pass its input.txt as the first argument" >&2
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
}

gpu_part() {
    local seconds=$1 file=$2 rc
    shift 2
    if [[ ${GPU_APPEND:-0} == 1 ]]; then
        timeout "$seconds" "$@" 2>&1 | tee -a "$file"
    else
        timeout "$seconds" "$@" 2>&1 | tee "$file"
    fi
    rc=${PIPESTATUS[0]}
    if [[ $status -eq 0 && $rc -ne 0 ]]; then status=$rc; fi
}
