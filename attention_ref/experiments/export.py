"""What the book shows of the latest ablation, copied into a committed folder (docs/results).

`export_results` copies it out of MLflow; `refresh_report` rewrites the parts that need no
training (the baselines and the Q03 report) from the folder's own ``comparison.json``.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import mlflow
from mlflow.tracking import MlflowClient

from attention_ref.experiments.explorer import write_explorer
from attention_ref.experiments.findings import ArmRow, arm_seeds, rows_from_comparison
from attention_ref.experiments.model_parts import with_parameter_groups
from attention_ref.experiments.names import Artifact, Tag
from attention_ref.experiments.report import build_report
from attention_ref.experiments.results import baselines, find_arms, load_model, q03_report
from attention_ref.experiments.store import TrackingError
from attention_ref.lm.data import CharData


def _download(run_id: str, path: str, dst: str) -> Path:
    got = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=path, dst_path=dst)
    return Path(got)


def _first_seeds(rows: list[ArmRow]) -> list[ArmRow]:
    """Each arm's row of its first seed (``rows`` are by arm, then by seed)."""
    firsts: dict[str, ArmRow] = {}
    for row in rows:
        firsts.setdefault(row.attention, row)
    return list(firsts.values())


def export_results(experiment: str, data: CharData, dest: Path) -> list[Path]:
    """Copy what the book shows of the latest ablation into ``dest`` (a committed folder).

    Writes ``q03-report.md``, ``comparison.json`` (rows, baselines, run ids, provenance),
    ``loss_curves.png``, the multihead arm's ``attention/`` maps and ``weights.json``, the
    last evaluation sample of each arm in ``samples/<arm>.txt``, and the multihead arm's model
    for the attention explorer in ``explorer/``
    (`attention_ref.experiments.explorer.write_explorer`). The book reads only these files,
    so it builds without MLflow runs; ``attnref report --export DIR`` regenerates them.
    """
    arms = find_arms(experiment)
    parent = arms.parent
    if parent is None:
        raise TrackingError(
            f"no finished ablation in experiment {experiment!r}; run `attnref ablation` first"
        )
    pid = parent.info.run_id
    dest.mkdir(parents=True, exist_ok=True)
    written = [dest / "q03-report.md"]
    written[0].write_text(q03_report(experiment, data, arms), encoding="utf-8")
    client = MlflowClient()
    with tempfile.TemporaryDirectory() as tmp:
        doc = json.loads(_download(pid, Artifact.COMPARISON_JSON, tmp).read_text(encoding="utf-8"))
        curves = _download(pid, Artifact.LOSS_CURVES, tmp)
        (dest / "loss_curves.png").write_bytes(curves.read_bytes())
        written.append(dest / "loss_curves.png")
        shown = _first_seeds(arms.rows)
        for arm in shown:
            samples = sorted(f.path for f in client.list_artifacts(arm.run_id, Artifact.SAMPLES))
            if samples:
                text = _download(arm.run_id, samples[-1], tmp).read_text(encoding="utf-8")
                out = dest / "samples" / f"{arm.attention}.txt"
                out.parent.mkdir(exist_ok=True)
                out.write_text(text, encoding="utf-8")
                written.append(out)
            if arm.attention == "multihead":
                att = _download(arm.run_id, Artifact.ATTENTION, tmp)
                (dest / "attention").mkdir(exist_ok=True)
                for f in sorted(att.iterdir()):
                    (dest / "attention" / f.name).write_bytes(f.read_bytes())
                    written.append(dest / "attention" / f.name)
                source = (
                    f"MLflow run {arm.run_id} (arm multihead of the ablation {pid}, "
                    f"experiment {experiment}), {Artifact.MODEL}"
                )
                checkpoint = load_model(arm.run_id, Path(tmp))
                written += write_explorer(checkpoint, dest / "explorer", source=source, data=data)
    base = baselines(data)
    # each arm's curve: the mean over its seeds at the steps all evaluated (one seed: its own);
    # every row keeps its own curve in ``rows``
    curves = {g.attention: {"val_loss": g.mean_row.val_curve} for g in arm_seeds(arms.rows)}
    doc.update(
        {
            "bigram_floor": base.bigram,
            "baselines": asdict(base),
            "experiment": experiment,
            "parent_run_id": pid,
            "params": dict(parent.data.params),
            "git_commit": parent.data.tags.get(Tag.GIT_COMMIT, "unknown"),
            "torch_version": parent.data.tags.get(Tag.TORCH_VERSION, "unknown"),
            "curves": curves,
            # whose sample, attention maps and explorer model the book shows: an arm's first
            # seed (the --seed given, as `attnref sample --arm` takes it)
            "shown": {a.attention: {"run_id": a.run_id, "seed": a.seed} for a in shown},
            "source": arms.source(),
        }
    )
    curve_of = {a.run_id: [list(p) for p in a.val_curve] for a in arms.rows}
    for r in doc["rows"]:  # each run's own curve beside its figures (the parent's rows hold none)
        r["val_curve"] = r.get("val_curve") or curve_of.get(r["run_id"], [])
    _record_parts(doc, arms.rows)
    (dest / "comparison.json").write_text(
        json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    written.append(dest / "comparison.json")
    return written


def _record_parts(doc: dict[str, Any], rows: Sequence[ArmRow]) -> None:
    """Each exported row gets its model's parameters by part (``param_groups``), so the
    book's pages read which are attention from the file."""
    by_arm = {r.attention: r.param_groups for r in rows}
    for d in doc["rows"]:
        if by_arm.get(d["attention"]):
            d["param_groups"] = by_arm[d["attention"]]


def refresh_report(dest: Path, data: CharData) -> list[Path]:
    """Rewrite ``dest``'s baselines and ``q03-report.md`` from its ``comparison.json``.

    No training and no MLflow: the rows, curves and params are the recorded ones; the
    baselines are computed again from ``data`` (they depend on the data only), so a change of
    how they are computed, or of the report's words, reaches the committed results. Refuses
    (``ValueError``) rows recorded on other data than ``data``.
    """
    path = dest / "comparison.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    rows = with_parameter_groups(rows_from_comparison(doc), data.vocab_size)
    other = {r.data_sha256 for r in rows if r.data_sha256} - {data.text_sha256}
    if other:
        raise ValueError(
            f"{path} was measured on data with sha256 {sorted(other)[0][:12]}…, not on "
            f"{data.source} ({data.text_sha256[:12]}…)"
        )
    base = baselines(data)
    doc.update({"bigram_floor": base.bigram, "baselines": asdict(base)})
    _record_parts(doc, rows)
    report = dest / "q03-report.md"
    report.write_text(build_report(doc["experiment"], doc["source"], rows, base), encoding="utf-8")
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return [report, path]
