"""Where a benchmark's service logs go: nowhere. Formatting each line stays part of what is
timed (a deployed search pays for it); the bytes would only bury the benchmark's own output."""

from __future__ import annotations

import logging
import os

from neural_memory.observability import logger


def discard_log_output() -> None:
    """Point the service logger's stream handlers at ``os.devnull`` for the rest of the process."""
    sink = open(os.devnull, "w")  # noqa: SIM115 - held for the process's life
    for handler in logger.handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(sink)
