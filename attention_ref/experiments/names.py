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
    HEADS_SWEEP = "heads_sweep"  # the heads sweep's parent run (its arms are TRAIN runs)
    VARIANTS = "variants"  # the variants' parent run: Q02's model with today's attention


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
    PRECISION = "attnref.precision"  # the precision a run trained in, resolved: fp32 or bf16
    ARM = "attnref.arm"  # an arm's name under its sweep (``none``, ``4``, ``mqa``)
    SEED = "attnref.seed"  # the seed of an arm's run
    GROUP = "attnref.group"  # the runs of one arm over its seeds: ``ablation/none``
    RESUMED_AT_STEP = "resumed_at_step"
    RESUMED_DEVICE = "resumed_device"  # --device given with --resume
    RESUMED_THREADS = "resumed_threads"  # --threads given with --resume
    PARENT_RUN_ID = "mlflow.parentRunId"  # MLflow's, read to find an ablation's arms
    NOTE = "mlflow.note.content"  # MLflow's: the run's description (markdown) in the UI
    EXPERIMENT_KIND = "mlflow.experimentKind"  # MLflow's, on the experiment: which UI it opens


#: the value of `Tag.EXPERIMENT_KIND` that makes the MLflow UI open an experiment on its runs
#: (not on the GenAI overview of traces)
EXPERIMENT_KIND = "custom_model_development"
#: MLflow 3.17's UI also keeps a GenAI / Model training switch of its own (default GenAI, saved
#: in the browser); this query in a link selects "Model training": the runs
UI_RUNS_QUERY = "workflowType=machine_learning"


def ui_experiment_url(base: str, experiment_id: str, view: str = "") -> str:
    """The MLflow UI's page of an experiment's runs, at the server ``base``; with ``view``, in
    the view the experiment keeps under that name (its ``mlflow.sharedViewState.<view>`` tag)."""
    if view:  # the runs tab itself: the UI's way there from the experiment keeps no view
        return (
            f"{base.rstrip('/')}/#/experiments/{experiment_id}/runs?{UI_RUNS_QUERY}"
            f"&viewStateShareKey={view}"
        )
    return f"{base.rstrip('/')}/#/experiments/{experiment_id}?{UI_RUNS_QUERY}"


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
    # the ablation's parent: this, and `arm_metric` of each arm's final figures
    BIGRAM_FLOOR = "bigram_floor"


def arm_metric(arm: str, metric: Metric) -> str:
    """The parent's copy of an arm's metric: ``multihead_final_train_eval_loss`` is the
    ``final_train_eval_loss`` of the arm ``multihead`` (the arm's own name as a suffix)."""
    return f"{arm}_{metric}"


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
    LOSS_CURVES = "plots/loss_curves.png"  # a run's curves; a parent's, its arms overlaid
    ATTENTION = "attention"  # the heatmaps, see `attention_map_path`
    ATTENTION_WEIGHTS = "attention/weights.json"
    COMPARISON_MD = "comparison.md"
    COMPARISON_JSON = "comparison.json"


#: the name of the trained model as an MLflow LoggedModel (``mlflow.pyfunc.log_model(name=...)``)
LOGGED_MODEL_NAME = "char-gpt"


def attention_map_path(layer: int, head: int) -> str:
    """``attention/layer1_head1.png`` for ``layer`` 0 and ``head`` 0: numbered from 1 in the
    artifact name, as ``attnref explain`` numbers heads (the arguments are 0-based indices)."""
    return f"{Artifact.ATTENTION}/layer{layer + 1}_head{head + 1}.png"


def attention_map_title(layer: int, head: int) -> str:
    """The heatmap's title, numbered like its file (`attention_map_path`)."""
    return f"layer {layer + 1}, head {head + 1}: A = softmax(QKᵀ/√d_k + M)"


# ------------------------------------------------------------------------------- run names


def train_run_name(attention: str) -> str:
    """A single run's name: ``q02-multihead`` (Q02's model), ``q03-none``, ``q03-uniform``."""
    return f"q02-{attention}" if attention == "multihead" else f"q03-{attention}"


#: the ablation's parent run; its arms are `arm_run_name` (``ablation/none``)
ABLATION_RUN_NAME = "ablation"
#: the heads sweep's parent run; its arms are ``heads/1``, ``heads/2``, …
HEADS_SWEEP_RUN_NAME = "heads"
#: the variants' parent run; its arms are ``variants/mha``, ``variants/mqa``, …
VARIANTS_RUN_NAME = "variants"


def arm_run_name(parent: str, arm: str | int, seed: int | None = None) -> str:
    """An arm's run name under its parent: ``ablation/none``, ``heads/4``; with ``seed`` (a
    sweep over several seeds) ``ablation/none seed 8``. Without a seed it is also the arm's
    group (`Tag.GROUP`)."""
    return f"{parent}/{arm}" + (f" seed {seed}" if seed is not None else "")


def sample_path(step: int) -> str:
    """``samples/step_000250.txt``: the text sampled at an evaluation."""
    return f"{Artifact.SAMPLES}/step_{step:06d}.txt"
