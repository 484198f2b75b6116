"""The OpenSearch domain: encrypted at rest and in transit, HTTPS with TLS 1.2+, IAM-only access
(the functions' roles are granted explicitly), logs published, sized by stage."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchservice as opensearch
from constructs import Construct


class SearchDomain(Construct):
    """``prod``: 3 data nodes over 3 AZs and 3 dedicated masters; ``dev``: one small node."""

    def __init__(self, scope: Construct, construct_id: str, *, prod: bool) -> None:
        super().__init__(scope, construct_id)
        app_logs = logs.LogGroup(
            self, "AppLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=RemovalPolicy.DESTROY
        )
        slow_logs = logs.LogGroup(
            self, "SlowLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=RemovalPolicy.DESTROY
        )
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
            version=opensearch.EngineVersion.OPENSEARCH_3_3,
            capacity=capacity,
            zone_awareness=opensearch.ZoneAwarenessConfig(enabled=True, availability_zone_count=3) if prod else None,
            ebs=opensearch.EbsOptions(volume_size=100 if prod else 10, volume_type=ec2.EbsDeviceVolumeType.GP3),
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
            removal_policy=RemovalPolicy.RETAIN if prod else RemovalPolicy.DESTROY,
        )
