"""``neural-memory keys create|list|revoke``: API keys of the key store the settings name (the
embedded one, or DynamoDB with ``NM_KEY_STORE=dynamodb``); each creation and revocation goes to
the key's workspace's audit trail."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from neural_memory.auth.roles import ROLES
from neural_memory.local.cli.common import cli_settings
from neural_memory.local.cli.flags import data_dir

if TYPE_CHECKING:
    import argparse

    from neural_memory.auth.base import KeyRecord
    from neural_memory.local.cli.flags import Commands
    from neural_memory.settings import Settings


def _audit(settings: Settings, record: KeyRecord, action: str) -> None:
    """The key's creation or revocation in its workspace's audit trail (the operator's doing)."""
    from neural_memory.audit.factory import audit_log_of
    from neural_memory.audit.trail import entry
    from neural_memory.auth.roles import OPERATOR

    audit = audit_log_of(settings)
    done = entry(OPERATOR.name, "key.create" if action == "create" else "key.revoke", [record.key_id])
    try:
        audit.record(record.workspace_id, [done])
    finally:
        if (close := getattr(audit, "close", None)) is not None:
            close()


def cmd_keys_create(args: argparse.Namespace) -> int:
    """Create an API key for a workspace, with a name and a role; the key is the last line printed."""
    from neural_memory.auth.factory import build_key_store
    from neural_memory.auth.keys import issue
    from neural_memory.auth.roles import check_role
    from neural_memory.clock import utcnow

    settings = cli_settings(args)
    store = build_key_store(settings)
    if args.name is not None and any(
        k.name == args.name and k.revoked_at is None for k in store.list_keys(args.workspace)
    ):
        print(f"error: --name: workspace {args.workspace!r} already has a key named {args.name!r}", file=sys.stderr)
        return 2
    try:
        key, record = issue(store, args.workspace, utcnow(), name=args.name, role=check_role(args.role))
    except ValueError as exc:
        field = "--workspace" if "workspace" in str(exc) else "--name"
        print(f"error: {field}: {exc}", file=sys.stderr)
        return 2
    _audit(settings, record, "create")
    who = record.caller
    print(
        f"API key {who.name!r} ({who.role}) for workspace {args.workspace!r}, id {record.key_id} "
        "(shown once; only its hash is stored):"
    )
    print(key)
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    """Every key (of one workspace): id, name, role, workspace, created, last used; never the key."""
    from neural_memory.auth.factory import build_key_store

    def when(moment: object) -> str:
        return "-" if moment is None else f"{moment:%Y-%m-%d %H:%M}Z"

    records = build_key_store(cli_settings(args)).list_keys(args.workspace)
    print("id\tname\trole\tworkspace\tcreated\tlast used\trevoked")
    for record in records:
        who = record.caller
        print(
            f"{record.key_id}\t{who.name}\t{who.role}\t{record.workspace_id}\t{when(record.created_at)}\t"
            f"{when(record.last_used_at)}\t{when(record.revoked_at)}"
        )
    if not records:
        print(
            "no keys yet: neural-memory keys create --workspace W --name NAME --role read|write|admin", file=sys.stderr
        )
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    """Revoke an API key (the key, or its id as ``keys list`` shows it; read from standard input
    when KEY is ``-``, so it stays out of shell history)."""
    from neural_memory.auth.factory import build_key_store
    from neural_memory.auth.keys import revoked
    from neural_memory.clock import utcnow

    settings = cli_settings(args)
    key = sys.stdin.readline().strip() if args.key == "-" else args.key
    record = revoked(build_key_store(settings), key, utcnow())
    if record is None:
        print("error: no such key, or it is already revoked", file=sys.stderr)
        return 1
    _audit(settings, record, "revoke")
    print("revoked")
    return 0


def register(commands: Commands) -> None:
    """``keys create|list|revoke``."""
    keys = commands.add_parser("keys", help="manage API keys").add_subparsers(dest="keys_command", required=True)
    create = keys.add_parser("create", help="create a key for a workspace")
    create.add_argument("--workspace", required=True, help="the workspace the key reads and writes")
    create.add_argument("--name", help="who acts with it (createdBy, the audit trail); default: the workspace")
    create.add_argument("--role", default="write", choices=ROLES, help="read, write (default) or admin")
    data_dir(create)
    create.set_defaults(func=cmd_keys_create)
    listed = keys.add_parser("list", help="every key: name, role, workspace, created, last used (never the key)")
    listed.add_argument("--workspace", help="only this workspace's keys")
    data_dir(listed)
    listed.set_defaults(func=cmd_keys_list)
    revoke = keys.add_parser("revoke", help="revoke a key (it stops working at once locally)")
    revoke.add_argument("key", help="the key, its id (keys list), or - to read it from standard input")
    data_dir(revoke)
    revoke.set_defaults(func=cmd_keys_revoke)
