"""What each workspace's agents need to put notes and conversation turns on the bus:
``events:PutEvents`` on this bus only, and only for events whose ``source`` is
``neural-memory.<workspace>`` (their own workspace's), so an agent can write to no other workspace
and never pose as GitHub or Vercel. The condition key ``events:source`` is the only part of an
entry IAM can see, which is why the workspace is in the source (the ingest function files the
event under the source's workspace). Per workspace with a ``neural-memory:<workspace>`` route: a
customer managed policy, to attach to an agent's own role or user, and a role holding it, for
agents that assume one (README, "Agents on the bus")."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from constructs import Construct
from neural_memory.ingest.normalizers.generic import source_for


@dataclass(frozen=True)
class AgentGrant:
    """One workspace's agent grant."""

    policy: iam.ManagedPolicy
    role: iam.Role


def output_name(workspace: str, allowed: str) -> str:
    """``workspace`` in the characters an output id or export name allows (``allowed``, a regex
    class), with a short hash of it when any had to go, so ``a.b`` and ``a_b`` stay apart."""
    kept = re.sub(f"[^{allowed}]", "", workspace)
    return kept if kept == workspace else f"{kept}{hashlib.sha256(workspace.encode()).hexdigest()[:8]}"


class AgentEvents(Construct):
    """``grants[workspace]``: a ``policy`` allowing PutEvents on ``bus`` with ``events:source`` =
    ``neural-memory.<workspace>``, and a ``role`` holding only it, assumable by principals of this
    account whose own policies allow ``sts:AssumeRole`` on it."""

    def __init__(self, scope: Construct, construct_id: str, *, bus: events.IEventBus, workspaces: list[str]) -> None:
        super().__init__(scope, construct_id)
        self.grants: dict[str, AgentGrant] = {}
        for workspace in workspaces:
            source = source_for(workspace)
            scope_ = Construct(self, workspace)
            policy = iam.ManagedPolicy(
                scope_,
                "PutEventsPolicy",
                description=f"PutEvents on the Neural Memory bus, source {source} only (workspace {workspace})",
                statements=[
                    iam.PolicyStatement(
                        actions=["events:PutEvents"],
                        resources=[bus.event_bus_arn],
                        # Per entry: any other source (another workspace's, GitHub's) is refused
                        # with NotAuthorizedForSourceException
                        conditions={"StringEquals": {"events:source": source}},
                    )
                ],
            )
            role = iam.Role(
                scope_,
                "Role",
                assumed_by=iam.AccountRootPrincipal(),
                description=f"Agents of workspace {workspace} putting {source} events on the bus",
                managed_policies=[policy],
            )
            self.grants[workspace] = AgentGrant(policy, role)
