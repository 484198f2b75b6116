"""The maintenance function: creates or verifies the index at every deploy (custom resource) and
purges expired observations daily (scheduled rule)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import CustomResource, Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import custom_resources as cr
from constructs import Construct

from infra.constants import SERVICE_NAME

if TYPE_CHECKING:
    from infra.constructs.lambda_factory import LambdaFactory


class Maintenance(Construct):
    """``IndexBootstrap`` re-runs when the schema or model changes (its properties)."""

    def __init__(self, scope: Construct, construct_id: str, *, factory: LambdaFactory, index_version: str) -> None:
        super().__init__(scope, construct_id)
        self.function = factory.function(self, "maintenance", timeout_s=300)
        provider = cr.Provider(self, "Provider", on_event_handler=self.function)
        CustomResource(
            self,
            "IndexBootstrap",
            service_token=provider.service_token,
            resource_type="Custom::NeuralMemoryIndex",
            properties={"IndexVersion": index_version, "Service": SERVICE_NAME},
        )
        events.Rule(
            self,
            "DailyPurge",
            schedule=events.Schedule.rate(Duration.days(1)),
            targets=[targets.LambdaFunction(self.function)],
        )
