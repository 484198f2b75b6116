"""A hook's work that outlives the hook: a child process in a session of its own, its standard
streams closed so that Claude Code, which reads them until every holder closes them, never waits
for it (a turn's capture, the workspace's background learnt); where there is no fork, the caller
does the work in-line, still within its own deadline."""

from __future__ import annotations

import os


def detached() -> bool:
    """Fork a child that carries on alone (True in the child); the parent returns at once. Where
    there is no fork, the caller delivers in-line (still within its own deadline)."""
    if not hasattr(os, "fork"):
        return True
    if os.fork() > 0:
        return False
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # Claude Code reads the hook's stdout and stderr until they close
        os.dup2(devnull, fd)
    return True
