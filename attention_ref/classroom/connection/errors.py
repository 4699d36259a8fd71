"""The class server's errors: `ServerError` and its timeout, one line that says why.

Raised by every part of the class server: the PostgreSQL cluster
(`attention_ref.classroom.hosting.cluster`), the REST calls
(`attention_ref.classroom.connection.client`), the accounts
(`attention_ref.classroom.connection.accounts`), the folder's lock and pid file
(`attention_ref.classroom.hosting.server_folder`) and the server itself
(`attention_ref.classroom.hosting.server`, which exports both).
"""

from __future__ import annotations


class ServerError(ValueError):
    """The class server cannot start or be used as asked; the message says why, in one line."""


class ServerTimeoutError(ServerError):
    """The class server took the request but did not answer in time (it may have acted on it:
    read back what it holds before saying anything)."""
