"""CDK entry point: ``python -m infra.app`` (``make synth``). Context: ``stage`` (dev | prod),
``layer_dir`` (defaults to ``.build/layers/core``, made by ``make build``), and optionally
``operator_role_arn`` (a role the OpenSearch domain also admits, for break-glass access),
``alarm_email``, ``ingest_concurrency=unreserved``, and ``ingest_routes`` (a JSON object; by
default the routing table ``ingest-routes.json`` that ``neural-memory routes`` manages)."""

from __future__ import annotations

import os

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks
from neural_memory.ingest.routing import ROUTES_FILE, load_routes, parse_routes

from infra.constants import INDEX_NAME, STACK_NAME, physical_name
from infra.nag import suppress_reviewed_findings
from infra.stacks.service_stack import ServiceStack


def _routes(context: object) -> dict[str, str]:
    """The routing table: the ``ingest_routes`` context (JSON, or an object when given in code),
    else ``ingest-routes.json``; every route checked, so a typo fails the synth, not an event."""
    return load_routes(ROUTES_FILE) if context is None else parse_routes(context, "the ingest_routes context")


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
    routes = app.node.try_get_context("ingest_routes")
    stack = ServiceStack(
        app,
        f"{STACK_NAME}-{stage}",
        stage=stage,
        layer_dir=str(app.node.try_get_context("layer_dir") or layer_dir),
        ingest_routes=_routes(routes),
    )
    suppress_reviewed_findings(stack, prod=stage == "prod", domain_name=physical_name(stage), index=INDEX_NAME)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


if __name__ == "__main__":
    build_app().synth()
