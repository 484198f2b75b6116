"""Engineering keys: the identifiers of engineering work that observations from different
sources hold in their metadata, which link them (``GET /v1/observations/{id}/lineage``).

- ``commit``: ``commitSha``, the full sha (a push's head, a merged pull request's merge commit, the
  commit a deployment carried; a note may name one too); a push's ``after`` is read as well.
- ``pullRequest`` / ``issue``: ``repo`` and ``number`` together. GitHub numbers the issues and pull
  requests of a repository in one sequence, so the pair names one of them: a pull request when
  either observation is one (a ``pull_request_*`` type) or comments on one (``pull_request: true``).
- ``deployment``: ``deploymentId``.

Each key says which metadata pairs hold it (``groups``: any group, every pair of it), the most
selective pair first, so a store can start from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neural_memory.domain.filters import MetadataScalar
    from neural_memory.models import LinkKind, ObservationRecord

MAX_KEY_CHARS = 500  # longer metadata strings are not indexed (``filters.metadata_terms``)

Pairs = tuple[tuple[str, "MetadataScalar"], ...]


@dataclass(frozen=True)
class EngineeringKey:
    """One key an observation holds: its kind, how it reads, and the metadata pairs holding it."""

    kind: LinkKind
    key: str
    groups: tuple[Pairs, ...]

    @property
    def identity(self) -> tuple[str, str]:
        """What two observations must share for the key to link them (a pull request and an
        issue with the same repo and number are the same thing, seen from two sides)."""
        family = "number" if self.kind in ("pullRequest", "issue") else self.kind
        return family, self.key


def keys_of(record: ObservationRecord) -> list[EngineeringKey]:
    """The engineering keys ``record``'s metadata holds (none for most notes and turns)."""
    metadata = record.metadata
    keys: list[EngineeringKey] = []
    for name in ("commitSha", "after"):
        sha = metadata.get(name)
        if _text(sha) and not any(k.key == sha for k in keys):
            keys.append(EngineeringKey("commit", str(sha), ((("commitSha", str(sha)),), (("after", str(sha)),))))
    repo, number = metadata.get("repo"), metadata.get("number")
    if _text(repo) and isinstance(number, int) and not isinstance(number, bool):
        kind: LinkKind = "pullRequest" if is_pull_request(record) else "issue"
        keys.append(EngineeringKey(kind, f"{repo}#{number}", ((("number", number), ("repo", str(repo))),)))
    deployment = metadata.get("deploymentId")
    if _text(deployment):
        keys.append(EngineeringKey("deployment", str(deployment), ((("deploymentId", str(deployment)),),)))
    return keys


def is_pull_request(record: ObservationRecord) -> bool:
    """Whether the observation is a pull request's, or a comment on one."""
    return record.observation_type.startswith("pull_request") or record.metadata.get("pull_request") is True


def shared(subject: list[EngineeringKey], other: ObservationRecord) -> list[tuple[LinkKind, str]]:
    """The keys ``other`` shares with the subject's, as (kind, key): a repo and number is a pull
    request's when either side is a pull request's."""
    theirs = {key.identity: key for key in keys_of(other)}
    links: list[tuple[LinkKind, str]] = []
    for key in subject:
        match = theirs.get(key.identity)
        if match is None:
            continue
        kind = "pullRequest" if "pullRequest" in (key.kind, match.kind) else key.kind
        links.append((kind, key.key))
    return links


def _text(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_KEY_CHARS
