"""Who calls, and what their key's role lets them do.

A key has a name (who acts: the server writes it as an observation's ``createdBy`` and in the audit
trail) and a role: ``read`` searches, answers, reads, asks who knows and why; ``write`` also adds
memories and changes or deletes those it wrote; ``admin`` also changes or deletes any memory and
reads the audit trail. A key made before roles existed is a ``write`` key named after its workspace
(``LEGACY_ROLE``), and an observation stored before ``createdBy`` existed counts as written by that
name (``owner``): such keys keep changing what they wrote, as before.

What the server writes on its own behalf (webhooks, the maintenance, the operator's CLI on the data
folder) acts as ``system:<what>``: a name no key can have (``NAME_PATTERN`` has no colon)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from neural_memory.errors import Forbidden

if TYPE_CHECKING:
    from collections.abc import Iterable

Role = Literal["read", "write", "admin"]
ROLES: tuple[Role, ...] = get_args(Role)
LEGACY_ROLE: Role = "write"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
_RANK = {role: rank for rank, role in enumerate(ROLES)}


@dataclass(frozen=True, slots=True)
class Caller:
    """Who makes a call: the key's name and role (or the server's own ``system:`` name)."""

    name: str
    role: Role

    def may(self, needed: Role) -> bool:
        """Whether this caller's role includes ``needed``."""
        return _RANK[self.role] >= _RANK[needed]

    def require(self, needed: Role, doing: str) -> None:
        """``Forbidden`` (403) naming the role ``doing`` needs, unless this caller has it."""
        if not self.may(needed):
            raise Forbidden(
                f"{doing} needs a key with the {needed} role; this key ({self.name}) has the {self.role} role"
            )


def system(what: str) -> Caller:
    """The server acting on its own behalf: webhooks, the maintenance, the operator's CLI."""
    return Caller(name=f"system:{what}", role="admin")


# Who writes when no key is involved: the operator's commands on the data folder (ingest, import,
# purge, scrub) and whatever calls the service in-process without naming a caller.
OPERATOR = Caller(name="system:cli", role="admin")


def owner(created_by: str | None, workspace_id: str) -> str:
    """Who wrote a stored observation: its ``createdBy``, or, stored before there was one, the
    workspace's name (every key was then named so)."""
    return created_by or workspace_id


def require_owner(caller: Caller, workspace_id: str, written_by: Iterable[tuple[str, str | None]], doing: str) -> None:
    """``Forbidden`` when a ``write`` caller would change or delete an observation another key
    wrote (``written_by``: id and ``createdBy`` of each stored one); ``admin`` may, ``read`` never."""
    caller.require("write", doing)
    if caller.may("admin"):
        return
    for observation_id, created_by in written_by:
        if owner(created_by, workspace_id) != caller.name:
            raise Forbidden(
                f"{doing} of observation {observation_id!r} needs a key with the admin role: "
                f"{owner(created_by, workspace_id)} wrote it, and this key ({caller.name}) has the {caller.role} role"
            )


def check_name(name: str) -> str:
    """A key's name as given, or ``ValueError`` saying what a name may be."""
    if not NAME_PATTERN.match(name):
        raise ValueError(
            "a key's name must be 1..64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit"
        )
    return name


def check_role(role: str) -> Role:
    """A role by name, or ``ValueError`` naming the roles."""
    for known in ROLES:
        if role == known:
            return known
    raise ValueError(f"role must be one of {', '.join(ROLES)}")
