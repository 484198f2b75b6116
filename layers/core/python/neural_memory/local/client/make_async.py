"""``python layers/core/python/neural_memory/local/client/make_async.py``: writes ``aio.py``, the asynchronous client,
from ``sync.py``, so the two clients have one source. The same methods, ``async``: every call
awaited, ``httpx.AsyncClient``, ``anyio.sleep`` between retries, ``aclose`` and ``async with``.
``tests/unit/test_async_client_made.py`` holds the committed ``aio.py`` to what this makes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
SOURCE = HERE / "sync.py"
TARGET = HERE / "aio.py"

# (pattern, replacement), applied in order to the synchronous client's source.
_REWRITES: tuple[tuple[str, str], ...] = (
    (r'"""The API over HTTP, synchronously \(``NeuralMemoryClient``\)\. ``aio\.py`` is made from this file\n'
     r'\(``make_async\.py``\): edit this one\."""',
     '"""The API over HTTP, asynchronously (``AsyncNeuralMemoryClient``). Made from ``sync.py`` by\n'
     '``make_async.py``: do not edit."""'),
    (r"^import time\n", "import anyio\n"),
    (r"\bNeuralMemoryClient\b", "AsyncNeuralMemoryClient"),
    (r"The API over HTTP, synchronously\. Use as a context manager \(or call ``close``\)\.",
     "The API over HTTP, asynchronously. Use with ``async with`` (or await ``aclose``)."),
    (r"httpx\.BaseTransport", "httpx.AsyncBaseTransport"),
    (r"httpx\.Client\(", "httpx.AsyncClient("),
    (r"def __enter__\(", "async def __aenter__("),
    (r"def __exit__\(", "async def __aexit__("),
    (r"self\.close\(\)", "await self.aclose()"),
    (r"def close\(self\)", "async def aclose(self)"),
    (r"self\._http\.close\(\)", "await self._http.aclose()"),
    (r"^    def (?!__init__|__aenter__|__aexit__)(\w+)\(", r"    async def \1("),
    (r"self\.send\(", "await self.send("),
    (r"self\._http\.request\(", "await self._http.request("),
    (r"time\.sleep\(", "await anyio.sleep("),
)  # fmt: skip


def made() -> str:
    """``aio.py`` as made from ``sync.py`` now, formatted as the repository formats code."""
    text = SOURCE.read_text()
    for pattern, replacement in _REWRITES:
        text = re.sub(pattern, replacement, text, flags=re.MULTILINE)
    return _formatted(text)


def _formatted(text: str) -> str:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    for command in (["check", "--select", "I", "--fix", "--quiet"], ["format", "--quiet"]):
        text = subprocess.run(
            [ruff, *command, "--stdin-filename", str(TARGET), "-"],
            input=text,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return text


def main() -> None:
    TARGET.write_text(made())
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
