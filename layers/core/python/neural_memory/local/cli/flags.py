"""The flags several commands share, each added by a function of the parser it goes on: the
store's (``--data-dir``, ``--embedder``, ``--store``, ``--opensearch-url``), a remote API's
(``--url``, ``--key``), ``--verbose`` for a command whose output is its answer, the data folder
alone for backup, restore and check, and the check of an ISO-8601 ``--since``."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypeAlias

    # What each command module's ``register`` adds its command to (``parser.py`` makes it).
    Commands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]


def since(value: str) -> str:
    """Validate ``--since`` early: an ISO-8601 date or datetime (UTC if no zone)."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO-8601 date: {value!r}") from exc
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def data_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", help="embedded store folder (env NM_DATA_DIR, default .neural-memory)")
    p.add_argument("--embedder", choices=["onnx", "cohere", "none"], help="embedding provider (env NM_EMBEDDER)")
    p.add_argument("--store", choices=["sqlite", "opensearch"], help="store (env NM_STORE, default sqlite)")
    p.add_argument("--opensearch-url", help="OpenSearch endpoint when --store opensearch (env NM_OPENSEARCH_URL)")


def verbose(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--verbose", action="store_true", help="log lines on standard error (default: ~/.local/state/neural-memory)"
    )


def remote(p: argparse.ArgumentParser) -> None:
    # The flags choose the remote API; the variables only fill in the one not given, so a
    # shell that exports them for the MCP server still searches the local store by default.
    p.add_argument(
        "--url", help="a remote API (a stack's ApiUrl or http://127.0.0.1:8080); NM_API_URL if only --key is given"
    )
    p.add_argument("--key", help="its API key, which names the workspace; NM_API_KEY when only --url is given")


def folder(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", help="the embedded store's folder (env NM_DATA_DIR, default .neural-memory)")
