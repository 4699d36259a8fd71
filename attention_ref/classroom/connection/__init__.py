"""The class server seen from a client (a student's machine or the teacher's): the REST
client, its patience with a busy server, the accounts' calls, the homework client, the
certificate a client verifies, the errors they raise. Above `attention_ref.classroom.coursework`;
below the gate, the verbs and the server's operations."""
