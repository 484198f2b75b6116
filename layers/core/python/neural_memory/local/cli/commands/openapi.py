"""``neural-memory openapi``: the merged OpenAPI document on stdout."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands


def cmd_openapi(args: argparse.Namespace) -> int:
    """Print the merged OpenAPI document."""
    from neural_memory.local.serving.gateway import openapi_document

    print(json.dumps(openapi_document(), indent=2, sort_keys=True))
    return 0


def register(commands: Commands) -> None:
    """``openapi``: no flags."""
    openapi = commands.add_parser("openapi", help="print the OpenAPI document")
    openapi.set_defaults(func=cmd_openapi)
