"""A simulated class: the plan of a class's submissions, its run against a real server,
its record (``tools/record_class.py`` and the book). The top of the class: nothing imports it."""
