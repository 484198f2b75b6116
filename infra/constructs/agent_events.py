"""What an agent needs to put notes and conversation turns on the bus: ``events:PutEvents`` on this
bus only, and only for events whose ``source`` is ``neural-memory`` (``AGENT_EVENT_SOURCE``), so an
agent can never pose as GitHub or Vercel. A customer managed policy, to attach to an agent's own
role or user, and a role holding it, for agents that assume one (README, "Agents on the bus")."""

from __future__ import annotations

from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from constructs import Construct

from infra.constants import AGENT_EVENT_SOURCE


class AgentEvents(Construct):
    """``policy``: PutEvents on ``bus`` with ``events:source`` = ``neural-memory``; ``role``: assumable
    by principals of this account whose own policies allow ``sts:AssumeRole`` on it, holding only
    ``policy``."""

    def __init__(self, scope: Construct, construct_id: str, *, bus: events.IEventBus) -> None:
        super().__init__(scope, construct_id)
        self.policy = iam.ManagedPolicy(
            self,
            "PutEventsPolicy",
            description=f"PutEvents on the Neural Memory bus, source {AGENT_EVENT_SOURCE} only",
            statements=[
                iam.PolicyStatement(
                    actions=["events:PutEvents"],
                    resources=[bus.event_bus_arn],
                    # Per entry: an entry of any other source is refused (NotAuthorizedForSourceException)
                    conditions={"StringEquals": {"events:source": AGENT_EVENT_SOURCE}},
                )
            ],
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.AccountRootPrincipal(),
            description=f"Agents putting {AGENT_EVENT_SOURCE} events (notes, conversation turns) on the bus",
            managed_policies=[self.policy],
        )
