"""``neural-memory search``: the embedded store in-process, or a remote API through the client."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from neural_memory.agent_tools.summaries import news
from neural_memory.local.cli.common import cli_settings, find_memory
from neural_memory.local.cli.flags import data_dir, remote, since, verbose

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from neural_memory.local.cli.flags import Commands
    from neural_memory.models import FacetsResponse, SearchResponse
    from neural_memory.service import Service

# The CLI's filter flags, the API's filter each sets, and what a person calls its values.
FLAGS = (
    ("source", "sources", "sources", "sources"),
    ("type", "observationTypes", "observationTypes", "observation types"),
    ("actor", "actors", "actors", "actors"),
    ("tier", "tiers", "tiers", "tiers"),
)


def cmd_search(args: argparse.Namespace) -> int:
    """Search a workspace from the terminal: the embedded store, or a remote API (``--url/--key``)."""
    filters: dict[str, Any] = {}
    for flag, name, _, _ in FLAGS:
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
        counts: Callable[[], FacetsResponse] = lambda: _facets_remote(args)  # noqa: E731
    else:
        args.workspace = find_memory(args)  # the repository's memory, inside one that has it
        code, reply = _search_embedded(args, body)
        counts = lambda: _facets_embedded(args)  # noqa: E731
    if reply is None:
        return code
    if args.json:
        print(reply.model_dump_json(by_alias=True, indent=2))
        return 0
    for n, result in enumerate(reply.results, 1):
        when = result.occurred_at.strftime("%Y-%m-%d %H:%M")
        stale = f"  [possibly stale: commit {result.possibly_stale[:12]}]" if result.possibly_stale else ""
        who = f"  by {result.actor_name}" if result.actor_name else ""
        print(
            f"{n:>2}. {result.score:.3f}  {when}  {result.source}/{result.observation_type}  {result.title}{who}{stale}"
        )
        print(f"    {result.snippet}")
    latency = reply.latency
    print(
        f"{len(reply.results)} results in {latency.total} ms "
        f"(embed {latency.embed}, retrieval {latency.retrieval}, llm filter {latency.llm_filter}, "
        f"rerank {latency.rerank})"
    )
    for entry in news(reply.degraded):  # one a line: "rerank:thorough->fast (why)"; never-configured ones left out
        print(f"  degraded: {entry}")
    if not reply.results:
        for reason in why_empty(args, counts):
            print(f"  {reason}")
    return 0


def why_empty(args: argparse.Namespace, counts: Callable[[], FacetsResponse]) -> list[str]:
    """Why a search found nothing, when the workspace can say: it is empty, or a filter names a
    value no observation has (a typo such as ``--source githb``), with the values there are."""
    try:
        facets = counts()
    except Exception:  # a hint only: the search itself answered
        return []
    workspace = args.workspace or "demo"
    if facets.total == 0:
        where = "the workspace of this key" if (args.url or args.key) else f"workspace {workspace!r}"
        return [f"{where} holds no observations (--workspace names another; ingest or serve fill one)"]
    reasons = []
    known = facets.facets.model_dump(by_alias=True)
    for flag, _, field, called in FLAGS:
        asked = getattr(args, flag) or []
        there = [count["value"] for count in known[field]]
        missing = [value for value in asked if value not in there]
        if missing:
            listed = ", ".join(there) or "none"
            reasons.append(f"no observation has --{flag} {', '.join(missing)}; {called} there: {listed}")
    return reasons


def _facets_embedded(args: argparse.Namespace) -> FacetsResponse:
    from neural_memory.models.facets import MAX_FACET_VALUES

    return _service(args).facets(args.workspace or "demo", None, MAX_FACET_VALUES, "cli")


def _service(args: argparse.Namespace) -> Service:
    """One service per command (the model loads once for the search and its hint)."""
    from neural_memory.runtime import build_service

    if getattr(args, "service", None) is None:
        args.service = build_service(cli_settings(args))
    built: Service = args.service
    return built


def _facets_remote(args: argparse.Namespace) -> FacetsResponse:
    from neural_memory.local.client import NeuralMemoryClient
    from neural_memory.models.facets import MAX_FACET_VALUES

    with NeuralMemoryClient(args.url, args.key) as client:
        return client.facets(limit=MAX_FACET_VALUES)


def _search_embedded(args: argparse.Namespace, body: dict[str, Any]) -> tuple[int, SearchResponse | None]:
    from neural_memory.errors import NeuralMemoryError
    from neural_memory.models import SearchRequest

    try:
        request = SearchRequest.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        print(f"error: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}", file=sys.stderr)
        return 2, None
    try:
        return 0, _service(args).search(args.workspace or "demo", request, "cli")
    except NeuralMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1, None


def _search_remote(args: argparse.Namespace, body: dict[str, Any]) -> tuple[int, SearchResponse | None]:
    from neural_memory.local.client import ApiError, ClientConfigurationError, ClientError, NeuralMemoryClient

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


def register(commands: Commands) -> None:
    """``search QUERY``: its filters, a remote API's flags and the store's."""
    search = commands.add_parser("search", help="search a workspace (embedded, or a remote API with --url/--key)")
    search.add_argument("query", help="what to look for, in words")
    search.add_argument("--workspace", help="embedded store's workspace (default: the repository's memory, else demo)")
    search.add_argument("--source", action="append", help="source (repeatable): github, vercel, manual, agent...")
    search.add_argument("--type", action="append", help="observation type (repeatable)")
    search.add_argument("--actor", action="append", help="actor name (repeatable)")
    search.add_argument("--tier", action="append", choices=["A", "C", "E"], help="tier (repeatable)")
    search.add_argument("--since", type=since, help="only observations on or after this ISO-8601 date")
    search.add_argument(
        "--mode", default="hybrid", choices=["hybrid", "semantic", "keyword"], help="retrieval (default hybrid)"
    )
    search.add_argument("--top-k", type=int, default=10, help="results at most (default 10)")
    search.add_argument("--json", action="store_true", help="print the API's JSON reply")
    remote(search)
    data_dir(search)
    verbose(search)
    search.set_defaults(func=cmd_search)
