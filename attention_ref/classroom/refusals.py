"""The class server's gate, its refusals: the 400, 403 and 503 answers that refuse a request.

Each says it is the gate's (`REFUSAL`, where MLflow's own say "Permission denied"). A student
gets one answer, `HIDDEN`, for a thing that does not exist and for one that is another's, so
that no name or id tells a classmate's thing from none (`_absent_as_forbidden`). A 503 (the
accounts' store or a submission's answer not available for a moment) is retried by clients.
Used by `attention_ref.classroom.auth` and the gate's other parts; Flask is imported only when
a refusal is made (inside ``mlflow server``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Response

#: the prefix of this gate's refusals (MLflow's own say "Permission denied")
REFUSAL = "class server: "

_UNAVAILABLE = {
    "error_code": "TEMPORARILY_UNAVAILABLE",
    "message": "the class server's accounts are unavailable for a moment; try again",
}


def _forbidden(message: str) -> Response:
    from flask import make_response

    return make_response({"error_code": "PERMISSION_DENIED", "message": REFUSAL + message}, 403)


def _bad_request(message: str) -> Response:
    from flask import make_response

    return make_response({"error_code": "BAD_REQUEST", "message": REFUSAL + message}, 400)


#: a student's one answer for what does not exist and for what they may not see
HIDDEN = "it does not exist, or it is not yours to see"


def _hidden() -> Response:
    """The same 403 and body for a thing that is absent and one that is another's."""
    return _forbidden(HIDDEN)


def _absent_as_forbidden(response: Response) -> Response:
    """After MLflow answered a student: "not found" and MLflow's own "permission denied" become
    one answer (`_hidden`), so that no name or id tells a classmate's thing from none."""
    if response.status_code == 404 or (
        response.status_code == 403 and response.get_data() == b"Permission denied"
    ):
        return _hidden()
    return response


def _unavailable(message: str) -> Response:
    from flask import make_response

    return make_response({"error_code": "TEMPORARILY_UNAVAILABLE", "message": message}, 503)
