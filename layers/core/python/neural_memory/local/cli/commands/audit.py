"""``neural-memory audit``: a workspace's audit trail, newest first (the operator's view of what
``GET /v1/audit`` gives an admin key), from the store the settings name."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from neural_memory.audit_actions import ACTIONS as AUDIT_ACTIONS
from neural_memory.local.cli.common import cli_settings
from neural_memory.local.cli.flags import data_dir

if TYPE_CHECKING:
    import argparse
    from datetime import datetime

    from neural_memory.local.cli.flags import Commands


def _moment(value: str | None, flag: str) -> datetime | None:
    from datetime import UTC, datetime

    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{flag}: not an ISO-8601 date or time: {value!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def cmd_audit(args: argparse.Namespace) -> int:
    """Print the entries (time, key, action, count, ids), newest first; ``--json`` one object a line."""
    from neural_memory.audit.factory import audit_log_of
    from neural_memory.models.audit import MAX_PAGE, AuditQuery

    try:
        start, end = _moment(args.since, "--since"), _moment(args.until, "--until")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not 1 <= args.limit <= MAX_PAGE:
        print(f"error: --limit: between 1 and {MAX_PAGE}", file=sys.stderr)
        return 2
    query = AuditQuery(key=args.key, action=args.action, start=start, end=end, limit=args.limit)
    entries = audit_log_of(cli_settings(args)).read(args.workspace, query)
    for e in entries:
        if args.json:
            print(json.dumps(e.model_dump(mode="json")))
        else:
            ids = ", ".join(e.ids[:5]) + (f" (+{len(e.ids) - 5})" if len(e.ids) > 5 else "")
            print(f"{e.at:%Y-%m-%d %H:%M:%S}Z\t{e.key}\t{e.action}\t{e.count}\t{ids}")
    if not entries:
        print(f"no audit entries for {args.workspace!r} under these filters", file=sys.stderr)
    return 0


def register(commands: Commands) -> None:
    """``audit``: its filters, and the store's flags."""
    audit = commands.add_parser("audit", help="the audit trail of a workspace, newest first")
    audit.add_argument("--workspace", required=True, help="the workspace")
    audit.add_argument("--key", help="only this key's entries (its name)")
    audit.add_argument("--action", choices=AUDIT_ACTIONS, help="only this action")
    audit.add_argument("--since", help="at or after (ISO-8601: 2026-12-01 or 2026-12-01T09:00:00Z)")
    audit.add_argument("--until", help="at or before (ISO-8601)")
    audit.add_argument("--limit", type=int, default=50, help="entries at most (default 50)")
    audit.add_argument("--json", action="store_true", help="one JSON object an entry")
    data_dir(audit)
    audit.set_defaults(func=cmd_audit)
