"""What each student stores on a running class, beside their quotas (``attnref server status``).

Read on the server's machine, as the class's own user: the class's databases over PostgreSQL's
socket in the folder (the accounts: who is a student; the runs: `quotas.use_by_account`) and
its artifact folder on disk. The quotas are those the server was started with (its
``server.json``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from attention_ref.classroom.gate.quotas import MIB, Quotas, Use, use_by_account
from attention_ref.classroom.hosting.cluster import AUTH_DB, TRACKING_DB, Postgres


@dataclass(frozen=True)
class StudentUse:
    """One student's use, and the quotas it is held to."""

    student: str
    use: Use
    quotas: Quotas

    def cells(self) -> list[str]:
        """The row of the table: the student, runs, metric values, artifacts (each of its
        quota where it has one)."""
        u, q = self.use, self.quotas
        return [
            self.student,
            f"{u.runs:,} of {q.runs:,}",
            f"{u.metric_values:,}",
            f"{u.artifact_bytes / MIB:,.1f} of {q.artifact_mib:,} MiB",
        ]


#: the table's headings (`StudentUse.cells`)
HEADINGS = ("student", "runs", "metric values", "artifacts")


def students_use(root: Path, quotas: Quotas) -> list[StudentUse]:
    """Each student's use of the class in ``root`` (a running one), by name."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.orm import Session

    postgres = Postgres(root / "postgres")
    accounts = create_engine(postgres.uri(AUTH_DB))
    runs = create_engine(postgres.uri(TRACKING_DB))
    try:
        with accounts.connect() as conn:
            students = sorted(
                str(name)
                for (name,) in conn.execute(text("SELECT username FROM users WHERE NOT is_admin"))
            )
        with Session(runs) as session:
            use = use_by_account(session, root / "artifacts")
    finally:
        with contextlib.suppress(Exception):
            accounts.dispose()
            runs.dispose()
    return [StudentUse(s, use.get(s, Use(0, 0, 0)), quotas) for s in students]
