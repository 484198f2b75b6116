"""``neural-memory models pull``: a hub model's files downloaded into the data folder, each checked
against its pinned sha256 and size before it is kept.

Files are written into ``models/.pull-NAME/`` as ``FILE.part``; a cut connection keeps the part,
and the next attempt (an automatic retry, or running the command again) asks only for the rest
(``Range``). A file whose bytes do not match its pin is deleted at once, nothing of it kept. When
every file is verified, a manifest is written and the folder is renamed to ``models/NAME`` in one
step, so a model folder is either whole or absent.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.providers.embeddings.onnx_local import sha256_of
from neural_memory.providers.hub_models import MANIFEST, HubFile, HubModel, models_dir

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import httpx

    Progress = Callable[[HubFile, int], None]  # bytes of the file on disk so far


class DownloadFailed(Exception):
    """The hub could not be read (not found, refused, cut): what was received is kept to resume."""


class ChecksumMismatch(DownloadFailed):
    """A file's bytes are not the pinned ones: refused, and nothing of it kept."""


DEFAULT_DEADLINE_S = 1800.0  # a whole pull: ~40 MB at 25 kB/s; `--timeout`, NM_MODEL_PULL_TIMEOUT_S


def pull(
    model: HubModel,
    data_dir: Path,
    hub_url: str,
    progress: Progress | None = None,
    retries: int = 3,
    timeout_s: float = 30.0,
    deadline_s: float = DEFAULT_DEADLINE_S,
) -> Path:
    """Download and verify ``model`` into ``data_dir/models/NAME``; return that folder.
    ``retries``: further attempts at a file after a connection error, each resuming where the
    last stopped; ``timeout_s`` bounds each connect and read, ``deadline_s`` the whole pull (a hub
    sending a byte now and then never trips a read timeout). Raises ``ChecksumMismatch`` or
    ``DownloadFailed`` (one line, saying what to do) for every failure of the network or the hub;
    a ``.part`` stays only if the hub can resume it (``Accept-Ranges: bytes``)."""
    import httpx

    deadline = time.monotonic() + deadline_s
    staging = models_dir(data_dir) / f".pull-{model.name}"
    staging.mkdir(parents=True, exist_ok=True)
    with httpx.Client(follow_redirects=True, timeout=timeout_s, max_redirects=MAX_REDIRECTS) as client:
        for file in model.files:
            done = staging / file.name
            if done.is_file() and sha256_of(done) == file.sha256:
                continue  # verified by an earlier, interrupted run
            try:
                _fetch(client, model.url(hub_url, file), file, staging, progress, retries, (deadline, deadline_s))
            except ChecksumMismatch:
                shutil.rmtree(staging, ignore_errors=True)  # nothing of a refused pull stays
                raise
            except DownloadFailed:
                if not any(staging.iterdir()):  # nothing received to resume from
                    staging.rmdir()
                raise
    manifest = {
        "name": model.name,
        "repo": model.repo,
        "revision": model.revision,
        "files": {f.name: {"path": f.path, "sha256": f.sha256, "size": f.size} for f in model.files},
        "pulledAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return _swap_in(staging, models_dir(data_dir) / model.name)


MAX_REDIRECTS = 10  # the hub redirects once, to its CDN; a loop ends here


@dataclass
class _Part:
    """A file being received: where, how much, and whether the hub can send the rest of it later
    (it said ``Accept-Ranges: bytes``, or answered a range with 206)."""

    path: Path
    resumable: bool = False

    @property
    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0


def _fetch(
    client: httpx.Client,
    url: str,
    file: HubFile,
    staging: Path,
    progress: Progress | None,
    retries: int,
    deadline: tuple[float, float],
) -> None:
    """One file into ``staging``, resumed across connection errors, then verified and renamed."""
    path = staging / f"{file.name}.part"
    part = _Part(path, resumable=path.exists())  # an earlier run kept it only if the hub could resume it
    try:
        for attempt in range(retries + 1):
            have = part.size
            if have > file.size:  # not a prefix of the pinned file: start again
                part.path.unlink()
                have = 0
            if have < file.size:
                try:
                    _receive(client, url, file, part, have, progress, deadline)
                except _Retriable as exc:
                    if time.monotonic() >= deadline[0]:  # a read waits at most what was left of it
                        raise _gave_up(url, file, part, deadline[1], str(exc)) from exc
                    if attempt < retries:
                        time.sleep(min(2.0**attempt * 0.25, 2.0, max(deadline[0] - time.monotonic(), 0)))
                        continue
                    raise DownloadFailed(
                        f"the connection to {_host(url)} failed while reading {url} "
                        f"({part.size:,} of {file.size:,} bytes received: {exc}); {_again(part)}"
                    ) from exc
            break
    except DownloadFailed as exc:
        if isinstance(exc, ChecksumMismatch) or not part.resumable:
            part.path.unlink(missing_ok=True)  # no resume can use it
        raise
    actual = sha256_of(part.path)
    if actual != file.sha256:
        part.path.unlink()
        raise ChecksumMismatch(
            f"{file.path} from {url} has sha256 {actual}, not the pinned {file.sha256}: refused and deleted "
            "(the hub served other bytes than the ones this version of neural-memory was pinned to)"
        )
    os.replace(part.path, staging / file.name)


class _Retriable(Exception):
    """A connection that failed (refused, reset, timed out, cut): worth another attempt."""


def _receive(
    client: httpx.Client,
    url: str,
    file: HubFile,
    part: _Part,
    have: int,
    progress: Progress | None,
    deadline: tuple[float, float],
) -> None:
    """Append the rest of ``file`` to ``part`` from byte ``have`` (a server that ignores the range
    sends it all again, and the part is rewritten). Each read waits at most what is left of the
    deadline; the deadline is checked as each block arrives."""
    import httpx

    headers = {"Range": f"bytes={have}-"} if have else {}
    left = deadline[0] - time.monotonic()
    if left <= 0:
        raise _gave_up(url, file, part, deadline[1])
    timeout = httpx.Timeout(min(client.timeout.read or left, left))
    try:
        with client.stream("GET", url, headers=headers, timeout=timeout) as response:
            if response.status_code == 404:
                raise DownloadFailed(f"{url} is not on the hub (404): the pinned revision or file is gone")
            if response.status_code not in (200, 206):
                part.resumable = False  # e.g. 416: the range asked for is of no use
                raise DownloadFailed(f"{url} answered HTTP {response.status_code}; try again later")
            part.resumable = response.status_code == 206 or response.headers.get("accept-ranges", "") == "bytes"
            mode = "ab" if response.status_code == 206 and have else "wb"
            written = have if mode == "ab" else 0
            with part.path.open(mode) as out:
                for block in response.iter_bytes():  # as received: a cut keeps every byte that came
                    written += len(block)
                    if written > file.size:
                        raise ChecksumMismatch(f"{url} sends more than the pinned {file.size:,} bytes: refused")
                    out.write(block)
                    if progress is not None:
                        progress(file, written)
                    if time.monotonic() > deadline[0]:
                        out.flush()
                        raise _gave_up(url, file, part, deadline[1])
    except httpx.TooManyRedirects as exc:
        raise DownloadFailed(f"{url} redirects in a loop (over {MAX_REDIRECTS} redirects); try again later") from exc
    except httpx.UnsupportedProtocol as exc:
        raise DownloadFailed(f"{url} is not an http(s) address: check --hub-url / NM_MODEL_HUB_URL") from exc
    except httpx.TransportError as exc:  # refused, reset, timed out, cut mid-body
        raise _Retriable(f"{type(exc).__name__}: {_one_line(exc)}") from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:  # a reply httpx cannot read, an address it cannot parse
        raise DownloadFailed(f"{url} could not be read: {type(exc).__name__}: {_one_line(exc)}") from exc


def _gave_up(url: str, file: HubFile, part: _Part, deadline_s: float, last: str = "") -> DownloadFailed:
    return DownloadFailed(
        f"gave up on {url} after {deadline_s:g} s, the pull's time limit (--timeout, NM_MODEL_PULL_TIMEOUT_S): "
        f"{part.size:,} of {file.size:,} bytes received{f' (last: {last})' if last else ''}; {_again(part)}"
    )


def _again(part: _Part) -> str:
    """What to do after a failed transfer: resume, if the part can be resumed."""
    if part.resumable and part.size:
        return "run the same command again to resume"
    return "run the same command again"


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split()) or "no detail"


def _swap_in(staging: Path, folder: Path) -> Path:
    """Rename the verified ``staging`` folder to ``folder`` (an earlier pull there is replaced)."""
    if folder.exists():
        old = folder.with_name(f".old-{folder.name}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(folder, old)
        os.replace(staging, folder)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, folder)
    return folder


def _host(url: str) -> str:
    return url.split("/")[2] if "://" in url else url
