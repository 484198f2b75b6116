"""What the authorizer function decides of a request's headers: the key's workspace and who acts
(``Admitted``: its id, name and role, for the request context), or what is wrong with the key
(``Refused``). Keys are read from the process's key store (``runtime.get_key_store``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.auth.keys import extract_api_key, identify, key_problem, note_use
from neural_memory.auth.process_keys import get_key_store
from neural_memory.clock import utcnow
from neural_memory.errors import Unauthorized

if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass(frozen=True)
class Admitted:
    workspace_id: str
    context: dict[str, str]  # workspaceId, keyId, keyName and role: what the handlers read


@dataclass(frozen=True)
class Refused:
    problem: str  # what is wrong with the key, for the Deny's message


def admit(headers: Mapping[str, str] | None) -> Admitted | Refused:
    """The key in ``headers`` (``Authorization: Bearer <key>``) checked, and its use noted."""
    try:
        key = identify(get_key_store(), extract_api_key(headers))
    except Unauthorized:
        return Refused(key_problem(headers))
    note_use(get_key_store(), key, utcnow())
    caller = key.caller
    context = {"workspaceId": key.workspace_id, "keyId": key.key_id, "keyName": caller.name, "role": caller.role}
    return Admitted(key.workspace_id, context)
