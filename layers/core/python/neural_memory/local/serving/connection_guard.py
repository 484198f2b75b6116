"""What keeps one client from starving the others, on the local server (waitress:
``local/serving/server.py``'s ``GuardedServer``) and on the MCP server over HTTP (uvicorn:
``local/mcp_server/http_guard.py``).

waitress on its own refuses new connections once 100 are open, and drops a connection only after
it has been idle for its timeout, a timeout every byte restarts: a client that sends a request
line and then one header byte every few seconds holds its connection for ever, and a hundred such
clients lock everyone else out (issue 48). Here:

- **a deadline per request**, counted from its first byte and never restarted: the request line
  and headers within ``head_timeout_s``, the whole request (body included) within
  ``request_timeout_s``; a connection past it is closed;
- **a connection limit** well above what a team uses (``NM_SERVE_MAX_CONNECTIONS``; the process's
  open-file limit is raised to fit it, poll() instead of select() so descriptors past 1024 work);
- at the limit, **the slowest clients go first**: a new connection is accepted after closing the
  connection whose unfinished request began longest ago (else the one idle longest); a connection
  whose request is being served is never closed;
- each drop is counted (``GuardStats``, shown by ``GET /health``) and the log says so, at most one
  line per ``LOG_EVERY_S`` with the counts since the last.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from neural_memory.observability import logger

HEAD_TIMEOUT_S = 10.0  # a request line and headers: a few hundred bytes
REQUEST_TIMEOUT_S = 60.0  # the whole request: 1 MiB (the default body limit) at 17 kB/s or faster
MAX_CONNECTIONS = 1000  # a team's agents and people hold tens; loopback by default
LOG_EVERY_S = 10.0

REASONS = ("headTimeout", "requestTimeout", "atLimit")


@dataclass
class GuardStats:
    """Connections the guard closed since start, by reason, and when the log last said so."""

    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REASONS, 0))
    unlogged: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REASONS, 0))
    logged_at: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, reason: str) -> None:
        with self.lock:
            self.dropped[reason] += 1
            self.unlogged[reason] += 1

    def log_due(self, now: float) -> None:
        """One warning with the drops since the last one, if any and if ``LOG_EVERY_S`` has passed
        (``now``: ``time.monotonic()``)."""
        with self.lock:
            if not any(self.unlogged.values()) or now - self.logged_at < LOG_EVERY_S:
                return
            since, self.unlogged = self.unlogged, dict.fromkeys(REASONS, 0)
            self.logged_at = now
            total = sum(self.dropped.values())
        logger.warning(
            f"slow clients dropped: {sum(since.values())} ({since['headTimeout']} sent no complete request head "
            f"in time, {since['requestTimeout']} no complete request, {since['atLimit']} closed at the connection "
            f"limit to let others in); {total} since start",
            extra={"droppedSince": since, "droppedTotal": total},
        )


def began(channel: Any) -> float | None:
    """When the request ``channel`` is receiving began (monotonic), or None when it receives none."""
    value = getattr(channel, "request_began", None)
    return value if isinstance(value, float) and channel.request is not None else None


def note_received(channel: Any, pending: Any, before: float | None) -> None:
    """After ``channel.received``: the request being received (``pending`` was it before) began
    when its first byte came; one completed leaves none."""
    if channel.request is None:
        channel.request_began = None
    elif channel.request is not pending or before is None:
        channel.request_began = time.monotonic()


def raise_open_file_limit(connections: int) -> int:
    """Raise this process's open-file limit to fit ``connections`` sockets, as many again being
    accepted at once (an event loop accepts a burst before it can close anyone to make room: the
    listen backlog, set to the limit) and the store's files; returns the connections it fits
    (fewer, when the hard limit is lower)."""
    try:
        import resource
    except ImportError:  # not POSIX
        return connections
    spare = 64  # the databases, their WAL files, the model, pipes
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * connections + spare
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return connections
    return max(min(connections, (soft - spare) // 2), 10)
