"""cdk-nag (AwsSolutions) findings we reviewed and accept, each with its reason. Everything else
must pass: a synth with an unacknowledged finding fails."""

from __future__ import annotations

from aws_cdk import Acknowledgment, Stack, Validations

from infra.constructs.domain_access import grants

_ALWAYS = {
    "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]": (
        "The AWS-managed minimum for a function to write its logs."
    ),
    "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
    "AmazonAPIGatewayPushToCloudWatchLogs]": "The AWS-managed minimum for API Gateway to write access logs.",
    "AwsSolutions-IAM5[Resource::*]": "X-Ray PutTraceSegments/PutTelemetryRecords accept no resource scope.",
    "AwsSolutions-L1": "Pinned to Python 3.13: the layer's wheels are built for cp313 arm64.",
    "AwsSolutions-COG4": "Callers are services and agents with API keys, checked by the Lambda authorizer "
    "(hashed keys in DynamoDB), not Cognito users.",
    "AwsSolutions-SMG4": "Third-party API keys (Cohere, Anthropic, OpenAI) cannot be rotated by a Lambda; they are "
    "rotated by replacing the secret value.",
    "AwsSolutions-OS1": "Functions run outside a VPC (they call Cohere, Anthropic and OpenAI); every request to the "
    "domain is SigV4-signed, and the domain's access policy allows only the functions' roles (each for its "
    "own index paths) and denies every other principal.",
    "AwsSolutions-OS3": "Access is by IAM identity (the functions' roles, named in the domain's access policy), "
    "not by source IP.",
    "AwsSolutions-OS5": "The access policy allows no anonymous access: only the functions' roles are allowed, "
    "and every other principal is explicitly denied.",
    "AwsSolutions-APIG3": "Abuse is bounded by API keys and stage throttling; a WAF can be attached per "
    "deployment when the API is public.",
}
_DEV_ONLY = {
    "AwsSolutions-OS4": "dev runs one small data node; prod has three dedicated masters.",
    "AwsSolutions-OS7": "dev runs one node in one AZ; prod spreads three nodes over three AZs.",
}


def _versioned_index_paths(domain_name: str, index: str) -> dict[str, str]:
    """The grants on ``<index>-*``: the versioned physical indices behind the alias, whose numbers
    a reindex chooses at run time, and the index of each workspace, named at its first write."""
    domain = f"arn:<AWS::Partition>:es:<AWS::Region>:<AWS::AccountId>:domain/{domain_name}"
    reason = (
        f"The index's versioned physical indices ({index}-000001, -000002, ...) behind its alias, and "
        f"one index per workspace ({index}-ws-<workspace>-<digest>, its own BM25 statistics): a reindex "
        "creates the next version, a workspace's first write its index, at run time."
    )
    return {
        f"AwsSolutions-IAM5[Resource::{domain}/{path}]": reason
        for access in ("read", "write", "admin")
        for _, paths in grants(index, access)
        for path in paths
        if "*" in path
    }


def suppress_reviewed_findings(stack: Stack, *, prod: bool, domain_name: str, index: str) -> None:
    """Acknowledge the reviewed findings on ``stack``."""
    reasons = dict(_ALWAYS) if prod else {**_ALWAYS, **_DEV_ONLY}
    reasons |= _versioned_index_paths(domain_name, index)
    for rule, reason in reasons.items():
        Validations.of(stack).acknowledge(Acknowledgment(id=rule, reason=reason))
