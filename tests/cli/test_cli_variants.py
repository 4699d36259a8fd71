"""``attnref train --kv-heads / --pos rope / --window``: today's attention in the Q02 model, from
the command line to MLflow and back to ``attnref sample`` (which leaves such a model to torch)."""

from __future__ import annotations

import re

import mlflow
import pytest

from attention_ref.cli.main import main
from tests.configs import TINY_ARGS as TINY


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--kv-heads", "3"], "--kv-heads 3 does not divide --n-head 2"),
        (["--pos", "alibi"], "--pos must be one of learned, rope"),
        (["--window", "-2"], "--window must be an integer >= 0"),
        (["--window", "4", "--attention", "none"], "--window is for multihead attention"),
    ],
)
def test_a_variant_that_cannot_be_built_is_one_line_before_any_run(store, capsys, args, said):
    assert main(["train", *TINY, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"attnref: error: {said}"), err
    assert err.count("\n") == 1
    assert mlflow.search_runs(search_all_experiments=True, output_format="list") == []


def test_train_with_one_kv_head_logs_it_and_samples(store, capsys):
    args = [*TINY, "--max-steps", "20", "--eval-interval", "20"]
    assert main(["train", *args, "--run-name", "mha"]) == 0
    assert main(["train", *args, "--run-name", "mqa", "--kv-heads", "1"]) == 0
    out = capsys.readouterr().out
    counts = [int(n.replace(",", "")) for n in re.findall(r"([\d,]+) parameters on", out)]
    runs = {
        r.info.run_name: r
        for r in mlflow.search_runs(experiment_names=["shakespeare"], output_format="list")
    }
    assert runs["mqa"].data.params["kv_heads"] == "1"
    assert runs["mha"].data.params["kv_heads"] == "0"
    n_embd, n_layer = 32, 1  # TINY: 2 heads of d_k 16; one K/V head fewer, W_K and W_V each
    assert counts == [counts[0], counts[0] - n_layer * 2 * 16 * (n_embd + 1)]
    assert main(["sample", "--run-id", runs["mqa"].info.run_id, "--tokens", "20"]) == 0
    assert len(capsys.readouterr().out.strip()) > 0


def test_rope_and_a_window_train_and_are_logged(store, capsys):
    args = [*TINY, "--max-steps", "20", "--eval-interval", "20"]
    assert (
        main(["train", *args, "--run-name", "rope-window", "--pos", "rope", "--window", "8"]) == 0
    )
    (run,) = mlflow.search_runs(experiment_names=["shakespeare"], output_format="list")
    assert run.data.params["pos"] == "rope" and run.data.params["window"] == "8"
    assert run.info.status == "FINISHED"
    assert main(["sample", "--run-id", run.info.run_id, "--tokens", "20"]) == 0
