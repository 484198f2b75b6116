"""Who counts as the team: each observation's provenance (who wrote it, as its source says) and,
from the workspace's ``TeamPolicy``, its ``trust``: ``team`` or ``outside``.

The provenance is the observation's ``metadata.authorAssociation``:

- GitHub's own word for a pull request, an issue or a comment (``author_association``: ``OWNER``,
  ``MEMBER``, ``COLLABORATOR``; ``CONTRIBUTOR``, ``FIRST_TIME_CONTRIBUTOR``, ``FIRST_TIMER``,
  ``MANNEQUIN``, ``NONE``), as a webhook or ``import github`` delivers it;
- ``COMMITTER``: text on the repository itself (a push's commits, a release, and what ``import git``
  reads from the default branch: people with commits there);
- ``DEPLOYMENT``: a deployment of the team's project (Vercel);
- none (``KEY``): written through the API, MCP or the hooks by one of the workspace's keys, or
  from a file by the operator (``neural-memory ingest``): the writer vouches for it. What a
  webhook brings always names its association (``NONE`` when GitHub's payload lacks one).

A team member whose organisation membership is private shows as ``CONTRIBUTOR`` on GitHub: the
policy's ``actors`` name such people (logins, ``actorName``) so they count as the team."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from collections.abc import Mapping

Trust = Literal["team", "outside"]
ASSOCIATION = "authorAssociation"  # the metadata key
COMMITTER = "COMMITTER"
DEPLOYMENT = "DEPLOYMENT"
KEY = "KEY"
GITHUB_TEAM = ("OWNER", "MEMBER", "COLLABORATOR")
DEFAULT_TEAM = (*GITHUB_TEAM, COMMITTER, DEPLOYMENT, KEY)


class TeamPolicy(BaseModel):
    """What counts as the team in a workspace: these associations, and these people whatever theirs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    associations: tuple[str, ...] = Field(default=DEFAULT_TEAM, description="Provenances that count as the team")
    actors: tuple[str, ...] = Field(default=(), description="People (actorName, a GitHub login) who always count")

    def trust(self, association: str | None, actor: str | None) -> Trust:
        """An observation's trust from its association (upper case, ``association_of``; None:
        ``KEY``, its writer's own word) and the person it names."""
        if actor is not None and actor.casefold() in {a.casefold() for a in self.actors}:
            return "team"
        return "team" if (association or KEY) in self.associations else "outside"


def association_of(metadata: Mapping[str, object]) -> str | None:
    """The provenance an observation's metadata names (``authorAssociation``), if any."""
    value = metadata.get(ASSOCIATION)
    return value.upper() if isinstance(value, str) and value.strip() else None
