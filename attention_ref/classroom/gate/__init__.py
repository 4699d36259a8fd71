"""The gate: what runs inside ``mlflow server`` on every request (who, may they, is it
theirs, the homework fence, quotas, bounds), the access table it consults, and the one seam to
MLflow's private names (`attention_ref.classroom.gate.mlflow_seam`). Above coursework and
connection; nothing below imports it."""
