"""A submission's answer on disk: its size counted from the bytes received, final once finished.

The gate (`attention_ref.classroom.gate.auth`) decides on a request before its body is read: for the
artifact proxy's upload, a FastAPI route, MLflow even hands it a copy of the request without
the body, where ``Content-Length`` is what the client said (or nothing: a chunked upload). So
the two rules of a submission's ``answer.json`` that need the body are kept here, where the
body is written, inside ``mlflow server``'s workers:

* **size**: the upload is read into memory up to `MAX_ANSWER_BYTES`, counted as it arrives,
  whatever the content type, the ``Content-Length`` or the transfer encoding; one byte more
  and the upload is refused (413), nothing written;
* **final**: the answer is written, and a submission is finished, each under the run's lock
  (PostgreSQL's advisory lock of the run, shared by every application server on any host;
  a ``flock`` where the store is not PostgreSQL). An upload writes only if,
  holding the lock, the run is still RUNNING and has no answer yet; the finish records the
  answer's hash and sets the run FINISHED while holding it. So an upload that began before
  the finish and ends after it finds the run finished and writes nothing: after FINISHED, no
  byte of the submission changes on the server.

`install` puts the size and the lock on MLflow's upload route (the repository that route
writes through); `finishing` is the lock the gate takes to finish a submission.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import posixpath
import re
import tempfile
import time
from collections.abc import AsyncIterable, Callable, Iterator
from pathlib import Path
from typing import Any

from attention_ref.classroom.coursework.assignment import ANSWER_FILE, ROLE_TAG, SUBMISSIONS

#: the largest answer.json a submission may hold (an answer of the largest exercise is ~40 kB)
MAX_ANSWER_BYTES = 1 << 20
#: how long a request waits for a run's lock (each holder keeps it for a few milliseconds)
LOCK_WAIT_S = 30.0
_FOLDER = re.compile(r"^([^/]+)/([0-9a-f]{32})/artifacts$")


#: the HTTP status of each refusal, by MLflow's error code (what its handler answers)
STATUS = {"PERMISSION_DENIED": 403, "INVALID_PARAMETER_VALUE": 400, "TEMPORARILY_UNAVAILABLE": 503}


class AnswerRefusedError(Exception):
    """An upload of a submission's answer that is not written: MLflow's error ``code`` (its
    status in `STATUS`) and a one-line ``message``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def status(self) -> int:
        """The HTTP status MLflow's handler answers with."""
        return STATUS[self.code]


def submission_of(
    folder: str | None, name: str, tags_of: Callable[[str], dict[str, str]]
) -> tuple[str, str] | None:
    """``(experiment id, run id)`` when ``folder/name`` is the answer of a run in a homework
    submissions experiment (``tags_of(experiment id)`` tells), else ``None``."""
    if name != ANSWER_FILE or not folder:
        return None
    m = _FOLDER.match(posixpath.normpath(folder).strip("/"))
    if m is None:
        return None
    return (m.group(1), m.group(2)) if tags_of(m.group(1)).get(ROLE_TAG) == SUBMISSIONS else None


async def read_bounded(chunks: AsyncIterable[bytes], limit: int = MAX_ANSWER_BYTES) -> bytes:
    """The whole body, or `AnswerRefusedError` (403) as soon as more than ``limit`` bytes came."""
    got = bytearray()
    async for chunk in chunks:
        got += chunk
        if len(got) > limit:
            raise AnswerRefusedError(
                "PERMISSION_DENIED",
                f"class server: an answer is at most {limit} bytes; more were sent",
            )
    return bytes(got)


def lock_dir() -> Path:
    """Where the runs' lock files are kept: beside the artifacts (``<class>/locks``), or in the
    temporary folder for a server whose artifacts are not a local folder."""
    from mlflow.server import ARTIFACTS_DESTINATION_ENV_VAR

    root = os.environ.get(ARTIFACTS_DESTINATION_ENV_VAR, "")
    if root and "://" not in root:
        return Path(root).parent / "locks"
    return Path(tempfile.gettempdir()) / "attnref-class-locks"


def lock_key(run_id: str) -> int:
    """The run's key among PostgreSQL's advisory locks: its id's first 15 hex digits (60 bits,
    a positive ``bigint``; two runs sharing them only wait for each other)."""
    return int(run_id[:15], 16)


_LOCKS: list[Any] = []


def _postgres() -> Any | None:
    """An engine of the locks' own on the tracking store's database when it is PostgreSQL
    (the class server's), else ``None``.

    Its own pool, not the store's: a request holds its lock's connection while MLflow's
    store takes and gives back connections of its pool for the work under the lock; locks
    drawn from that same pool would leave none for the work when as many requests hold locks
    as the pool has connections, and every one of them would wait out the pool's timeout."""
    if _LOCKS:
        return _LOCKS[0]
    try:
        from attention_ref.classroom.gate.mlflow_seam import tracking_store

        engine = getattr(tracking_store(), "engine", None)
    except Exception:  # no tracking store in this process (a test of the lock alone)
        return None
    if engine is None or engine.dialect.name != "postgresql":
        return None
    from sqlalchemy import create_engine

    from attention_ref.classroom.gate.pools import LOCK_CONNECTIONS, LOCK_POOL_SIZE

    overflow = LOCK_CONNECTIONS - LOCK_POOL_SIZE
    _LOCKS.append(
        create_engine(engine.url, pool_size=LOCK_POOL_SIZE, max_overflow=overflow, pool_timeout=5)
    )
    return _LOCKS[0]


def _busy() -> AnswerRefusedError:
    return AnswerRefusedError("TEMPORARILY_UNAVAILABLE", "class server: busy; try again")


@contextlib.contextmanager
def run_lock(run_id: str, wait_s: float = LOCK_WAIT_S, engine: Any | None = None) -> Iterator[None]:
    """The run's lock, across every application server of the class, on any host.

    On PostgreSQL (the class server's store, or ``engine``): a transaction-level advisory lock,
    ``pg_try_advisory_xact_lock(lock_key(run_id))``, asked every 5 ms until it is granted or
    ``wait_s`` passed (then 503, "busy"), held by a transaction that stays open while the
    caller works and ends after it (the lock goes with it, even when the caller fails or the
    connection drops). Any other store (one host only): an exclusive ``flock`` on a file of
    the run in `lock_dir`."""
    if not re.fullmatch(r"[0-9a-f]{32}", run_id):
        raise AnswerRefusedError(
            "INVALID_PARAMETER_VALUE", f"class server: {run_id!r} is not a run id"
        )
    engine = engine if engine is not None else _postgres()
    if engine is not None:
        with _advisory_lock(engine, lock_key(run_id), wait_s):
            yield
        return
    folder = lock_dir()
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / f"{run_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise _busy() from None
                time.sleep(0.005)
        yield
    finally:
        os.close(fd)  # drops the lock


@contextlib.contextmanager
def _advisory_lock(engine: Any, key: int, wait_s: float) -> Iterator[None]:
    """PostgreSQL's transaction-level advisory lock ``key``, held while the block runs; a
    database that cannot be reached is "busy" (503: the clients ask again), not a 500."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError, SQLAlchemyError

    try_lock = text("SELECT pg_try_advisory_xact_lock(:key)")
    try:
        conn = engine.connect()
    except SQLAlchemyError:  # the database unreachable, or every lock connection in use
        raise _busy() from None
    try:
        deadline = time.monotonic() + wait_s
        try:
            while not conn.execute(try_lock, {"key": key}).scalar():
                if time.monotonic() > deadline:
                    raise _busy()
                time.sleep(0.005)
        except DBAPIError:
            raise _busy() from None
        yield
    finally:
        with contextlib.suppress(DBAPIError):
            conn.rollback()  # ends the transaction: the lock is released
        conn.close()


def write_answer(
    run_id: str,
    data: bytes,
    status_of: Callable[[str], str],
    stored: Callable[[], bool],
    write: Callable[[bytes], None],
) -> None:
    """Write ``data`` as the run's answer, holding the run's lock, only if the run is RUNNING
    and holds no answer yet (else `AnswerRefusedError`, 403: nothing written)."""
    with run_lock(run_id):
        if status_of(run_id) != "RUNNING":
            raise AnswerRefusedError(
                "PERMISSION_DENIED",
                f"class server: submission {run_id} is finished: it is final (submit again)",
            )
        if stored():
            raise AnswerRefusedError(
                "PERMISSION_DENIED",
                f"class server: submission {run_id} has its {ANSWER_FILE} already",
            )
        write(data)


def _refused(message: str) -> Exception:
    """MLflow's exception for a refused write (its handlers answer it: 403, one line)."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import ErrorCode

    code = ErrorCode.Value("PERMISSION_DENIED")
    return MlflowException("class server: " + message, error_code=code)


def in_submission(folder: str | None, tags_of: Callable[[str], dict[str, str]]) -> str | None:
    """The experiment id when ``folder`` (a destination in the artifact store) lies in a
    homework submissions experiment, else ``None``."""
    parts = posixpath.normpath(folder or "").strip("/").split("/")
    if not parts or not parts[0] or parts[0] in (".", ".."):
        return None
    return parts[0] if tags_of(parts[0]).get(ROLE_TAG) == SUBMISSIONS else None


class FencedRepository:
    """MLflow's artifact repository of the class (``--artifacts-destination``), with every write
    into a homework submission judged here, whichever route asked for it: only a run's
    ``answer.json``, at its root, bounded, under the run's lock, while the run is RUNNING and
    has none (`write_answer`); any other file, folder, multipart upload or deletion in a
    submission is refused. Every other write, and every read, is MLflow's own."""

    def __init__(
        self, repo: Any, tags_of: Callable[[str], dict[str, str]], status_of: Callable[[str], str]
    ) -> None:
        self._repo, self._tags_of, self._status_of = repo, tags_of, status_of

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repo, name)

    def _answer_of(self, folder: str | None, name: str) -> str | None:
        """The run id when ``folder/name`` may be a submission's answer; ``None`` when the
        destination is no submission's; `_refused` for anything else in a submission."""
        if in_submission(folder, self._tags_of) is None:
            return None
        found = submission_of(folder, name, self._tags_of)
        if found is None:
            raise _refused(f"a submission holds one file, {ANSWER_FILE}, at its root")
        return found[1]

    def _stored(self, folder: str | None) -> bool:
        listed = self._repo.list_artifacts(folder) or []
        return ANSWER_FILE in {posixpath.basename(f.path) for f in listed}

    def _write(self, run_id: str, folder: str | None, name: str, data: bytes) -> None:
        if len(data) > MAX_ANSWER_BYTES:
            raise _refused(f"an answer is at most {MAX_ANSWER_BYTES} bytes; more were sent")

        def write(payload: bytes) -> None:
            self._repo.log_artifact_from_stream(io.BytesIO(payload), name, folder)

        try:
            write_answer(run_id, data, self._status_of, lambda: self._stored(folder), write)
        except AnswerRefusedError as e:
            from mlflow.exceptions import MlflowException
            from mlflow.protos.databricks_pb2 import ErrorCode

            raise MlflowException(e.message, error_code=ErrorCode.Value(e.code)) from None

    def log_artifact(self, local_file: str, artifact_path: str | None = None) -> None:
        """One file (MLflow's ``upload-artifact`` route, and its Flask upload)."""
        name = os.path.basename(local_file)
        run_id = self._answer_of(artifact_path, name)
        if run_id is None:
            return self._repo.log_artifact(local_file, artifact_path)
        with open(local_file, "rb") as f:
            data = f.read(MAX_ANSWER_BYTES + 1)
        return self._write(run_id, artifact_path, name, data)

    def log_artifacts(self, local_dir: str, artifact_path: str | None = None) -> None:
        """A folder: never into a submission."""
        if in_submission(artifact_path, self._tags_of) is not None:
            raise _refused(f"a submission holds one file, {ANSWER_FILE}, not a folder")
        return self._repo.log_artifacts(local_dir, artifact_path)

    def log_artifact_from_stream(
        self, stream: Any, artifact_file_name: str, artifact_path: str | None = None
    ) -> None:
        """A streamed file (the artifact proxy's upload, under Flask)."""
        run_id = self._answer_of(artifact_path, artifact_file_name)
        if run_id is None:
            return self._repo.log_artifact_from_stream(stream, artifact_file_name, artifact_path)
        data = stream.read(MAX_ANSWER_BYTES + 1)
        return self._write(run_id, artifact_path, artifact_file_name, data)

    async def log_artifact_from_async_stream(
        self,
        chunks: AsyncIterable[bytes],
        artifact_file_name: str,
        artifact_path: str | None = None,
    ) -> None:
        """A streamed file (the artifact proxy's upload, under uvicorn): counted as it comes."""
        import asyncio

        name, path = artifact_file_name, artifact_path
        run_id = await asyncio.to_thread(self._answer_of, path, name)
        if run_id is None:
            return await self._repo.log_artifact_from_async_stream(chunks, name, path)
        try:
            data = await read_bounded(chunks)
        except AnswerRefusedError as e:
            raise _refused(e.message.removeprefix("class server: ")) from None
        return await asyncio.to_thread(self._write, run_id, path, name, data)

    def delete_artifacts(self, artifact_path: str | None = None) -> None:
        """A deletion: never in a submission (finished is final)."""
        if in_submission(artifact_path, self._tags_of) is not None:
            raise _refused("a submission's answer is final: nothing in it is deleted")
        return self._repo.delete_artifacts(artifact_path)


def install(tags_of: Callable[[str], dict[str, str]], status_of: Callable[[str], str]) -> None:
    """Put `FencedRepository` in front of MLflow's artifact repository (once per worker
    process): every route that writes an artifact (the proxy's PUT under uvicorn or Flask,
    ``upload-artifact``, a multipart upload) reaches it through MLflow's one getter."""
    from mlflow.store.artifact.artifact_repo import StreamUploadMixin

    from attention_ref.classroom.gate.mlflow_seam import artifact_repo, replace_artifact_repo

    repo = artifact_repo()
    if isinstance(repo, FencedRepository):
        return

    # a stream upload's repository (MLflow streams into one, else writes a temporary file)
    kind = (
        (FencedRepository, StreamUploadMixin)
        if isinstance(repo, StreamUploadMixin)
        else (FencedRepository,)
    )
    fenced = type("FencedArtifactRepository", kind, {})(repo, tags_of, status_of)
    replace_artifact_repo(fenced)
