"""The real ``neural-memory serve`` process on a free loopback port and a fresh data dir, as
``make serve`` runs it: what browser tests (and screenshots) point Chromium at."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
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

    def stop(self) -> str:
        """Stop it as Ctrl-C does (once); its output."""
        if self.output is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.output, _ = self.process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.output, _ = self.process.communicate()
        return self.output


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve(data_dir: Path, *, samples: bool = True, program: Sequence[str] | None = None) -> Iterator[Served]:
    """``neural-memory serve`` on ``data_dir`` (with the sample events unless ``samples`` is
    False: an empty demo workspace), ready to answer; stopped on exit. ``program``: the argv that
    runs ``neural-memory`` (e.g. ``tests/helpers/hash_cli.command``), if not the CLI itself."""
    port = free_port()
    command = [*(program or [sys.executable, "-m", "neural_memory.local.cli"]), "serve", "--port", str(port), "--quiet"]
    command += ["--data-dir", str(data_dir)] + ([] if samples else ["--no-samples"])
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    served = Served(url, "", data_dir, process)
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
