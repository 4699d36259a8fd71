"""The server's operations on the teacher's machine: PostgreSQL, the ``mlflow server``
processes, the edge (nginx), TLS names, the class folder (its lock, its privacy, its status) and
what each student stores. Above the gate (it starts it) and the verbs' client."""
