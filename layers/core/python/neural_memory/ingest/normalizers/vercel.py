"""Vercel deployment webhooks (``deployment.created``, ``.succeeded``, ``.error``, ``.canceled``)
delivered as EventBridge events: ``detail`` is the webhook body (``id``, ``type``, ``createdAt``,
``payload``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from neural_memory.domain.ids import source_id
from neural_memory.ingest.normalizers.base import MalformedEvent, Normalized, UnsupportedEvent, dig, first_line
from neural_memory.models import ObservationIn
from neural_memory.trust.team import ASSOCIATION, DEPLOYMENT

_TYPES = {
    "deployment.created": ("deployment_created", "Deployment started"),
    "deployment.succeeded": ("deployment_succeeded", "Deployment succeeded"),
    "deployment.error": ("deployment_error", "Deployment failed"),
    "deployment.canceled": ("deployment_canceled", "Deployment canceled"),
}


def normalize(detail_type: str, body: dict[str, Any], event_time: str | None) -> Normalized:
    """Observations from one Vercel webhook body."""
    kind = body.get("type") or detail_type
    if not isinstance(kind, str) or kind not in _TYPES:
        raise UnsupportedEvent(f"Vercel event {kind!r} is not supported")
    observation_type, verb = _TYPES[kind]
    payload = body.get("payload")
    if not isinstance(payload, dict) or not isinstance(payload.get("deployment"), dict):
        raise MalformedEvent("Vercel payload has no deployment object")
    deployment = payload["deployment"]
    meta = deployment.get("meta") if isinstance(deployment.get("meta"), dict) else {}
    name = deployment.get("name") or payload.get("name") or "deployment"
    target = payload.get("target") or "preview"
    created = body.get("createdAt")
    occurred = _time_of(created) if isinstance(created, int | float) else event_time
    commit = first_line(meta.get("githubCommitMessage"), field="payload.deployment.meta.githubCommitMessage")
    sha = str(meta.get("githubCommitSha") or "")[:7]
    ref = meta.get("githubCommitRef")
    lines = [f"{verb}: {name} to {target} ({deployment.get('url')})."]
    if commit:
        lines.append(f"Commit {sha} on {ref}: {commit}")
    try:
        observation = ObservationIn.model_validate(
            {
                "id": _observation_id(body, deployment, kind),
                "source": "vercel",
                "sourceType": "deployment",
                "observationType": observation_type,
                "actorName": meta.get("githubCommitAuthorLogin") or meta.get("githubCommitAuthorName"),
                "occurredAt": occurred,
                "title": f"{verb}: {name} ({target})",
                "content": "\n".join(lines),
                "url": dig(payload, "links", "deployment"),
                "metadata": {
                    ASSOCIATION: DEPLOYMENT,  # a deployment of the team's own project
                    "project": name,
                    "target": target,
                    "deploymentId": deployment.get("id"),
                    "ref": ref,
                    **_commit(meta),
                },
            }
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise MalformedEvent(f"Vercel {kind} payload is malformed: {where}: {first['msg']}") from exc
    return Normalized(observations=[observation])


def _observation_id(body: dict[str, Any], deployment: dict[str, Any], kind: str) -> str:
    """The deployment and what happened to it (``vercel-dpl_…-succeeded``): what an import reading
    the deployments API knows too, so a webhook after an import updates it. A body without a
    deployment id keeps the webhook event's id, as before."""
    deployment_id = deployment.get("id")
    if isinstance(deployment_id, str) and deployment_id:
        return source_id("vercel", f"{deployment_id}-{kind.removeprefix('deployment.')}")
    return source_id("vercel", body.get("id"))


def _time_of(created_ms: float) -> datetime:
    """``createdAt`` (milliseconds since the epoch) as a time; ``MalformedEvent`` for NaN, an
    infinity or a number no date has (``fromtimestamp`` overflows on 1e30 and -1e15)."""
    try:
        return datetime.fromtimestamp(created_ms / 1000, tz=UTC)
    except (OverflowError, ValueError, OSError):
        raise MalformedEvent(f"createdAt {created_ms!r} is not a time in milliseconds since the epoch") from None


def _commit(meta: dict[str, Any]) -> dict[str, Any]:
    """The commit the deployment carried and its repository, when Vercel names them (a deployment
    from the CLI has none): the keys that link it to the push and the pull request."""
    found: dict[str, Any] = {}
    sha = meta.get("githubCommitSha")
    if isinstance(sha, str) and sha:
        found["commitSha"] = sha
    org, repo = meta.get("githubOrg"), meta.get("githubRepo")
    if isinstance(org, str) and isinstance(repo, str) and org and repo:
        found["repo"] = f"{org}/{repo}"
    return found
