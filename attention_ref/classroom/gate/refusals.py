"""The class server's gate, its refusals: the 400, 403 and 503 answers that refuse a request.

Each says it is the gate's (`REFUSAL`, where MLflow's own say "Permission denied"). A student
gets one answer, `HIDDEN`, for a thing that does not exist and for one that is another's, so
that no name or id tells a classmate's thing from none (`absent_as_forbidden`). A 503 (the
accounts' store or a submission's answer not available for a moment) is retried by clients.
Used by `attention_ref.classroom.gate.auth` and the gate's other parts; Flask is imported only when
a refusal is made (inside ``mlflow server``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Response

#: the prefix of this gate's refusals (MLflow's own say "Permission denied")
REFUSAL = "class server: "

#: the accounts' store could not answer (clients retry a 503)
UNAVAILABLE = {
    "error_code": "TEMPORARILY_UNAVAILABLE",
    "message": "the class server's accounts are unavailable for a moment; try again",
}


def forbidden(message: str) -> Response:
    from flask import make_response

    return make_response({"error_code": "PERMISSION_DENIED", "message": REFUSAL + message}, 403)


#: the error code of a submission the assignment's policy refuses (a cut-off passed, the attempts
#: used): final, unlike a refusal a retry may pass
CLOSED = "ASSIGNMENT_CLOSED"


def closed(message: str) -> Response:
    """A submission the assignment's policy refuses (`CLOSED`): 403, in one line."""
    from flask import make_response

    return make_response({"error_code": CLOSED, "message": REFUSAL + message}, 403)


def bad_request(message: str) -> Response:
    from flask import make_response

    return make_response({"error_code": "BAD_REQUEST", "message": REFUSAL + message}, 400)


#: a student's one answer for what does not exist and for what they may not see
HIDDEN = "it does not exist, or it is not yours to see"


def hidden() -> Response:
    """The same 403 and body for a thing that is absent and one that is another's."""
    return forbidden(HIDDEN)


def absent_as_forbidden(response: Response) -> Response:
    """After MLflow answered a student: "not found" and MLflow's own "permission denied" become
    one answer (`hidden`), so that no name or id tells a classmate's thing from none; in a
    GraphQL answer, an experiment or run it gave none of says so (`_said_in_graphql`)."""
    if response.status_code == 404 or (
        response.status_code == 403 and response.get_data() == b"Permission denied"
    ):
        return hidden()
    return _said_in_graphql(response)


#: the GraphQL fields that name one experiment or run; MLflow answers ``null`` for one the
#: student may not read (and for one that does not exist), with no word
_ONE_THING = ("mlflowGetExperiment", "mlflowGetRun")


def _said_in_graphql(response: Response) -> Response:
    """A student's GraphQL answer whose experiment or run is ``null`` gets an error saying
    `HIDDEN`: MLflow's UI shows a page's errors, and showed a blank page for that ``null``
    (a student opening the gradebook's link). Any other answer is left as it is."""
    from flask import request

    if request.path != "/graphql" or response.status_code != 200 or not response.is_json:
        return response
    answer = response.get_json(silent=True)
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, dict):
        return response
    empty = [field for field in _ONE_THING if field in data and data[field] is None]
    if not empty:
        return response
    errors = list(answer.get("errors") or [])
    errors += [{"message": REFUSAL + HIDDEN, "path": [field]} for field in empty]
    response.set_data(json.dumps({**answer, "errors": errors}))
    return response


def unavailable(message: str) -> Response:
    """503: a moment's unavailability (clients retry it)."""
    from flask import make_response

    return make_response({"error_code": "TEMPORARILY_UNAVAILABLE", "message": message}, 503)


def throttled(wait_s: int) -> Response:
    """429 with ``Retry-After``: the sender's failed logins are spent for ``wait_s`` seconds
    (`attention_ref.classroom.gate.logins`); no password was checked."""
    from flask import make_response

    response = make_response(
        {
            "error_code": "REQUEST_LIMIT_EXCEEDED",
            "message": REFUSAL + f"too many failed logins; try again in {wait_s} s",
        },
        429,
    )
    response.headers["Retry-After"] = str(wait_s)
    return response


def graphql_error(message: str) -> Response:
    """A GraphQL request refused as GraphQL answers an error: ``{"data": null, "errors":
    [...]}``, 400 (GraphQL over HTTP: a request that could not be executed)."""
    from flask import make_response

    return make_response({"data": None, "errors": [REFUSAL + message]}, 400)
