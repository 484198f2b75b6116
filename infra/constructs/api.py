"""The REST API: a Lambda authorizer (API key → workspace; keys hashed in DynamoDB), throttling,
JSON access logs, request validation, and the search and observations functions behind it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

if TYPE_CHECKING:
    from infra.constructs.lambda_factory import LambdaFactory

THROTTLE_RATE = 100
THROTTLE_BURST = 200


class Api(Construct):
    """``/v1/search``, ``/v1/answer`` and ``/v1/observations[/{id}]``, every method behind the authorizer."""

    def __init__(self, scope: Construct, construct_id: str, *, factory: LambdaFactory, prod: bool) -> None:
        super().__init__(scope, construct_id)
        self.keys = dynamodb.Table(
            self,
            "ApiKeys",
            partition_key=dynamodb.Attribute(name="key_id", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            removal_policy=RemovalPolicy.RETAIN if prod else RemovalPolicy.DESTROY,
        )
        self.authorizer_function = factory.function(
            self, "authorizer", memory_mb=256, environment={"NM_KEYS_TABLE": self.keys.table_name}
        )
        self.keys.grant_read_data(self.authorizer_function)
        self.search_function = factory.function(self, "search")
        self.answer_function = factory.function(self, "answer", timeout_s=30)
        self.observations_function = factory.function(self, "observations")

        access_logs = logs.LogGroup(
            self, "AccessLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=RemovalPolicy.DESTROY
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name="neural-memory",
            cloud_watch_role=True,
            deploy_options=apigw.StageOptions(
                stage_name="v1",
                throttling_rate_limit=THROTTLE_RATE,
                throttling_burst_limit=THROTTLE_BURST,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=False,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),  # fmt: skip
                logging_level=apigw.MethodLoggingLevel.ERROR,
                tracing_enabled=True,
                metrics_enabled=True,
            ),
        )
        authorizer = apigw.RequestAuthorizer(
            self,
            "KeyAuthorizer",
            handler=self.authorizer_function,
            identity_sources=[],
            results_cache_ttl=Duration.seconds(0),
        )
        validator = self.rest_api.add_request_validator(
            "BodyValidator", validate_request_body=True, validate_request_parameters=True
        )
        json_body = self.rest_api.add_model(
            "JsonObject",
            content_type="application/json",
            schema=apigw.JsonSchema(schema=apigw.JsonSchemaVersion.DRAFT4, type=apigw.JsonSchemaType.OBJECT),
        )
        options: dict[str, object] = {
            "authorizer": authorizer,
            "authorization_type": apigw.AuthorizationType.CUSTOM,
        }
        v1 = self.rest_api.root.add_resource("v1")
        self._method(v1.add_resource("search"), "POST", self.search_function, options, validator, json_body)
        self._method(v1.add_resource("answer"), "POST", self.answer_function, options, validator, json_body)
        observations = v1.add_resource("observations")
        self._method(observations, "POST", self.observations_function, options, validator, json_body)
        one = observations.add_resource("{id}")
        for verb in ("GET", "DELETE"):
            self._method(one, verb, self.observations_function, options, validator, None)

    @staticmethod
    def _method(
        resource: apigw.Resource,
        verb: str,
        function: lambda_.IFunction,
        options: dict[str, object],
        validator: apigw.RequestValidator,
        body_model: apigw.Model | None,
    ) -> None:
        resource.add_method(
            verb,
            apigw.LambdaIntegration(function),
            request_validator=validator,
            request_models={"application/json": body_model} if body_model else None,
            **options,  # type: ignore[arg-type]
        )
