"""The homework's verbs over the class server's REST API, one module per verb family.

`rest` is the client every verb shares; `assign` (the teacher), `fetch` and `submit` (the
student), `grade` (the teacher, and the gradebook read back). `attention_ref.classroom.homework`
is their one interface.
"""
