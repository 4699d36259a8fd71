"""Where a run computes and in what precision: the device, the CPU's bf16 flags, autocast.

`resolve_device` and `resolve_precision` turn ``--device`` and ``--precision`` into what the
training loop (`attention_ref.lm.train.train`) runs with; `autocast` is the context of every
forward pass (the step's, `attention_ref.lm.step`, and the evaluation's,
`attention_ref.lm.evaluation`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import torch

from attention_ref.lm.config import DEVICES, PRECISIONS


def resolve_device(name: str) -> torch.device:
    """``auto`` picks cuda, then mps, then cpu; an explicit device must be available."""
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda was asked for but CUDA is not available here")
    if name == "mps" and not torch.backends.mps.is_available():
        raise ValueError("--device mps was asked for but MPS is not available here")
    if name not in DEVICES:
        raise ValueError(f"unknown device {name!r}; choose one of: {', '.join(DEVICES)}")
    return torch.device(name)


#: the CPU flags of native bf16 arithmetic (AVX-512 BF16, AMX); without them bf16 is emulated
CPU_BF16_FLAGS: frozenset[str] = frozenset({"avx512_bf16", "amx_bf16"})


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's feature flags (Linux ``/proc/cpuinfo``); empty where that file is missing."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def resolve_precision(
    name: str,
    device: torch.device,
    flags: frozenset[str] | None = None,
    cuda_bf16: bool | None = None,
) -> str:
    """``fp32`` or ``bf16``: ``auto`` takes bf16 on a CPU whose ``flags`` (default:
    `cpu_flags`) include one of `CPU_BF16_FLAGS`, and on a CUDA GPU that computes bf16
    (``cuda_bf16``, default ``torch.cuda.is_bf16_supported()``: Ampere and later); fp32
    elsewhere (MPS, older GPUs). With the step replayed as one CUDA graph (``attnref train``'s
    default on CUDA) the GPU is no longer bound by launching kernels, and bf16 is the faster
    arm there: 0.847 vs 1.126 ms a step at batch 32 on one H100, torch 2.11 (issue 33,
    benchmarks/results/gpu-h100/gpu_step.json); eager, where launching kernels sets the pace,
    bf16 measured 0.82x of fp32 in the same run (4.592 vs 3.744 ms). An explicit ``bf16`` is
    honoured everywhere (on CPUs without bf16 instructions it is emulated: slow).
    """
    if name not in PRECISIONS:
        raise ValueError(f"--precision must be one of {', '.join(PRECISIONS)}, got {name!r}")
    if name != "auto":
        return name
    if device.type == "cpu":
        return "bf16" if CPU_BF16_FLAGS & (cpu_flags() if flags is None else flags) else "fp32"
    if device.type == "cuda":
        supported = torch.cuda.is_bf16_supported() if cuda_bf16 is None else cuda_bf16
        return "bf16" if supported else "fp32"
    return "fp32"


def autocast(
    device: torch.device, precision: str, *, cache: bool = True
) -> contextlib.AbstractContextManager[Any]:
    """The context of every forward pass: bf16 autocast for ``bf16``, nothing for ``fp32``.

    ``cache=False`` for a step that is captured in a CUDA graph (autocast's cache of cast
    weights must not outlive the capture); every weight is cast once per forward here, so
    the cache saves nothing and the numbers are the same either way.
    """
    if precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16, cache_enabled=cache)
    return contextlib.nullcontext()
