"""The real ``neural-memory serve`` process on a free loopback port and a fresh data dir, as
``make serve`` runs it: what browser tests (and screenshots) point Chromium at."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

STARTUP_S = 120  # loading the local model on a busy 2-core machine


@dataclass
class Served:
    """A running server: its URL, the demo workspace's key, its data dir and process."""

    url: str
    key: str
    data_dir: Path
    process: subprocess.Popen[str]
    output: str | None = None
    # What it printed so far, read as it prints: a server that logs every request (the "search
    # complete" line) would otherwise fill the pipe and block mid-request.
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None
    # With ``split_streams``: standard error apart from standard output (which holds the banner).
    error_lines: list[str] = field(default_factory=list)
    error_reader: threading.Thread | None = None
    # How the stop went: seconds from Ctrl-C to exit, and whether it had to be killed
    stop_s: float | None = None
    killed: bool = False

    def drain(self) -> None:
        """Read its output in the background until it ends."""
        stream = self.process.stdout
        assert stream is not None
        self.reader = threading.Thread(target=lambda: self.lines.extend(stream), daemon=True)
        self.reader.start()
        if (errors := self.process.stderr) is not None:
            self.error_reader = threading.Thread(target=lambda: self.error_lines.extend(errors), daemon=True)
            self.error_reader.start()

    @property
    def stdout_text(self) -> str:
        """What it printed on standard output (everything, unless ``split_streams``)."""
        return "".join(self.lines)

    @property
    def stderr_text(self) -> str:
        """What it printed on standard error, with ``split_streams``."""
        return "".join(self.error_lines)

    def stop(self) -> str:
        """Stop it as Ctrl-C does (once); its output."""
        if self.output is None:
            self.process.send_signal(signal.SIGINT)
            began = time.monotonic()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                self.killed = True
            self.stop_s = time.monotonic() - began
            for reader in (self.reader, self.error_reader):
                if reader is not None:
                    reader.join(timeout=10)
            self.output = "".join(self.lines)
        return self.output


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve(
    data_dir: Path,
    *,
    samples: bool = True,
    program: Sequence[str] | None = None,
    split_streams: bool = False,
    extra: Sequence[str] = (),
    quiet: bool = True,
) -> Iterator[Served]:
    """``neural-memory serve`` on ``data_dir`` (with the sample events unless ``samples`` is
    False: an empty demo workspace), ready to answer; stopped on exit. ``program``: the argv that
    runs ``neural-memory`` (e.g. ``tests/helpers/hash_cli.command``), if not the CLI itself;
    ``split_streams``: keep standard error apart; ``extra``: more ``serve`` flags; ``quiet``: False
    to have its access log."""
    port = free_port()
    command = [*(program or [sys.executable, "-m", "neural_memory.local.cli"]), "serve", "--port", str(port)]
    command += ["--quiet"] if quiet else []
    command += ["--data-dir", str(data_dir), *extra] + ([] if samples else ["--no-samples"])
    errors = subprocess.PIPE if split_streams else subprocess.STDOUT
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
    url = f"http://127.0.0.1:{port}"
    served = Served(url, "", data_dir, process)
    served.drain()
    try:
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(url + "/health", timeout=5):  # loopback only
                    break
            except (urllib.error.URLError, OSError):
                time.sleep(0.3)
        else:
            raise RuntimeError(f"serve did not start within {STARTUP_S} s:\n{served.stop()[-4000:]}")
        served.key = (data_dir / "demo-api-key").read_text().strip()
        yield served
    finally:
        served.stop()
