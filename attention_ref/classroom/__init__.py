"""The class: its server, who may do what on it (one table, route x role, deny by default),
and, as it grows, assignments, submissions and grades.

`access` (the table: pure data, no MLflow), `routes` (every route MLflow serves, read from
MLflow), `auth` (the hook MLflow's basic auth calls in the server: the table applied),
`server` (PostgreSQL + ``mlflow server``: start, stop, status, accounts), `tls` (a
certificate for a server on the network). Uses `attention_ref.experiments`; nothing there
imports this package.
"""
