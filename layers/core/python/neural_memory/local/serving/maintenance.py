"""The local server's daily maintenance: what AWS's daily schedule runs (``Service.maintain``:
purge expired observations, archive old E ones), in a background thread of ``serve``.

It runs once shortly after start (a minute, or the interval if shorter), then every
``maintenance_interval_hours``. Several processes on
one data folder may each run it: both steps are idempotent (a second run finds nothing to do).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from neural_memory.auth.roles import system
from neural_memory.clock import utcnow
from neural_memory.observability import logger

if TYPE_CHECKING:
    from neural_memory.service import Service

FIRST_RUN_DELAY_S = 60.0  # after start: the first requests (and the samples' load) go first


class DailyMaintenance:
    """A daemon thread running ``service.maintain`` every ``interval_s``; ``stop`` ends it."""

    def __init__(self, service: Service, interval_s: float, first_delay_s: float = FIRST_RUN_DELAY_S) -> None:
        self._service = service
        self._interval_s = interval_s
        self._first_delay_s = min(first_delay_s, interval_s)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="daily-maintenance", daemon=True)
        self.runs = 0  # completed runs, for the log and tests

    def start(self) -> None:
        """Begin the schedule."""
        self._thread.start()

    def stop(self) -> None:
        """End the schedule; a run under way finishes first (its writes are transactions)."""
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join()

    def _loop(self) -> None:
        delay = self._first_delay_s
        while not self._stopped.wait(delay):
            delay = self._interval_s
            try:
                done = self._service.maintain(utcnow(), system("maintenance"))
            except Exception:  # the next run tries again; the server keeps serving
                logger.exception("daily maintenance failed")
                continue
            self.runs += 1
            logger.info("daily maintenance: purged expired observations, archived old E ones", extra=done)
