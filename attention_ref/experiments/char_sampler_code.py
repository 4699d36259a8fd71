"""The model's code, as MLflow's "models from code" logs it (no pickled object).

`attention_ref.experiments.logged_model.log_char_model` passes this file's path as
``python_model``; MLflow copies it into the LoggedModel and runs it when the model is loaded.
"""

import mlflow

from attention_ref.experiments.logged_model import CharSampler

mlflow.models.set_model(CharSampler())
