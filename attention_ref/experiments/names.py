"""The contracts between a run's writer and its readers: statuses, tags, metrics, artifacts.

Every name a run is written or read under is a member here, so a rename is one edit and a
misspelling fails at import or in the fast tests, not in a slow end-to-end run. The step and
evaluation metrics are the field names of `attention_ref.lm.train.StepMetrics` and
`attention_ref.lm.train.EvalMetrics` (a test checks they match).
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """MLflow's run statuses that attnref sets."""

    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    KILLED = "KILLED"  # Ctrl-C / SIGTERM: resumable from checkpoints/last.pt
    FAILED = "FAILED"  # a NaN/inf loss (tag failed_at_step) or an error


class RunKind(StrEnum):
    """The value of the tag `Tag.KIND`."""

    TRAIN = "train"  # a single run or an ablation arm
    ABLATION = "ablation"  # the ablation's parent run


class Tag(StrEnum):
    """Tags attnref writes (MLflow's own ``mlflow.*`` tags are not listed)."""

    KIND = "attnref.kind"
    ATTENTION = "attention"
    DEVICE = "device"
    TORCH_VERSION = "torch_version"
    MLFLOW_VERSION = "mlflow_version"
    PYTHON_VERSION = "python_version"
    ATTNREF_VERSION = "attnref_version"
    DATA_SHA256 = "data_sha256"
    DATA_SOURCE = "data_source"
    GIT_COMMIT = "git_commit"
    FAILED_AT_STEP = "failed_at_step"
    RESUMED_AT_STEP = "resumed_at_step"
    RESUMED_DEVICE = "resumed_device"  # --device given with --resume
    RESUMED_THREADS = "resumed_threads"  # --threads given with --resume
    PARENT_RUN_ID = "mlflow.parentRunId"  # MLflow's, read to find an ablation's arms


class Metric(StrEnum):
    """Metrics of a training run; the parent of an ablation logs ``{arm}_{ArmRow field}``."""

    # every step (attention_ref.lm.train.StepMetrics)
    TRAIN_LOSS = "train_loss"
    LR = "lr"
    GRAD_NORM = "grad_norm"
    TOKENS_PER_SEC = "tokens_per_sec"
    # every evaluation (attention_ref.lm.train.EvalMetrics)
    VAL_LOSS = "val_loss"
    TRAIN_EVAL_LOSS = "train_eval_loss"
    BEST_VAL_LOSS = "best_val_loss"
    # once, when the run finishes
    FINAL_VAL_LOSS = "final_val_loss"
    FINAL_TRAIN_EVAL_LOSS = "final_train_eval_loss"
    WALL_TIME_S = "wall_time_s"
    MEAN_TOKENS_PER_SEC = "mean_tokens_per_sec"
    # the ablation's parent
    BIGRAM_FLOOR = "bigram_floor"


class Artifact(StrEnum):
    """Artifact paths inside a run."""

    CONFIG = "config.json"
    SAMPLES = "samples"
    CHECKPOINTS = "checkpoints"
    LAST_CHECKPOINT = "checkpoints/last.pt"
    MODEL_DIR = "model"
    MODEL = "model/model.pt"
    MODEL_CONFIG = "model/config.json"
    PLOTS = "plots"
    LOSS_CURVES = "plots/loss_curves.png"
    ATTENTION = "attention"
    ATTENTION_WEIGHTS = "attention/weights.json"
    COMPARISON_MD = "comparison.md"
    COMPARISON_JSON = "comparison.json"


def sample_path(step: int) -> str:
    """``samples/step_000250.txt``: the text sampled at an evaluation."""
    return f"{Artifact.SAMPLES}/step_{step:06d}.txt"
