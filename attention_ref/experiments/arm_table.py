"""The one table of a sweep's arms (markdown, in ``lang``): Q03's ablation, the heads sweep and
the variants each print it, with their own first columns (the mode; the heads and ``d_k``; the
variant and what it changes) and the variants with their own last ones.

An arm of several seeds (`ArmSeeds`) is one line: the number of its seeds, the mean best
validation loss, its range and (from 3 seeds) its 95 % t-interval, each other figure the mean
over its seeds; the precision column appears where the runs record it. Arms of one run each
without a recorded precision: the one-seed table of before.

Pure: no MLflow, no torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attention_ref.experiments.arm_rows import ArmSeeds
from attention_ref.experiments.report_words import COLUMNS, cells, count, num
from attention_ref.render import markdown_table

#: a column: its header and its cell for an arm
Column = tuple[str, Callable[[ArmSeeds], str]]


def figures(lang: str) -> list[Column]:
    """The columns after the best validation loss in Q03's and the heads' tables: the means of
    the final losses, the speed and the time, and the steps."""
    col = COLUMNS[lang]

    def mean(key: str, fmt: str) -> Callable[[ArmSeeds], str]:
        return lambda g: num(g.figure(key).mean, fmt, lang)

    return [
        (col["final_val"], mean("final_val_loss", ".4f")),
        (col["final_train"], mean("final_train_loss", ".4f")),
        (col["tokens_per_sec"], lambda g: count(g.figure("tokens_per_sec").mean, lang)),
        (col["wall_time"], mean("wall_time_s", ".0f")),
        (col["steps"], lambda g: str(g.rows[0].steps)),
    ]


def arms_table(
    groups: Sequence[ArmSeeds],
    lang: str,
    *,
    lead: Sequence[Column],
    middle: Sequence[Column] = (),
    tail: Sequence[Column] | None = None,
    left: int | None = None,
) -> list[str]:
    """The arms' table as markdown lines: ``lead`` (the sweep's own columns), the seeds and the
    precision where they tell something, the parameters, ``middle``, the best validation loss
    (mean, range, interval with several seeds), then ``tail`` (`figures` by default). ``left``:
    how many leading columns are text (left-aligned; all of ``lead`` by default)."""
    col = COLUMNS[lang]
    several = any(g.n > 1 for g in groups)
    precise = any(r.precision is not None for g in groups for r in g.rows)
    after = figures(lang) if tail is None else list(tail)
    header = [h for h, _ in lead]
    header += [col["seeds"]] if several else []
    header += [col["precision"]] if precise else []
    header += [col["parameters"], *(h for h, _ in middle)]
    header += [col["best_mean"], col["range"], col["interval"]] if several else [col["best"]]
    header += [h for h, _ in after]
    body = []
    for g in groups:
        best = list(cells(g.best, lang)) if several else [num(g.best.mean, ".4f", lang)]
        body.append(
            [
                *(cell(g) for _, cell in lead),
                *([str(g.n)] if several else []),
                *([g.precision or col["not_recorded"]] if precise else []),
                count(g.rows[0].n_params, lang),
                *(cell(g) for _, cell in middle),
                *best,
                *(cell(g) for _, cell in after),
            ]
        )
    return markdown_table(header, body, left=len(lead) if left is None else left)
