"""The trained model as an MLflow 3 LoggedModel: a pyfunc whose ``predict`` samples text.

A finished run logs its best checkpoint twice, for two kinds of reader:

* ``model/model.pt`` among the run's artifacts: the slim `attention_ref.lm.checkpoint.Checkpoint`
  (weights, config, vocabulary), loadable with ``Checkpoint.load`` (or ``torch.load``) and no
  MLflow at all, so no flavour's pickled module can go stale;
* a LoggedModel named `LOGGED_MODEL_NAME` (``mlflow.pyfunc.log_model(name=...)``), linked to the
  run and to its final metrics, shown in the UI's Models tab, registrable in the Model Registry.
  It holds the same ``model.pt`` as its one artifact and a `CharSampler`, whose ``predict``
  takes prompts and returns the prompts continued by sampled text::

      model = mlflow.pyfunc.load_model("models:/m-…")
      model.predict(["ROMEO:"], params={"max_new_tokens": 100, "seed": 1})

The sampler is logged as code (`attention_ref.experiments.char_sampler_code`, MLflow's "models
from code"), not as a pickled object; loading the model needs attnref importable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mlflow
import torch
from mlflow.models import ModelSignature
from mlflow.models.model import ModelInfo
from mlflow.types import ColSpec, DataType, ParamSchema, ParamSpec, Schema

from attention_ref.experiments.names import LOGGED_MODEL_NAME
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.sampling import SampleParams, sample_text

#: the key of the checkpoint among the pyfunc's artifacts (stored as ``artifacts/model.pt``)
CHECKPOINT_KEY = "checkpoint"
#: the prompt logged as the model's input example
EXAMPLE_PROMPT = "ROMEO:"
_PARAM_TYPES = {int: DataType.long, float: DataType.double}


def _prompts(model_input: Any) -> list[str]:
    """A list of prompts from what pyfunc passes (a DataFrame of one column, a list, a str)."""
    if isinstance(model_input, str):
        return [model_input]
    if hasattr(model_input, "iloc"):  # pandas: the signature's one string column
        return [str(v) for v in model_input.iloc[:, 0].tolist()]
    return [str(v) for v in model_input]


class CharSampler(mlflow.pyfunc.PythonModel):
    """``predict(prompts) -> texts``: each prompt continued by characters the model samples."""

    def load_context(self, context: mlflow.pyfunc.PythonModelContext) -> None:
        """Load the checkpoint the model was logged with."""
        self.checkpoint = Checkpoint.load(Path(context.artifacts[CHECKPOINT_KEY]))

    def predict(  # type: ignore[override]
        self,
        context: mlflow.pyfunc.PythonModelContext,
        model_input: list[str],
        params: dict[str, Any] | None = None,
    ) -> list[str]:
        """One sampled text per prompt (the prompt included), settings from `SampleParams`."""
        p = SampleParams.from_params(params)
        return [sample_text(self.checkpoint, prompt, p) for prompt in _prompts(model_input)]


def log_char_model(
    checkpoint_path: Path, *, registered_name: str | None = None, step: int = 0
) -> ModelInfo:
    """Log ``checkpoint_path`` (a slim ``model.pt``) as a LoggedModel of the active run.

    The signature has one string input (the prompt), one string output and the
    `SampleParams` as params; the input example is `EXAMPLE_PROMPT`. ``registered_name``
    also registers it in the Model Registry (a new version of that name).
    """
    checkpoint = Checkpoint.load(checkpoint_path)
    defaults = vars(SampleParams())
    text = Schema([ColSpec(DataType.string)])  # a list of strings, as predict's type hints say
    params = ParamSchema([ParamSpec(k, _PARAM_TYPES[type(v)], v) for k, v in defaults.items()])
    signature = ModelSignature(inputs=text, outputs=text, params=params)
    return mlflow.pyfunc.log_model(
        name=LOGGED_MODEL_NAME,
        python_model=str(Path(__file__).with_name("char_sampler_code.py")),
        artifacts={CHECKPOINT_KEY: str(checkpoint_path)},
        signature=signature,
        input_example=([EXAMPLE_PROMPT], defaults),
        pip_requirements=[f"torch=={torch.__version__}", f"mlflow=={mlflow.__version__}"],
        registered_model_name=registered_name,
        params={k: str(v) for k, v in checkpoint.config.to_flat().items()},
        step=step,
    )
