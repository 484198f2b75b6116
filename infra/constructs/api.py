"""The REST API, generated from the one route table (``neural_memory.api.routes``): a Lambda
authorizer (API key → workspace; keys hashed in DynamoDB), one function per route function,
throttling, JSON access logs, request validation, and API Gateway's own errors in our envelope."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from aws_cdk import Acknowledgment, Duration, RemovalPolicy, Validations
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from constructs import Construct
from neural_memory.api.routes import ROUTES, route_functions
from neural_memory.auth.keys import API_KEY_HEADER, KEY_TOUCHED_ATTRIBUTES, NO_KEY

from infra.constants import AUTHORIZER_CACHE_TTL_S

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_cdk import aws_lambda as lambda_

THROTTLE_RATE = 100
THROTTLE_BURST = 200
THROTTLED_RETRY_AFTER_S = 1  # the stage's token bucket refills THROTTLE_RATE requests a second
MESSAGE_STRING = "$context.error.messageString"
# The message of the authorizer's Deny (functions/authorizer): a header not reading "Bearer <key>",
# or a key that is not valid, in the same words as the local server.
DENIAL_MESSAGE = "$context.authorizer.message"
# API Gateway's own errors (refused key, throttling, timeouts, ...) in the API's envelope, each
# with its construct id. The ids stay as first deployed: a new id replaces the resource, and
# CloudFormation deleting the old one after creating the new resets that type to AWS's default.
GATEWAY_ERRORS = {
    # No Authorization header: API Gateway refuses it without calling the authorizer.
    apigw.ResponseType.UNAUTHORIZED: ("Unauthorized401", "401", "unauthorized", NO_KEY),
    # The authorizer's Deny, a 401 too: its policy allows every route when it allows, so a denial
    # is always about the key, never about the route.
    apigw.ResponseType.ACCESS_DENIED: ("Forbidden403", "401", "unauthorized", DENIAL_MESSAGE),
    apigw.ResponseType.THROTTLED: ("Throttled429", "429", "throttled", "too many requests; retry later"),
    apigw.ResponseType.INTEGRATION_TIMEOUT: ("Timeout504", "504", "timeout", "the request took too long"),
    apigw.ResponseType.DEFAULT_4_XX: ("BadRequest", None, "bad_request", MESSAGE_STRING),
    apigw.ResponseType.DEFAULT_5_XX: ("InternalError", None, "internal_error", MESSAGE_STRING),
}


_OPEN_ROUTE_REASONS = {
    "signature": "Webhook deliveries are authenticated by their HMAC signature in the function.",
    "none": "The console is a static page with no data; each API call it makes carries the API key.",
}


def _envelope(code: str, message: str) -> str:
    body = {"error": {"code": code, "message": message, "details": []}, "requestId": "$context.requestId"}
    # API Gateway's own message, already a quoted and escaped JSON string: inserted as is.
    return json.dumps(body).replace(f'"{MESSAGE_STRING}"', MESSAGE_STRING)


class Api(Construct):
    """Every route of ``ROUTES``; ``functions`` maps a route function's name to its Lambda."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        name: str,
        make_function: Callable[[Construct, str, dict[str, str]], lambda_.Function],
        prod: bool,
    ) -> None:
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
        self.authorizer_function = make_function(
            self, "authorizer", {"NM_KEY_STORE": "dynamodb", "NM_KEYS_TABLE": self.keys.table_name}
        )
        self.keys.grant_read_data(self.authorizer_function)
        # A key's last use (``keys list``): the authorizer may update that one attribute, nothing
        # else (no PutItem, no DeleteItem; a name, role or revocation stays the operator's).
        self.authorizer_function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["dynamodb:UpdateItem"],
                resources=[self.keys.table_arn],
                conditions={
                    "ForAllValues:StringEquals": {"dynamodb:Attributes": list(KEY_TOUCHED_ATTRIBUTES)},
                    "StringEqualsIfExists": {"dynamodb:ReturnValues": ["NONE"]},
                },
            )
        )
        self.functions = {function: make_function(self, function, {}) for function in route_functions()}

        access_logs = logs.LogGroup(
            self, "AccessLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=RemovalPolicy.DESTROY
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=name,
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
                ),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                tracing_enabled=True,
                metrics_enabled=True,
            ),
        )
        for response_type, (response_id, status, code, message) in GATEWAY_ERRORS.items():
            self.rest_api.add_gateway_response(
                response_id,
                type=response_type,
                status_code=status,
                # A throttled client is told when to come back (the client retries only on that)
                response_headers={"Retry-After": f"'{THROTTLED_RETRY_AFTER_S}'"} if code == "throttled" else None,
                templates={"application/json": _envelope(code, message)},
            )
        authorizer = apigw.RequestAuthorizer(
            self,
            "KeyAuthorizer",
            handler=self.authorizer_function,
            # API Gateway caches the decision per key for the TTL and answers 401 itself, without
            # invoking the authorizer, when the header is absent. The policy allows every route,
            # since the cached one is reused for all of them.
            identity_sources=[apigw.IdentitySource.header(API_KEY_HEADER)],
            results_cache_ttl=Duration.seconds(AUTHORIZER_CACHE_TTL_S),
        )
        validator = self.rest_api.add_request_validator(
            "BodyValidator", validate_request_body=True, validate_request_parameters=True
        )
        json_body = self.rest_api.add_model(
            "JsonObject",
            content_type="application/json",
            schema=apigw.JsonSchema(schema=apigw.JsonSchemaVersion.DRAFT4, type=apigw.JsonSchemaType.OBJECT),
        )
        for route in ROUTES:
            resource = self.rest_api.root.resource_for_path(route.path)
            secured = route.authorization == "api_key"
            method = resource.add_method(
                route.method,
                apigw.LambdaIntegration(self.functions[route.function]),
                request_validator=validator,
                request_models={"application/json": json_body} if route.has_body else None,
                authorizer=authorizer if secured else None,
                authorization_type=apigw.AuthorizationType.CUSTOM if secured else apigw.AuthorizationType.NONE,
            )
            if not secured:
                # Scoped to this method: the provider's HMAC signature, checked by the function, is
                # a webhook's authentication (a webhook sender cannot present an API key); the
                # console is a static page holding no data, and every call it makes carries the key.
                Validations.of(method).acknowledge(
                    Acknowledgment(id="AwsSolutions-APIG4", reason=_OPEN_ROUTE_REASONS[route.authorization])
                )
