"""Engineering views over observations: the keys of engineering work they share (``keys``), why
one changed (``lineage``), who knows about a subject (``experts``) and what went stale
(``staleness``)."""
