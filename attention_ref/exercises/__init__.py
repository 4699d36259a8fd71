"""The exercises of the homework and of today's attention."""
