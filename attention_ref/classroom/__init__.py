"""The class: its server, who may do what on it, assignments, submissions and grades.

Its parts, each a folder with one reason to change, each importing only the ones listed before
it (a test proves it, `tests/test_layers.py`):

* `coursework`: assignments and grades, pure (what is asked, the policy, the gradebook, the
  LMS exports);
* `connection`: the class server seen from a client (the REST client, the accounts' calls, the
  homework client, certificates, errors);
* `gate`: what runs inside ``mlflow server`` on every request (the access table applied, the
  homework fence, quotas, bounds; the one seam to MLflow's private names);
* `exchange`: the homework's verbs (assign, fetch, submit, grade);
* `hosting`: the server's operations (PostgreSQL, ``mlflow server``, the edge, the folder).

The simulated class that records the teaching page's figures is the book's
(`attnref_book.simulated`), outside the installed package.

Uses `attention_ref.experiments` and `attention_ref.exercises`; nothing there imports this
package.
"""
