"""Whose and which repository's a memory an agent saves is, when the agent does not say: the
session's repository (``metadata.repo``, owner/name, what a session's brief asks about) and the
person working in it (``actorName``), as a captured turn carries them. Told by the transport:
``neural-memory mcp`` reads its project's git (the working folder's origin, ``NM_AGENT_USER`` or
git's ``user.name``); ``/mcp`` reads the headers ``.mcp.json`` sends (``X-Neural-Memory-Repository``,
``X-Neural-Memory-Actor``). What the agent wrote itself is never overridden."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

REPOSITORY_HEADER = "X-Neural-Memory-Repository"
ACTOR_HEADER = "X-Neural-Memory-Actor"
_REPOSITORY = re.compile(r"^[\w.-]{1,100}/[\w.-]{1,100}$")
MAX_ACTOR = 200


@dataclass(frozen=True)
class Provenance:
    """The repository (owner/name) and the person a session's saved memories default to."""

    repository: str | None = None
    actor: str | None = None

    @classmethod
    def of(cls, repository: str | None, actor: str | None) -> Provenance:
        """From untrusted text (a header): a repository not shaped owner/name, or an empty actor, is dropped."""
        repository = (repository or "").strip()
        actor = " ".join((actor or "").split())[:MAX_ACTOR]
        return cls(repository if _REPOSITORY.match(repository) else None, actor or None)

    def apply(self, observations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each observation with the defaults it lacks."""
        done = []
        for observation in observations:
            given = dict(observation)
            metadata = given.get("metadata")
            if self.repository and (metadata is None or (isinstance(metadata, dict) and "repo" not in metadata)):
                given["metadata"] = {**(metadata or {}), "repo": self.repository}
            if self.actor and not given.get("actorName"):
                given["actorName"] = self.actor
            done.append(given)
        return done


def from_headers(headers: Mapping[str, str]) -> Provenance:
    """What ``/mcp``'s request says (header names case-insensitive)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    return Provenance.of(lowered.get(REPOSITORY_HEADER.lower()), lowered.get(ACTOR_HEADER.lower()))
