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


def pull(
    model: HubModel,
    data_dir: Path,
    hub_url: str,
    progress: Progress | None = None,
    retries: int = 3,
    timeout_s: float = 30.0,
) -> Path:
    """Download and verify ``model`` into ``data_dir/models/NAME``; return that folder.
    ``retries``: further attempts at a file after a connection error, each resuming where the
    last stopped. Raises ``ChecksumMismatch`` or ``DownloadFailed`` (whose message says what to do)."""
    import httpx

    staging = models_dir(data_dir) / f".pull-{model.name}"
    staging.mkdir(parents=True, exist_ok=True)
    with httpx.Client(follow_redirects=True, timeout=timeout_s) as client:
        for file in model.files:
            done = staging / file.name
            if done.is_file() and sha256_of(done) == file.sha256:
                continue  # verified by an earlier, interrupted run
            try:
                _fetch(client, model.url(hub_url, file), file, staging, progress, retries)
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


def _fetch(
    client: httpx.Client, url: str, file: HubFile, staging: Path, progress: Progress | None, retries: int
) -> None:
    """One file into ``staging``, resumed across connection errors, then verified and renamed."""
    import httpx

    part = staging / f"{file.name}.part"
    for attempt in range(retries + 1):
        have = part.stat().st_size if part.exists() else 0
        if have > file.size:  # not a prefix of the pinned file: start again
            part.unlink()
            have = 0
        if have < file.size:
            try:
                _receive(client, url, file, part, have, progress)
            except httpx.TransportError as exc:
                got = part.stat().st_size if part.exists() else 0
                if attempt < retries:
                    time.sleep(min(2.0**attempt, 8.0) * 0.25)
                    continue
                raise DownloadFailed(
                    f"the connection to {_host(url)} failed while reading {url} "
                    f"({got:,} of {file.size:,} bytes received: {type(exc).__name__}: {exc}); run the same command "
                    "again to resume"
                ) from exc
        actual = sha256_of(part)
        if actual != file.sha256:
            part.unlink()
            raise ChecksumMismatch(
                f"{file.path} from {url} has sha256 {actual}, not the pinned {file.sha256}: refused and deleted "
                "(the hub served other bytes than the ones this version of neural-memory was pinned to)"
            )
        os.replace(part, staging / file.name)
        return


def _receive(client: httpx.Client, url: str, file: HubFile, part: Path, have: int, progress: Progress | None) -> None:
    """Append the rest of ``file`` to ``part`` from byte ``have`` (a server that ignores the range
    sends it all again, and the part is rewritten)."""
    headers = {"Range": f"bytes={have}-"} if have else {}
    with client.stream("GET", url, headers=headers) as response:
        if response.status_code == 404:
            raise DownloadFailed(f"{url} is not on the hub (404): the pinned revision or file is gone")
        if response.status_code not in (200, 206):
            raise DownloadFailed(f"{url} answered HTTP {response.status_code}; try again later")
        mode = "ab" if response.status_code == 206 and have else "wb"
        written = have if mode == "ab" else 0
        with part.open(mode) as out:
            for block in response.iter_bytes():  # as received: a cut keeps every byte that came
                written += len(block)
                if written > file.size:
                    raise ChecksumMismatch(f"{url} sends more than the pinned {file.size:,} bytes: refused")
                out.write(block)
                if progress is not None:
                    progress(file, written)


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
