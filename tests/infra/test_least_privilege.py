"""Each function may touch exactly what it uses: its secrets, its OpenSearch paths; the domain's
own access policy names the functions' roles and denies everyone else."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from tests.infra.template_reading import as_list, functions, role_of, statements_of_role, text

if TYPE_CHECKING:
    import pytest
    from aws_cdk.assertions import Template

READ_PATHS = {"_msearch", "_mget", "_search", "_count"}


def _secret_refs(template: Template) -> set[str]:
    return set(template.find_resources("AWS::SecretsManager::Secret"))


def test_every_function_reads_exactly_the_secrets_named_in_its_environment(dev: Template) -> None:
    secrets = _secret_refs(dev)
    for name, function in functions(dev).items():
        env = function["Properties"]["Environment"]["Variables"]
        named = {value["Ref"] for key, value in env.items() if key.endswith("_SECRET_ARN")}
        readable = {
            secret
            for statement in statements_of_role(dev, role_of(function))
            if "secretsmanager:GetSecretValue" in as_list(statement["Action"])
            for secret in secrets
            if secret in text(statement["Resource"])
        }
        assert named == readable, name
    uses = {
        name: {k for k in f["Properties"]["Environment"]["Variables"] if k.endswith("_SECRET_ARN")}
        for name, f in functions(dev).items()
    }
    assert uses["authorizer"] == set() and uses["ingest"] == {"NM_COHERE_SECRET_ARN"}
    # A reindex embeds what it cannot copy from the old index (a new model, text never embedded)
    assert uses["maintenance"] == {"NM_COHERE_SECRET_ARN"}
    # The LLM's keys (both providers: one stands in for the other) only where the LLM runs
    llm = {"NM_ANTHROPIC_SECRET_ARN", "NM_OPENAI_SECRET_ARN"}
    assert {name for name, names in uses.items() if names & llm} == {"search", "answer", "mcp"}
    assert all(llm <= uses[name] for name in ("search", "answer", "mcp"))
    # MCP's tools search, answer and remember: exactly the keys of the functions serving those routes
    assert uses["mcp"] == uses["search"] | uses["answer"] | uses["observations"]


def _opensearch_grants(template: Template, role: str) -> list[tuple[str, str]]:
    """(action, path under the domain) pairs the role's identity policy allows."""
    pairs = []
    for statement in statements_of_role(template, role):
        if statement.get("Effect", "Allow") != "Allow":
            continue
        actions = [a for a in as_list(statement["Action"]) if a.startswith("es:")]
        for resource in as_list(statement["Resource"]):
            path = text(resource).split(":domain/neural-memory-dev/", 1)[-1].split('"', 1)[0]
            pairs += [(action, path) for action in actions]
    return pairs


def test_opensearch_grants_are_least_privilege(dev: Template) -> None:
    grants = {name: _opensearch_grants(dev, role_of(f)) for name, f in functions(dev).items()}
    assert grants["authorizer"] == []
    for name in ("search", "answer"):  # read-only: searches and reads, on the workspace indices' read paths
        assert grants[name] and all(a in {"es:ESHttpGet", "es:ESHttpPost"} for a, _ in grants[name]), name
        assert {p for _, p in grants[name]} == {f"neural-memory-ws-*/{path}" for path in READ_PATHS}, name
    for name in ("observations", "ingest"):
        # also writes, and a workspace's index created from the template at its first write
        assert {p for _, p in grants[name] if p.startswith("neural-memory-ws-*/")} == {
            f"neural-memory-ws-*/{path}" for path in READ_PATHS | {"_bulk", "_delete_by_query"}
        }, name
        assert {("es:ESHttpHead", "neural-memory-ws-*"), ("es:ESHttpPut", "neural-memory-ws-*")} <= set(grants[name])
        assert ("es:ESHttpGet", "_index_template/neural-memory-ws") in grants[name]
        assert not [(a, p) for a, p in grants[name] if a == "es:ESHttpPut" and "_index_template" in p], name
    # MCP's tools read, write and delete as the observations function does: its grants, no more
    assert sorted(grants["mcp"]) == sorted(grants["observations"])
    assert ("es:ESHttpPut", "neural-memory") in grants["maintenance"]
    assert ("es:ESHttpPut", "_index_template/neural-memory-ws") in grants["maintenance"]
    everything = [pair for pairs in grants.values() for pair in pairs]
    assert not [a for a, _ in everything if a in {"es:ESHttpDelete", "es:ESHttpPatch", "es:ESHttp*"}]
    # never another index; at the domain's root only the maintenance's atomic alias swap, and the
    # workspace indices' template and aliases
    assert {(a, p) for a, p in everything if not p.startswith("neural-memory")} == {
        ("es:ESHttpPost", "_aliases"),
        ("es:ESHttpGet", "_index_template/neural-memory-ws"),
        ("es:ESHttpPut", "_index_template/neural-memory-ws"),
        ("es:ESHttpGet", "_alias/neural-memory-ws-*"),
        ("es:ESHttpHead", "_alias/neural-memory-ws-*"),
    }
    assert ("es:ESHttpPost", "_aliases") in grants["maintenance"]


def test_the_domain_access_policy_allows_only_the_functions_roles(dev: Template) -> None:
    domain = next(iter(dev.find_resources("AWS::OpenSearchService::Domain").values()))
    statements = domain["Properties"]["AccessPolicies"]["Statement"]
    roles = {name: role_of(f) for name, f in functions(dev).items() if name not in {"authorizer", "webhooks"}}
    allowed = [s for s in statements if s["Effect"] == "Allow"]
    assert {s["Principal"]["AWS"]["Fn::GetAtt"][0] for s in allowed} == set(roles.values())
    for name in ("search", "answer"):
        actions = {a for s in allowed if s["Principal"]["AWS"]["Fn::GetAtt"][0] == roles[name] for a in s["Action"]}
        assert actions == {"es:ESHttpGet", "es:ESHttpPost"}, name
    (deny,) = [s for s in statements if s["Effect"] == "Deny" and s["Principal"] == {"AWS": "*"}]
    assert deny["Action"] == "es:ESHttp*"
    # and the writers, by name, never PUT below a workspace index (an alias, settings, a mapping)
    named = [s for s in statements if s["Effect"] == "Deny" and s is not deny]
    assert all(
        s["Action"] == ["es:ESHttpPut"] and s["Resource"][0]["Fn::Join"][1][-1].endswith("/neural-memory-ws-*/*")
        for s in named
    )
    assert {s["Principal"]["AWS"]["Fn::GetAtt"][0] for s in named} >= {roles["observations"], roles["ingest"]}
    excepted = deny["Condition"]["ArnNotEquals"]["aws:PrincipalArn"]
    assert {e["Fn::GetAtt"][0] for e in excepted} == set(roles.values())


def test_an_operator_role_can_be_allowed_for_break_glass(tmp_path_factory: pytest.TempPathFactory) -> None:
    from aws_cdk.assertions import Template

    from infra.app import build_app

    layer = tmp_path_factory.mktemp("layer-operator")
    (layer / "python").mkdir()
    os.environ["CDK_OUTDIR"] = str(tmp_path_factory.mktemp("cdk-operator"))
    oncall = "arn:aws:iam::123456789012:role/oncall"
    app = build_app(stage="dev", layer_dir=str(layer), context={"operator_role_arn": oncall})
    template = Template.from_stack(app.node.find_child("NeuralMemory-dev"))  # type: ignore[arg-type]
    domain = next(iter(template.find_resources("AWS::OpenSearchService::Domain").values()))
    assert oncall in text(domain["Properties"]["AccessPolicies"])


def test_a_writer_cannot_put_an_alias_settings_or_a_mapping_on_a_workspace_index() -> None:
    """IAM's ``*`` matches ``/``: the writers' PUT of ``<prefix>-ws-*`` (creating a workspace's
    index) is denied below it, where it would move another workspace's alias onto this index."""
    from infra.constructs.domain_access import denials, grants
    from tests.deployed.cloud import allowed

    domain = "arn:aws:es:eu-west-1:123456789012:domain/d"
    statements = [
        {"Effect": effect, "Action": list(actions), "Resource": [f"{domain}/{p}" for p in paths]}
        for effect, rules in (("Allow", grants("nm", "write")), ("Deny", denials("nm", "write")))
        for actions, paths in rules
    ]
    index = "nm-ws-acme-0123456789abcdef-000001"
    assert allowed(statements, "es:ESHttpPut", f"{domain}/{index}") is True  # its first write creates it
    assert allowed(statements, "es:ESHttpPost", f"{domain}/{index}/_bulk") is True
    for below in ("_alias/nm-ws-rival-fedcba9876543210", "_settings", "_mapping", "_doc/x", "_bulk"):
        assert allowed(statements, "es:ESHttpPut", f"{domain}/{index}/{below}") is False, below
    assert denials("nm", "read") == denials("nm", "admin") == []


def _keys_table_statements(template: Template, role: str) -> list[dict[str, Any]]:
    (table,) = template.find_resources("AWS::DynamoDB::Table")
    return [
        s
        for s in statements_of_role(template, role)
        if table in text(s["Resource"]) and any(a.startswith("dynamodb:") for a in as_list(s["Action"]))
    ]


def test_only_the_authorizer_reads_keys_and_it_may_update_only_a_key_s_last_use(dev: Template) -> None:
    # Given the keys table (each key's name and role, which the authorizer passes to the handlers)
    touched = {name: _keys_table_statements(dev, role_of(f)) for name, f in functions(dev).items()}
    # Then no function but the authorizer touches it
    assert {name for name, statements in touched.items() if statements} == {"authorizer"}
    actions = {a for s in touched["authorizer"] for a in as_list(s["Action"])}
    # And the authorizer reads, and writes nothing but UpdateItem of the key's last use
    assert not actions & {"dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:*"}
    (update,) = [s for s in touched["authorizer"] if "dynamodb:UpdateItem" in as_list(s["Action"])]
    assert as_list(update["Action"]) == ["dynamodb:UpdateItem"]
    assert update["Condition"]["ForAllValues:StringEquals"]["dynamodb:Attributes"] == ["key_id", "last_used_at"]


def test_the_audit_trail_is_under_the_workspace_indices_grants() -> None:
    # Given a workspace's audit index, which the observations, MCP and maintenance functions write
    from neural_memory.audit.opensearch import audit_index

    name = audit_index("neural-memory", "Acme Corp")
    # Then its name is within the workspace indices' pattern (the grants above), never a version or an alias
    assert name.startswith("neural-memory-ws-") and name.endswith("-audit")
    assert not name.rsplit("-", 1)[-1].isdigit()
