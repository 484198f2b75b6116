"""Secrets never become memories: what counts as one (``detectors``), taking them out of every
write (``observations``), and out of what was stored before (``scrub``)."""
