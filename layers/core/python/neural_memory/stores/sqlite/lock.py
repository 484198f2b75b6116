"""A readers-writer lock: many readers at once, or one writer; waiting writers go first, so a
stream of searches cannot starve an ingest."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


class ReadWriteLock:
    """Not reentrant: a reader must not ask to write (release the read side first)."""

    def __init__(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the lock shared with other readers."""
        with self._changed:
            while self._writing or self._writers_waiting:
                self._changed.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._changed:
                self._readers -= 1
                if self._readers == 0:
                    self._changed.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the lock alone."""
        with self._changed:
            self._writers_waiting += 1
            try:
                while self._writing or self._readers:
                    self._changed.wait()
            finally:
                self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._changed:
                self._writing = False
                self._changed.notify_all()
