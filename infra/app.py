"""CDK entry point: ``python -m infra.app`` (``make synth``). Context: ``stage`` (dev | prod),
``layer_dir`` (defaults to ``.build/layers/core``, made by ``make build``), and optionally
``operator_role_arn`` (a role the OpenSearch domain also admits, for break-glass access)."""

from __future__ import annotations

import os

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.constants import STACK_NAME
from infra.nag import suppress_reviewed_findings
from infra.stacks.service_stack import ServiceStack


def build_app(
    stage: str = "dev", layer_dir: str = ".build/layers/core", context: dict[str, str] | None = None
) -> cdk.App:
    """The app with the stack and cdk-nag's AwsSolutions checks (reviewed findings suppressed with
    reasons); ``context`` adds CDK context values (e.g. ``operator_role_arn``)."""
    app = cdk.App(
        context={"stage": stage, "layer_dir": layer_dir, **(context or {})},
        outdir=os.environ.get("CDK_OUTDIR", "cdk.out"),
    )
    stage = str(app.node.try_get_context("stage") or stage)
    stack = ServiceStack(
        app,
        f"{STACK_NAME}-{stage}",
        stage=stage,
        layer_dir=str(app.node.try_get_context("layer_dir") or layer_dir),
    )
    suppress_reviewed_findings(stack, prod=stage == "prod")
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


if __name__ == "__main__":
    build_app().synth()
