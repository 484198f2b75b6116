"""Reading a synthesized template: our functions by name, their roles, policies and environment."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aws_cdk.assertions import Template

from infra.stacks.service_stack import NEEDS

FUNCTIONS = tuple(NEEDS)


def functions(template: Template) -> dict[str, dict[str, Any]]:
    """Our functions (handler ``app.lambda_handler``) by name, from their logical ids."""
    found = template.find_resources("AWS::Lambda::Function", {"Properties": {"Handler": "app.lambda_handler"}})
    named: dict[str, dict[str, Any]] = {}
    for logical_id, resource in found.items():
        name = next(n for n in FUNCTIONS if f"{n.title()}Function" in logical_id)
        named[name] = {"logical_id": logical_id, **resource}
    return named


def role_of(function: dict[str, Any]) -> str:
    """The logical id of a function's role."""
    role: str = function["Properties"]["Role"]["Fn::GetAtt"][0]
    return role


def statements_of_role(template: Template, role: str) -> list[dict[str, Any]]:
    """Every statement of the identity policies attached to ``role``."""
    policies = template.find_resources("AWS::IAM::Policy")
    return [
        statement
        for policy in policies.values()
        if {"Ref": role} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def as_list(value: Any) -> list[Any]:
    """A policy element that may be one value or a list."""
    return value if isinstance(value, list) else [value]


def text(value: Any) -> str:
    """A template value as text (references included), for matching resource names."""
    return json.dumps(value)
