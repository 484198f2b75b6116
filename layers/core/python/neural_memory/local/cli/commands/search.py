"""``neural-memory search``: the embedded store in-process, or a remote API through the client."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

if TYPE_CHECKING:
    import argparse

    from neural_memory.models import SearchResponse


from neural_memory.local.cli.common import cli_settings


def cmd_search(args: argparse.Namespace) -> int:
    """Search a workspace from the terminal: the embedded store, or a remote API (``--url/--key``)."""
    filters: dict[str, Any] = {}
    for flag, name in (
        ("source", "sourceTypes"),
        ("type", "observationTypes"),
        ("actor", "actorNames"),
        ("tier", "tiers"),
    ):
        if getattr(args, flag):
            filters[name] = getattr(args, flag)
    if args.since:
        filters["dateRange"] = {"start": args.since}
    body = {"query": args.query, "topK": args.top_k, "mode": args.mode, "filters": filters or None}
    if args.url or args.key:
        if args.workspace:
            print("error: --workspace: a remote API's key names the workspace", file=sys.stderr)
            return 2
        code, reply = _search_remote(args, body)
    else:
        code, reply = _search_embedded(args, body)
    if reply is None:
        return code
    if args.json:
        print(reply.model_dump_json(by_alias=True, indent=2))
        return 0
    for n, result in enumerate(reply.results, 1):
        when = result.occurred_at.strftime("%Y-%m-%d %H:%M")
        print(f"{n:>2}. {result.score:.3f}  {when}  {result.source}/{result.observation_type}  {result.title}")
        print(f"    {result.snippet}")
    latency = reply.latency
    print(
        f"{len(reply.results)} results in {latency.total} ms "
        f"(embed {latency.embed}, retrieval {latency.retrieval})"
        + (f"; degraded: {reply.degraded}" if reply.degraded else "")
    )
    return 0


def _search_embedded(args: argparse.Namespace, body: dict[str, Any]) -> tuple[int, SearchResponse | None]:
    from neural_memory.errors import NeuralMemoryError
    from neural_memory.models import SearchRequest
    from neural_memory.service import build_service

    try:
        request = SearchRequest.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        print(f"error: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}", file=sys.stderr)
        return 2, None
    try:
        return 0, build_service(cli_settings(args)).search(args.workspace or "demo", request, "cli")
    except NeuralMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1, None


def _search_remote(args: argparse.Namespace, body: dict[str, Any]) -> tuple[int, SearchResponse | None]:
    from neural_memory.client import ApiError, ClientConfigurationError, ClientError, NeuralMemoryClient

    try:
        with NeuralMemoryClient(args.url, args.key) as client:
            query = body.pop("query")
            return 0, client.search(query, options={k: v for k, v in body.items() if v is not None})
    except ClientConfigurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2, None
    except ApiError as exc:
        print(f"error: {exc.code}: {exc.message} (request {exc.request_id})", file=sys.stderr)
        return 2 if exc.status == 400 else 1, None
    except ClientError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1, None
