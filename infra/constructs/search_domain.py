"""The OpenSearch domain: encrypted at rest and in transit, HTTPS with TLS 1.2+, reachable only by
the functions' roles (identity grants and a resource-based policy that denies everyone else),
logs published, sized by stage, named per stage."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchservice as opensearch
from constructs import Construct

from infra.constructs.domain_access import resource_policy

if TYPE_CHECKING:
    from infra.constructs.domain_access import Access


class SearchDomain(Construct):
    """``prod``: 3 data nodes over 3 AZs and 3 dedicated masters; ``dev``: one small node."""

    def __init__(self, scope: Construct, construct_id: str, *, name: str, prod: bool) -> None:
        super().__init__(scope, construct_id)
        app_logs = logs.LogGroup(
            self, "AppLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=RemovalPolicy.DESTROY
        )
        slow_logs = logs.LogGroup(
            self, "SlowLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=RemovalPolicy.DESTROY
        )
        # A native resource policy lets the domain write its logs (CDK's default is a custom
        # resource, i.e. one more Lambda function that nobody tests).
        logs.ResourcePolicy(
            self,
            "LogsPolicy",
            resource_policy_name=f"{name}-opensearch-logs",
            policy_statements=[
                iam.PolicyStatement(
                    principals=[iam.ServicePrincipal("es.amazonaws.com")],
                    actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                    resources=[app_logs.log_group_arn, slow_logs.log_group_arn],
                )
            ],
        )
        self.storage_gb = 100 if prod else 10  # per data node
        capacity = (
            opensearch.CapacityConfig(
                data_nodes=3,
                data_node_instance_type="r7g.large.search",
                master_nodes=3,
                master_node_instance_type="m7g.large.search",
                multi_az_with_standby_enabled=False,
            )
            if prod
            else opensearch.CapacityConfig(
                data_nodes=1, data_node_instance_type="t3.small.search", multi_az_with_standby_enabled=False
            )
        )
        self.domain = opensearch.Domain(
            self,
            "Domain",
            domain_name=name,
            version=opensearch.EngineVersion.OPENSEARCH_3_3,
            capacity=capacity,
            zone_awareness=opensearch.ZoneAwarenessConfig(enabled=True, availability_zone_count=3) if prod else None,
            ebs=opensearch.EbsOptions(volume_size=self.storage_gb, volume_type=ec2.EbsDeviceVolumeType.GP3),
            encryption_at_rest=opensearch.EncryptionAtRestOptions(enabled=True),
            node_to_node_encryption=True,
            enforce_https=True,
            tls_security_policy=opensearch.TLSSecurityPolicy.TLS_1_2,
            logging=opensearch.LoggingOptions(
                app_log_enabled=True,
                app_log_group=app_logs,
                slow_search_log_enabled=True,
                slow_search_log_group=slow_logs,
                slow_index_log_enabled=True,
                slow_index_log_group=slow_logs,
            ),
            suppress_logs_resource_policy=True,
            removal_policy=RemovalPolicy.RETAIN if prod else RemovalPolicy.DESTROY,
        )
        # Known before the domain exists, so the domain's own access policy can name it.
        self.arn = Stack.of(self).format_arn(service="es", resource="domain", resource_name=name)

    def restrict_to(self, index: str, roles: dict[str, Access], operator_role_arn: str | None) -> None:
        """Set the resource-based access policy: these roles, with these grants, and nobody else."""
        cfn = self.domain.node.default_child
        assert isinstance(cfn, opensearch.CfnDomain)
        extra = [operator_role_arn] if operator_role_arn else []
        cfn.access_policies = resource_policy(self.arn, index, roles, extra)
