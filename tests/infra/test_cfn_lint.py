"""cfn-lint finds no error in either stage's template, nor in one granting agents of several workspaces
(warnings are listed, not failed)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import cfnlint.api

if TYPE_CHECKING:
    from aws_cdk.assertions import Template


def _errors(template: Template) -> list[str]:
    matches = cfnlint.api.lint_all(json.dumps(template.to_json()))
    return [str(m) for m in matches if m.rule.id.startswith("E")]


def test_dev_template_has_no_cfn_lint_error(dev: Template) -> None:
    assert _errors(dev) == []


def test_prod_template_has_no_cfn_lint_error(prod: Template) -> None:
    assert _errors(prod) == []


def test_a_template_with_agent_grants_has_no_cfn_lint_error(agents: Template) -> None:
    # Per-workspace outputs: their ids and export names are built from workspace names
    assert _errors(agents) == []
