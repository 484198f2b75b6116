"""The maintenance function's triggers: the index bootstrap at every deploy (a custom resource
backed directly by the function, which answers CloudFormation itself; it reindexes when the model
or mapping changed), the daily purge, and a schedule that resumes a reindex the deploy's
invocation could not finish (a no-op otherwise: a few small reads of the index's alias and mapping)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import CustomResource, Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct
from neural_memory.stores.opensearch.workspace_indices import LAYOUT
from neural_memory.use_cases.schedules import RESUME_EVENT

from infra.constants import SERVICE_NAME

if TYPE_CHECKING:
    from collections.abc import Iterable

REINDEX_RESUME_MINUTES = 15


class Maintenance(Construct):
    """``IndexBootstrap`` re-runs when the schema, the model, the index's field mapping (a field
    added in place: ``mapping``, its fingerprint), the layout of indices (``LAYOUT``: the single
    index migrated into an index per workspace) or the replica count changes (its properties).
    ``bootstrap`` is what the functions writing the index depend on (``depend_on_bootstrap``)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        function: lambda_.Function,
        index_version: str,
        mapping: str,
        replicas: int,
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = function
        self.bootstrap = CustomResource(
            self,
            "IndexBootstrap",
            service_token=function.function_arn,
            resource_type="Custom::NeuralMemoryIndex",
            properties={
                "IndexVersion": index_version,
                "Mapping": mapping,
                "Layout": LAYOUT,
                "Replicas": str(replicas),
                "Service": SERVICE_NAME,
            },
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

    def depend_on_bootstrap(self, functions: Iterable[lambda_.Function]) -> None:
        """Deploy these functions (their new code) only after the bootstrap ran: a field they write
        is then in the live index's mapping, which is strict and would refuse it (each write to
        the DLQ) until the bootstrap adds it."""
        for function in functions:
            # The function resource only: its role (a child) is what the domain's access policy
            # names, and the bootstrap needs the domain, so the role must come first.
            resource = function.node.default_child
            if resource is None:  # an L2 function always has its CfnFunction
                raise ValueError(f"{function.node.path} has no function resource to order")
            resource.node.add_dependency(self.bootstrap)
