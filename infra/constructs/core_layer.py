"""The shared layer: the locked runtime dependencies (``requirements/layer.txt``) and
``neural_memory``, built by ``make build`` (``infra/layer_build.py``) from wheels for the Lambda
platform (no Docker), used as a plain asset."""

from __future__ import annotations

from aws_cdk import aws_lambda as lambda_
from constructs import Construct


class CoreLayer(Construct):
    """``layer_dir`` holds ``python/`` (``.build/layers/core`` after ``make build``)."""

    def __init__(self, scope: Construct, construct_id: str, layer_dir: str) -> None:
        super().__init__(scope, construct_id)
        self.layer = lambda_.LayerVersion(
            self,
            "Layer",
            code=lambda_.Code.from_asset(layer_dir),
            compatible_runtimes=[lambda_.Runtime.PYTHON_3_13],
            compatible_architectures=[lambda_.Architecture.ARM_64],
            description="neural_memory and its runtime dependencies",
        )
