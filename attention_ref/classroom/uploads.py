"""A submission's answer on disk: its size counted from the bytes received, final once finished.

The gate (`attention_ref.classroom.auth`) decides on a request before its body is read: for the
artifact proxy's upload, a FastAPI route, MLflow even hands it a copy of the request without
the body, where ``Content-Length`` is what the client said (or nothing: a chunked upload). So
the two rules of a submission's ``answer.json`` that need the body are kept here, where the
body is written, inside ``mlflow server``'s workers:

* **size**: the upload is read into memory up to `MAX_ANSWER_BYTES`, counted as it arrives,
  whatever the content type, the ``Content-Length`` or the transfer encoding; one byte more
  and the upload is refused (413), nothing written;
* **final**: the answer is written, and a submission is finished, each under the run's lock
  (``flock`` on a file of the run, shared by every worker process). An upload writes only if,
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

from attention_ref.classroom.assignment import ANSWER_FILE, ROLE_TAG, SUBMISSIONS

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


def submission_of(folder: str | None, name: str, tags_of: Callable[[str], dict[str, str]]) -> (
    tuple[str, str] | None
):  # fmt: skip
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


@contextlib.contextmanager
def run_lock(run_id: str, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """The run's lock, across the server's worker processes (an exclusive ``flock``)."""
    if not re.fullmatch(r"[0-9a-f]{32}", run_id):
        raise AnswerRefusedError(
            "INVALID_PARAMETER_VALUE", f"class server: {run_id!r} is not a run id"
        )
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
                    raise AnswerRefusedError(
                        "TEMPORARILY_UNAVAILABLE", "class server: busy; try again"
                    ) from None
                time.sleep(0.005)
        yield
    finally:
        os.close(fd)  # drops the lock


def write_answer(
    run_id: str, data: bytes, status_of: Callable[[str], str], stored: Callable[[], bool],
    write: Callable[[bytes], None],
) -> None:  # fmt: skip
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


def install(tags_of: Callable[[str], dict[str, str]], status_of: Callable[[str], str]) -> None:
    """Route MLflow's artifact upload through `write_answer` for submissions' answers (once per
    worker process; every other upload goes straight to MLflow's repository, as before)."""
    from mlflow.server import artifact_router
    from mlflow.store.artifact.artifact_repo import StreamUploadMixin

    original = artifact_router._get_artifact_repo
    if getattr(original, "attnref_fence", False):
        return

    class FencedUploads(StreamUploadMixin):
        """MLflow's repository, with a submission's answer bounded and written under the lock."""

        def __init__(self, repo: Any) -> None:
            self._repo = repo

        def __getattr__(self, name: str) -> Any:
            return getattr(self._repo, name)

        def log_artifact_from_stream(
            self, stream: Any, artifact_file_name: str, artifact_path: str | None = None
        ) -> None:
            self._repo.log_artifact_from_stream(stream, artifact_file_name, artifact_path)

        async def log_artifact_from_async_stream(
            self, chunks: AsyncIterable[bytes], artifact_file_name: str,
            artifact_path: str | None = None,
        ) -> None:  # fmt: skip
            import asyncio

            name, path = artifact_file_name, artifact_path
            found = await asyncio.to_thread(submission_of, path, name, tags_of)
            if found is None:
                return await self._repo.log_artifact_from_async_stream(chunks, name, path)
            _, run_id = found

            def stored() -> bool:
                listed = self._repo.list_artifacts(path) or []
                return ANSWER_FILE in {posixpath.basename(f.path) for f in listed}

            def write(data: bytes) -> None:
                self._repo.log_artifact_from_stream(io.BytesIO(data), name, path)

            try:
                data = await read_bounded(chunks)
                await asyncio.to_thread(write_answer, run_id, data, status_of, stored, write)
            except AnswerRefusedError as e:  # MLflow's handler answers its own exceptions
                from mlflow.exceptions import MlflowException
                from mlflow.protos.databricks_pb2 import ErrorCode

                raise MlflowException(e.message, error_code=ErrorCode.Value(e.code)) from None
            return None

    def fenced() -> Any:
        repo = original()
        return FencedUploads(repo) if isinstance(repo, StreamUploadMixin) else repo

    fenced.attnref_fence = True  # type: ignore[attr-defined]
    artifact_router._get_artifact_repo = fenced
