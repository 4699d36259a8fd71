"""Assignments and grades, pure: what an assignment asks and each student's variant, its
policy (late work, attempts, feedback), the gradebook and its report, the LMS exports, right
and mistaken answers. The floor of the class: it imports no other part of it, no MLflow."""
