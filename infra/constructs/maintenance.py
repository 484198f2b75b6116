"""The maintenance function's triggers: the index bootstrap at every deploy (a custom resource
backed directly by the function, which answers CloudFormation itself; it reindexes when the model
or mapping changed), the daily purge, and a schedule that resumes a reindex the deploy's
invocation could not finish (a no-op otherwise: a few small reads of the index's alias and mapping)."""

from __future__ import annotations

from aws_cdk import CustomResource, Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct
from neural_memory.stores.opensearch.reindex import RESUME_EVENT

from infra.constants import SERVICE_NAME

REINDEX_RESUME_MINUTES = 15


class Maintenance(Construct):
    """``IndexBootstrap`` re-runs when the schema, the model or the replica count changes (its
    properties)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, function: lambda_.Function, index_version: str, replicas: int
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = function
        CustomResource(
            self,
            "IndexBootstrap",
            service_token=function.function_arn,
            resource_type="Custom::NeuralMemoryIndex",
            properties={"IndexVersion": index_version, "Replicas": str(replicas), "Service": SERVICE_NAME},
        )
        events.Rule(
            self,
            "DailyPurge",
            schedule=events.Schedule.rate(Duration.days(1)),
            targets=[targets.LambdaFunction(function)],
        )
        events.Rule(
            self,
            "ReindexResume",
            schedule=events.Schedule.rate(Duration.minutes(REINDEX_RESUME_MINUTES)),
            targets=[targets.LambdaFunction(function, event=events.RuleTargetInput.from_object(RESUME_EVENT))],
        )
