"""What the pages of today's attention claim, computed where the pages and the tests can both
call it: the parts of Q02's model a change of attention leaves (GQA page), the decode-step
checks of the KV-cache page, the recorded class's counts (teaching page), the two recordings
of one seed (variants page). Each function returns numbers; the pages put them in words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attention_ref.lm.config import ModelConfig

#: the parts `model_parts` reports, the two LayerNorms of each block and the final one as one
MODEL_PARTS = ("embeddings", "attention", "MLP", "LayerNorm", "output head")


def model_parts(cfg: ModelConfig) -> dict[str, int]:
    """The parameters of the character GPT built from ``cfg``, by part (`MODEL_PARTS`), read
    off the model itself (`attention_ref.experiments.model_parts.part_of` names each tensor)."""
    import torch

    from attention_ref.experiments.model_parts import parameter_groups
    from attention_ref.lm.model import CharGPT

    with torch.device("meta"):  # shapes only
        model = CharGPT(cfg)
    groups = parameter_groups((n, p.numel()) for n, p in model.named_parameters())
    out = dict.fromkeys(MODEL_PARTS, 0)
    for part, n in groups.items():
        out["LayerNorm" if "LayerNorm" in part else part] += n
    return out


# ------------------------------------------------------------------------ the KV-cache page


@dataclass(frozen=True)
class DecodeCheck:
    """The KV-cache page's check: a random model with GQA, RoPE and a window of ``w`` keys,
    decoded token by token from an empty cache (float64, seed 0), against the full pass, and
    one step against PyTorch's kernel with the step's own mask and with ``is_causal=True``."""

    n: int
    h: int
    g: int
    w: int
    cached_heads: int
    cached_tokens: int
    #: decoded rows against the full windowed causal pass
    decode_gap: float
    #: the last decoded row against SDPA given the step's window mask over every cached key
    windowed_sdpa_gap: float
    #: SDPA with ``is_causal=True`` against the decoded row (its mask sees key 0 only)
    is_causal_off: float
    #: ``is_causal=True`` gives each head the value of token 0
    is_causal_sees_key_0: bool
    #: SDPA with no mask over every cached key against the decoded (windowed) row: what the
    #: window changes, a different row
    no_mask_off: float


def decode_check() -> DecodeCheck:
    """The numbers of `DecodeCheck`, computed by the reference functions."""
    import torch
    import torch.nn.functional as F

    from attention_ref import reference as ref
    from attention_ref.reference import gqa, kv_cache, windows
    from attention_ref.reference.attention import merge_heads
    from attention_ref.reference.spec import ROPE_BASE

    gen = torch.Generator().manual_seed(0)
    n, d_model, h, g, d_k, w = 8, 6, 4, 2, 4, 3
    X = torch.randn(n, d_model, generator=gen, dtype=torch.float64)
    W_Q = torch.randn(h, d_model, d_k, generator=gen, dtype=torch.float64)
    W_K, W_V = (torch.randn(g, d_model, d_k, generator=gen, dtype=torch.float64) for _ in range(2))
    full = ref.masked_multihead_attention(
        X, W_Q, W_K, W_V, rope_base=ROPE_BASE, M=windows.sliding_window_mask(n, w)
    ).output
    cache, rows = kv_cache.empty_cache(g, d_k, d_k), []
    for s in range(n):
        step = kv_cache.decode_step(
            X[s : s + 1], cache, W_Q, W_K, W_V, rope_base=ROPE_BASE, window=w
        )
        cache = step.cache
        rows.append(step.output)
    decoded = merge_heads(step.h_t)  # the last row, as the heads' concat: (h, 1, d) -> (1, h*d)
    q, K, V = step.q, cache.K, cache.V  # one query (h, 1, d_k) against every cached key

    def sdpa(**kw: Any) -> Any:
        return merge_heads(F.scaled_dot_product_attention(q, K, V, enable_gqa=True, **kw))

    allowed = step.M == 0  # the step's own mask: the window's keys only
    causal = F.scaled_dot_product_attention(q, K, V, enable_gqa=True, is_causal=True)
    return DecodeCheck(
        n=n,
        h=h,
        g=g,
        w=w,
        cached_heads=K.shape[0],
        cached_tokens=cache.length,
        decode_gap=float((torch.cat(rows) - full).abs().max()),
        windowed_sdpa_gap=float((sdpa(attn_mask=allowed) - decoded).abs().max()),
        is_causal_off=float((merge_heads(causal) - decoded).abs().max()),
        is_causal_sees_key_0=bool(torch.allclose(causal, gqa.repeat_kv(V, h)[:, :1, :])),
        no_mask_off=float((sdpa() - decoded).abs().max()),
    )


#: the contexts of the KV-cache page's table of Llama 3 8B's cache
KV_CONTEXTS = (1024, 8192, 32768, 131072)


def beyond_context(context: int, preset: str = "llama-3-8b") -> bool:
    """Whether ``context`` tokens are more than the preset model reads (Llama 3 8B: 8,192)."""
    from attention_ref.worked.kv_heads import KV_PRESETS

    return context > KV_PRESETS[preset].context


# ------------------------------------------------------------------- the recorded class


@dataclass(frozen=True)
class ClassClaims:
    """What the teaching page says of the recorded class (``class-homework.json``)."""

    #: submissions stored while on time (the first, concurrent, phase) and after the due time
    on_time: int
    late: int
    #: the students who sent in the first phase (a student who only sent late is not one)
    on_time_students: int
    #: the exercise's steps, and the graded answers with all of them right
    steps: int
    every_step: int
    #: graded answers that gave only some steps and got every given step right
    partial_all_right: int
    #: their students, and theirs
    every_step_students: tuple[str, ...]
    partial_students: tuple[str, ...]


def class_claims(record: Mapping[str, Any]) -> ClassClaims:
    """`ClassClaims` from the recorded class: the late submissions are the gradebook's late
    rows (each late student sent one answer after the due time), the on-time ones the rest of
    what was stored, sent by the students with more submissions than their late one;
    ``all_right`` of the summary splits into answers with every step of the
    exercise and partial answers whose given steps are all right."""
    graded = [g for g in record["gradebook"] if g["status"] == "graded"]
    steps = max(g["steps_given"] for g in graded)
    full = tuple(g["student"] for g in graded if g["steps_right"] == g["steps_given"] == steps)
    partial = tuple(
        g["student"] for g in graded if 0 < g["steps_right"] == g["steps_given"] < steps
    )
    late = record["counts"]["late_rows"]
    on_time_students = sum(1 for g in record["gradebook"] if g["attempts"] > bool(g["late"]))
    return ClassClaims(
        on_time=record["counts"]["stored"] - late,
        late=late,
        on_time_students=on_time_students,
        steps=steps,
        every_step=len(full),
        partial_all_right=len(partial),
        every_step_students=full,
        partial_students=partial,
    )


#: the class server's access table in Portuguese (the code and its record name the roles and
#: the accesses in English): one home for every block of the Portuguese teaching page
ROLE_PT = {"admin": "admin", "teacher": "professor", "student": "aluno", "no account": "sem conta"}
ACCESS_PT = {
    "public": "público",
    "read": "leitura",
    "own account": "a própria conta",
    "create run": "criar run",
    "own run": "o próprio run",
    "create model": "criar modelo",
    "own model": "o próprio modelo",
    "own artifact": "o próprio artefato",
    "own registered model": "o próprio modelo registrado",
    "teacher": "professor",
}


#: how a record says it was made, per language: by its command, or that none was recorded
MADE_BY = {
    "en": ("made by `{command}`", "the command that made it was not recorded with it"),
    "pt": ("feito por `{command}`", "o comando que o fez não foi registrado com ele"),
}


def made_by(conditions: Mapping[str, Any], lang: str = "en") -> str:
    """The command a recording was made by (its ``conditions["command"]``, written by
    ``tools/record_class.py``), in words; a record made before the command was recorded says
    so, never a command guessed for it."""
    said, unsaid = MADE_BY[lang]
    command = conditions.get("command")
    return said.format(command=command) if command else unsaid


#: when and on what a load record ran, per language: its date and commit where it names them
RECORDED_ON = {
    "en": {
        "named": "Recorded {when} at commit {commit}, with {workers} application server(s)",
        "unnamed": "The record names neither its date nor its commit (the recorder did not keep "
        "them then); it ran {workers} application server(s)",
        "default": ", where `attnref server start` now starts {default} behind the edge: the "
        "figures are not those of today's default.",
        "same": ", as `attnref server start` does by default.",
    },
    "pt": {
        "named": "Registrado em {when} no commit {commit}, com {workers} servidor(es) de aplicação",
        "unnamed": "O registro não diz nem a data nem o commit (o registrador não os guardava "
        "então); rodou {workers} servidor(es) de aplicação",
        "default": ", onde `attnref server start` agora inicia {default} atrás da borda: os "
        "números não são os do padrão de hoje.",
        "same": ", como `attnref server start` faz por padrão.",
    },
}


def recorded_on(record: Mapping[str, Any], lang: str = "en") -> str:
    """When a load record ran and on what server shape, against today's default
    (`attention_ref.classroom.hosting.server.DEFAULT_WORKERS`); a record without its date and
    commit says so, never a date guessed for it."""
    from attention_ref.classroom.hosting.server import DEFAULT_WORKERS

    say, workers = RECORDED_ON[lang], record["server_workers"]
    if record.get("recorded_utc") and record.get("commit"):
        first = say["named"].format(
            when=record["recorded_utc"], commit=record["commit"], workers=workers
        )
    else:
        first = say["unnamed"].format(workers=workers)
    tail = say["same"] if workers == DEFAULT_WORKERS else say["default"]
    return first + tail.format(default=DEFAULT_WORKERS)


# ------------------------------------------------------------------- the variants page


def recorded_precision(precision: str, machine: str) -> str:
    """The precision a recorded run trained in: its ``precision`` option as
    `attention_ref.lm.train.resolve_precision` resolves it on a CPU whose bf16 instructions
    the recording's ``machine`` line names (``"…, bf16 instructions: avx512_bf16"``)."""
    import re

    import torch

    from attention_ref.lm.train import resolve_precision

    said = re.search(r"bf16 instructions: ([\w, ]+)", machine)
    if said is None:
        raise ValueError(f"the machine line {machine!r} does not say its bf16 instructions")
    flags = frozenset(f for f in re.split(r"[, ]+", said[1]) if f and f != "none")
    return resolve_precision(precision, torch.device("cpu"), flags)


@dataclass(frozen=True)
class TwoRecordings:
    """One configuration and seed recorded twice: the variants sweep's ``mha`` arm and the
    experiments page's ``multihead`` arm."""

    here: float  # the variants sweep's best validation loss
    there: float  # the experiments page's
    here_precision: str
    there_precision: str
    same: bool  # the two rows share every compared key (seed, steps, data, model, schedule)
    differ: tuple[str, ...]  # the keys they do not share

    @property
    def gap(self) -> float:
        return abs(self.here - self.there)

    def within(self, change: float) -> bool:
        """Whether an arm's ``change`` against ``mha`` is no larger than this gap (to the 4
        decimals the page prints)."""
        return round(abs(change), 4) <= round(self.gap, 4)


def two_recordings(results: Any, page7: str = "") -> TwoRecordings:
    """`TwoRecordings` from ``docs/results`` (``results``: its folder): the variants sweep's
    comparison and provenance, the experiments page's comparison and provenance (``page7``: a
    folder under ``results`` holding an earlier recording of that page, e.g.
    ``"earlier-fp32"``; its ``multihead`` arm at the sweep's seed)."""
    import json

    from attention_ref.experiments.findings import COMPARED_KEYS, comparability

    def read(name: str) -> Any:
        return json.loads((results / name).read_text(encoding="utf-8"))

    sweep, sweep_about = read("variants/comparison.json"), read("variants/provenance.json")
    folder = f"{page7}/" if page7 else ""
    page7_doc = read(f"{folder}comparison.json")
    page7_about = read(f"{folder}provenance.json")
    here = next(r for r in sweep["rows"] if r["attention"] == "mha")
    seed = here["config"]["seed"]
    there = next(
        r
        for r in page7_doc["rows"]
        if r["attention"] == "multihead" and r["config"]["seed"] == seed
    )

    @dataclass
    class _Row:  # what `comparability` reads of a row
        attention: str
        steps: int
        config: dict[str, str]
        data_sha256: str | None

    rows = [
        _Row(name, r["steps"], r["config"], r.get("data_sha256"))
        for name, r in (("here", here), ("there", there))
    ]
    keys = [k for k in COMPARED_KEYS if k != "data" or all(r.data_sha256 for r in rows)]
    shared = comparability(rows, keys)
    return TwoRecordings(
        here=here["best_val_loss"],
        there=there["best_val_loss"],
        here_precision=recorded_precision(here["config"]["precision"], sweep_about["machine"]),
        there_precision=recorded_precision(there["config"]["precision"], page7_about["machine"]),
        same=shared.comparable,
        differ=tuple(sorted({*shared.differ, *shared.unknown})),
    )
