"""A private class folder: what a class keeps is its owner's alone.

The class folder holds every student's answers (``artifacts/``), the edge's access log (who
asked what, from where), the accounts' database and the server's secret key. On a host that
other people use (a lab machine, a JupyterHub server) none of it may be readable by them:

* everything the class server and its processes create (``attnref server start``,
  ``mlflow server``, nginx, PostgreSQL's setup) is created under `PRIVATE_UMASK`: files 0600,
  folders 0700 (`private_umask` for this process, ``Popen(umask=…)`` for the children);
* the only bits left to other users are the ones a process of another user needs to pass
  through (`traverse_mode`): as root, PostgreSQL runs as ``postgres`` and nginx's workers as
  ``www-data``, which must enter the class folder (and the edge's, to its buffers) to reach
  their own folders, so those are 0711 (enter, not list); as an ordinary user every process
  is that user, and they are 0700. nginx's workers reach the application's sockets through
  ``app/`` (0710, its group theirs: `attention_ref.classroom.hosting.edge.app_socket_dir`);
* a folder made before (by an older attnref, or by hand) that other users can read is mended
  at start, and the start says so in one line (`make_private`). Mend, not refuse: the teacher
  cannot want the class's answers readable by anyone on the machine, and a refusal would only
  make them type the ``chmod`` it names; the line says what was open, so nothing changes
  unseen.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from attention_ref.classroom.connection.errors import ServerError

#: what the class server's processes create is their owner's only (files 0600, folders 0700)
PRIVATE_UMASK = 0o077
#: the bits of group and other users that let them read or write (list, for a folder)
_OPEN = 0o066


@contextlib.contextmanager
def private_umask() -> Iterator[None]:
    """`PRIVATE_UMASK` for this process while the block runs (the children it starts keep
    it); the umask before, after."""
    before = os.umask(PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(before)


def traverse_mode() -> int:
    """The mode of a folder other users' processes of the class must pass through: 0711 as
    root (``postgres``, ``www-data`` enter it; no one lists it), 0700 otherwise."""
    return 0o711 if os.geteuid() == 0 else 0o700


def make_private(root: Path, traverse: Sequence[Path] = ()) -> str | None:
    """Take from other users (group and others) what lets them read or write anything under
    ``root``: a file becomes its owner's only, a folder too, except the ``traverse`` folders,
    which keep `traverse_mode`. Symbolic links and sockets are left as they are (a socket's
    folder guards it). One line saying what was mended, or ``None`` when nothing was open;
    `ServerError` in one line for a file this user may not change."""
    keep = {p.absolute() for p in traverse}
    mended: list[Path] = []
    _mend(root, keep, mended)
    for folder, dirs, files in os.walk(root):  # not into linked folders
        for name in (*dirs, *files):
            _mend(Path(folder) / name, keep, mended)
    if not mended:
        return None
    shown = ", ".join(str(p.relative_to(root)) if p != root else "." for p in mended[:3])
    more = f" and {len(mended) - 3} more" if len(mended) > 3 else ""
    return (
        f"made the class folder {root} private: {len(mended)} files and folders other users "
        f"could read ({shown}{more}) are now for their owner only"
    )


def _mend(path: Path, keep: set[Path], mended: list[Path]) -> None:
    try:
        st = path.lstat()
    except FileNotFoundError:
        return  # gone meanwhile
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)) or not st.st_mode & _OPEN:
        return
    mode = stat.S_IMODE(st.st_mode)
    wanted = traverse_mode() if path.absolute() in keep else mode & 0o700
    try:
        path.chmod(wanted)
    except PermissionError:
        raise ServerError(
            f"{path} is readable by other users and belongs to uid {st.st_uid}, not to this "
            f"user: make it private (chmod go-rwx {path}) or start the class as its owner"
        ) from None
    mended.append(path)
