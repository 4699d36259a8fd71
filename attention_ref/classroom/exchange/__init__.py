"""The homework's verbs over the class server's REST API, one module per verb family.

`assign` (the teacher), `fetch` and `submit` (the student), `grade` (the teacher, and the
gradebook read back), `answers` (an answer read as the grader reads it), `student_words` (what
a student reads, in their language). Above `attention_ref.classroom.gate` (a refusal's words)
and `attention_ref.classroom.connection` (the client every verb shares).
"""
