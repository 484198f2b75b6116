"""One factory sets what every function shares: Python 3.13 on arm64, the core layer, JSON logs
with retention, X-Ray tracing, the Powertools environment and the stage."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs

from infra.constants import LAMBDA_TIMEOUT_S, METRICS_NAMESPACE, SERVICE_NAME

if TYPE_CHECKING:
    from constructs import Construct

FUNCTIONS_DIR = Path(__file__).resolve().parents[2] / "functions"


class LambdaFactory:
    """Builds functions from ``functions/<name>/app.py`` with the shared settings."""

    def __init__(self, layer: lambda_.ILayerVersion, stage: str) -> None:
        self._layer = layer
        self._stage = stage

    def function(
        self,
        scope: Construct,
        name: str,
        *,
        memory_mb: int = 1024,
        timeout_s: int = LAMBDA_TIMEOUT_S,
        environment: dict[str, str] | None = None,
        reserved_concurrency: int | None = None,
    ) -> lambda_.Function:
        """A function whose asset is its own folder and whose handler is ``app.lambda_handler``;
        ``environment`` is what this function needs beyond the shared variables."""
        log_group = logs.LogGroup(
            scope, f"{name.title()}Logs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=RemovalPolicy.DESTROY
        )
        return lambda_.Function(
            scope,
            f"{name.title()}Function",
            runtime=lambda_.Runtime.PYTHON_3_13,
            architecture=lambda_.Architecture.ARM_64,
            code=lambda_.Code.from_asset(str(FUNCTIONS_DIR / name)),
            handler="app.lambda_handler",
            layers=[self._layer],
            memory_size=memory_mb,
            timeout=Duration.seconds(timeout_s),
            reserved_concurrent_executions=reserved_concurrency,
            tracing=lambda_.Tracing.ACTIVE,
            logging_format=lambda_.LoggingFormat.JSON,
            log_group=log_group,
            environment={
                "POWERTOOLS_SERVICE_NAME": SERVICE_NAME,
                "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
                "POWERTOOLS_LOG_LEVEL": "INFO",
                "NM_STAGE": self._stage,
                **(environment or {}),
            },
        )
