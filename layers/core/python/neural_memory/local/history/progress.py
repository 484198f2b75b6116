"""An import's progress as a person reads it: events done of the total, the rate and the time left.

On a terminal, a bar (tqdm) redrawn in place; anywhere else (a log file, a pipe, a CI job), where
a redrawn bar is one unreadable line or nothing, a plain line every ``LOG_EVERY`` seconds and one
at the end. The peak memory of the process is part of the last line (``peak_rss_mb``).
"""

from __future__ import annotations

import resource
import sys
import time
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

LOG_EVERY = 15.0  # seconds between two lines of a log


def peak_rss_mb() -> float:
    """The peak resident memory of this process so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def duration(seconds: float) -> str:
    """``75`` -> "1 min 15 s"; ``4000`` -> "1 h 6 min"."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


class ImportProgress:
    """Counts what was done against ``total`` (None: unknown), starting from ``done`` (a resumed
    import's), and shows it on ``stream``."""

    def __init__(
        self,
        total: int | None,
        unit: str,
        *,
        done: int = 0,
        stream: IO[str] | None = None,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        terminal: bool | None = None,
    ) -> None:
        self.total = total
        self.unit = unit
        self.done = done
        self._start_done = done
        self._stream = stream or sys.stderr
        self._every = LOG_EVERY if every is None else every
        self._clock = clock
        self._began = self._last = clock()
        self._bar: Any = None
        is_terminal = terminal if terminal is not None else self._stream.isatty()
        if is_terminal:
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=done, unit=unit, desc="importing", file=self._stream)

    def __enter__(self) -> ImportProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def update(self, count: int) -> None:
        self.done += count
        if self._bar is not None:
            self._bar.update(count)
            return
        now = self._clock()
        if now - self._last >= self._every:
            self._last = now
            self._line(now)

    def line(self) -> str:
        """Where the import is: "1,024 of 9,594 events (10.7 %), 61.2 events/s, about 2 min 20 s left"."""
        return self._describe(self._clock())

    def _describe(self, now: float) -> str:
        elapsed = max(now - self._began, 1e-9)
        rate = (self.done - self._start_done) / elapsed
        said = f"{self.done:,}"
        if self.total:
            said += f" of {self.total:,} {self.unit}s ({100 * self.done / self.total:.1f} %)"
        else:
            said += f" {self.unit}s"
        said += f", {rate:.1f} {self.unit}s/s"
        if self.total and rate > 0 and self.done < self.total:
            said += f", about {duration((self.total - self.done) / rate)} left"
        return said

    def _line(self, now: float) -> None:
        print(f"importing: {self._describe(now)}", file=self._stream, flush=True)

    def close(self) -> None:
        """The last line: what was done, in how long, and the peak memory."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        now = self._clock()
        took = duration(now - self._began)
        print(
            f"imported {self._describe(now)} in {took}; peak memory {peak_rss_mb():,.0f} MB",
            file=self._stream,
            flush=True,
        )
