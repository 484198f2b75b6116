"""``neural-memory ask`` and ``neural-memory who``: an answer with its citations, and who knows a
subject with their evidence, from the terminal. Plain text a person reads without an LLM (with
none configured, the answer is the extractive one: the best sentences of the best memories, each
cited); ``--json`` prints the API's reply. The repository's memory when run inside one that has
it (``find_memory``), ``--workspace``, or a remote API (``--url``/``--key``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from neural_memory.agent_tools.summaries import news
from neural_memory.local.cli.common import cli_settings, find_memory
from neural_memory.local.cli.flags import data_dir, remote, verbose

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from neural_memory.local.cli.flags import Commands
    from neural_memory.models import AnswerResponse, ExpertsResponse


def cmd_ask(args: argparse.Namespace) -> int:
    """The answer to QUESTION, then the sources it cites: id, title, link and the quoted words."""
    body = {"question": args.question, "topK": args.top_k}
    reply = _call(args, "answer", body, lambda client: client.answer(args.question, top_k=args.top_k))
    if reply is None:
        return 1
    if args.json:
        print(reply.model_dump_json(by_alias=True, indent=2))
        return 0
    answered: AnswerResponse = reply
    print(answered.answer)
    if answered.citations:
        print("\nSources:")
        for n, citation in enumerate(answered.citations, 1):
            print(f"[{n}] {citation.id}  {citation.title}" + (f"  {citation.url}" if citation.url else ""))
            print(f'    "{citation.quote}"')
    else:
        print("(no memory supports an answer)")
    if answered.method == "extractive":
        print("(the best sentences of the best memories: no LLM is configured to write an answer)")
    _degraded(answered.degraded)
    return 0


def cmd_who(args: argparse.Namespace) -> int:
    """Who knows SUBJECT, best first: what they did, then the memories that show it."""
    body = {"query": args.subject, "topK": args.top_k, "evidence": args.evidence}
    reply = _call(
        args, "experts", body, lambda client: client.experts(args.subject, top_k=args.top_k, evidence=args.evidence)
    )
    if reply is None:
        return 1
    if args.json:
        print(reply.model_dump_json(by_alias=True, indent=2))
        return 0
    experts: ExpertsResponse = reply
    when = ""
    if experts.period is not None:
        since = f" since {experts.period.start:%Y-%m-%d}" if experts.period.start else ""
        when = since + (f" until {experts.period.end:%Y-%m-%d}" if experts.period.end else "")
    if not experts.experts:
        print(f"nobody's memories match {args.subject!r}{when}")
    for n, expert in enumerate(experts.experts, 1):
        did = ", ".join(f"{c} {kind}" for kind, c in sorted(expert.counts.items(), key=lambda c: (-c[1], c[0])))
        print(f"{n}. {expert.actor_name}  (score {expert.score:.2f}: {did})")
        for evidence in expert.evidence:
            role = f", {evidence.role}" if evidence.role != "author" else ""
            print(
                f"   {evidence.occurred_at:%Y-%m-%d}  {evidence.title}  "
                f"[{evidence.id}] ({evidence.observation_type}{role})"
            )
    if when and experts.experts:
        print(f"(the period the question asks about:{when})")
    _degraded(experts.degraded)
    return 0


def _degraded(degraded: list[str]) -> None:
    for entry in news(degraded):  # a provider never configured is the steady state, not news
        print(f"  degraded: {entry}")


def _call(args: argparse.Namespace, operation: str, body: dict[str, Any], remote: Callable[[Any], Any]) -> Any:
    """The reply of ``operation`` on the embedded store (in-process) or the remote API; None, with
    the error on standard error, when it fails."""
    if args.url or args.key:
        if args.workspace:
            print("error: --workspace: a remote API's key names the workspace", file=sys.stderr)
            return None
        from neural_memory.local.client import ClientError, NeuralMemoryClient

        try:
            with NeuralMemoryClient(args.url, args.key) as client:
                return remote(client)
        except ClientError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return None
    from neural_memory.errors import NeuralMemoryError
    from neural_memory.models import AnswerRequest, ExpertsRequest
    from neural_memory.runtime import build_service

    workspace = find_memory(args)
    model: type[BaseModel] = AnswerRequest if operation == "answer" else ExpertsRequest
    try:
        request = model.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        print(f"error: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}", file=sys.stderr)
        return None
    try:
        return getattr(build_service(cli_settings(args)), operation)(workspace, request, "cli")
    except NeuralMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def register(commands: Commands) -> None:
    """``ask QUESTION`` and ``who SUBJECT``, with a remote API's flags and the store's."""
    ask = commands.add_parser("ask", help="an answer from the memory, with the sources it cites")
    ask.add_argument("question", help="the question, as you would ask a teammate")
    ask.add_argument("--top-k", type=int, default=5, help="memories the answer may cite (default 5)")
    who = commands.add_parser("who", help="who knows a subject, with the memories that show it")
    who.add_argument("subject", help="the subject (a path, a feature), or the question as asked")
    who.add_argument("--top-k", type=int, default=5, help="people at most (default 5)")
    who.add_argument("--evidence", type=int, default=3, help="memories shown per person (default 3)")
    for asking, run in ((ask, cmd_ask), (who, cmd_who)):
        asking.add_argument("--workspace", help="the embedded store's workspace (default: the repository's memory)")
        asking.add_argument("--json", action="store_true", help="print the API's JSON reply")
        remote(asking)
        data_dir(asking)
        verbose(asking)
        asking.set_defaults(func=run)
