"""Everything MLflow: the Shakespeare experiments as tracked runs.

`store` (which store, reaching it), `names` (statuses, tags, metric and artifact names: the
contracts), `runs` (one run: start, resume with overrides, log, end), `ablation` (Q03's arms
under one parent), `report` (pure: rows + baselines -> markdown), `results` (reading runs
back), `export` (what the book shows), `explorer` (the attention explorer's model and
lines), `plots` (matplotlib figures).
"""
