"""The stack's properties, asserted on the synthesised template (cdk-nag runs at synth)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from aws_cdk.assertions import Match
from neural_memory.stores.opensearch import mapping
from neural_memory.stores.opensearch.mapping import SCHEMA_VERSION, fingerprint
from neural_memory.stores.opensearch.workspace_indices import LAYOUT
from neural_memory.stores.record_fields import RECORD_FIELDS
from neural_memory.use_cases.schedules import RESUME_EVENT

from infra.constants import MAINTENANCE_TIMEOUT_S
from infra.stacks.service_stack import AFTER_BOOTSTRAP, WRITERS
from tests.infra.template_reading import functions, role_of, statements_of_role

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_cdk.assertions import Template

FUNCTIONS = {"search", "answer", "observations", "ingest", "authorizer", "maintenance", "webhooks", "mcp"}


def _ours(template: Template) -> dict[str, dict]:  # type: ignore[type-arg]
    functions = template.find_resources("AWS::Lambda::Function", {"Properties": {"Handler": "app.lambda_handler"}})
    return {k: v["Properties"] for k, v in functions.items()}


def test_every_function_shares_runtime_architecture_layer_logs_tracing_and_powertools_env(dev: Template) -> None:
    # Given the dev stack, When its functions are read
    functions = _ours(dev)
    # Then the six functions share what the factory sets
    assert len(functions) == len(FUNCTIONS)
    for props in functions.values():
        assert props["Runtime"] == "python3.13" and props["Architectures"] == ["arm64"]
        assert props["TracingConfig"] == {"Mode": "Active"}
        assert props["LoggingConfig"]["LogFormat"] == "JSON"
        assert len(props["Layers"]) == 1
        env = props["Environment"]["Variables"]
        assert (
            env["POWERTOOLS_SERVICE_NAME"] == "neural-memory" and env["POWERTOOLS_METRICS_NAMESPACE"] == "NeuralMemory"
        )
        assert env["NM_STAGE"] == "dev"
    dev.has_resource_properties("AWS::Logs::LogGroup", {"RetentionInDays": 30})
    dev.has_resource_properties(
        "AWS::Lambda::LayerVersion", {"CompatibleRuntimes": ["python3.13"], "CompatibleArchitectures": ["arm64"]}
    )


def test_opensearch_domain_is_encrypted_https_only_and_logged(dev: Template) -> None:
    dev.has_resource_properties(
        "AWS::OpenSearchService::Domain",
        {
            "EngineVersion": Match.string_like_regexp("^OpenSearch_[23]\\."),
            "EncryptionAtRestOptions": {"Enabled": True},
            "NodeToNodeEncryptionOptions": {"Enabled": True},
            "DomainEndpointOptions": {"EnforceHTTPS": True, "TLSSecurityPolicy": "Policy-Min-TLS-1-2-2019-07"},
            "LogPublishingOptions": Match.object_like(
                {"ES_APPLICATION_LOGS": Match.any_value(), "SEARCH_SLOW_LOGS": Match.any_value()}
            ),
            "ClusterConfig": Match.object_like({"InstanceCount": 1, "DedicatedMasterEnabled": False}),
        },
    )


def test_prod_domain_is_multi_az_with_dedicated_masters(prod: Template) -> None:
    prod.has_resource_properties(
        "AWS::OpenSearchService::Domain",
        {
            "ClusterConfig": Match.object_like(
                {
                    "InstanceCount": 3,
                    "DedicatedMasterEnabled": True,
                    "DedicatedMasterCount": 3,
                    "ZoneAwarenessEnabled": True,
                    "ZoneAwarenessConfig": {"AvailabilityZoneCount": 3},
                }
            )
        },
    )


def test_only_the_functions_roles_may_call_the_domain(dev: Template) -> None:
    # Then function policies grant es:ESHttp* on the domain (the access policy: test_least_privilege.py)
    policies = dev.find_resources("AWS::IAM::Policy")
    granted = [p for p in policies.values() if "es:ESHttp" in str(p["Properties"]["PolicyDocument"])]
    assert len(granted) == 6  # search, answer, observations, ingest, maintenance, mcp — not the authorizer


def test_api_has_authorizer_throttling_access_logs_and_validation(dev: Template) -> None:
    dev.has_resource_properties(
        "AWS::ApiGateway::Authorizer",
        {
            "Type": "REQUEST",
            "AuthorizerResultTtlInSeconds": 300,
            "IdentitySource": "method.request.header.Authorization",
        },
    )
    methods = dev.find_resources("AWS::ApiGateway::Method", {"Properties": {"HttpMethod": Match.any_value()}})
    routed = [m["Properties"] for m in methods.values() if m["Properties"]["HttpMethod"] != "OPTIONS"]
    # 8 GET: lineage, experts, audit, mcp (405); 8 POST: experts, promote, mcp; 2 DELETE: an observation, mcp (405)
    assert sorted(m["HttpMethod"] for m in routed) == ["DELETE"] * 2 + ["GET"] * 8 + ["POST"] * 8
    assert all("RequestValidatorId" in m for m in routed)
    # Every route needs a key except the webhook receivers, which the provider's signature
    # authenticates, and the console's two static routes (a page holding no data)
    open_methods = [m for m in routed if m["AuthorizationType"] != "CUSTOM"]
    assert len(open_methods) == 4 and all(m["AuthorizationType"] == "NONE" for m in open_methods)
    dev.has_resource_properties(
        "AWS::ApiGateway::Stage",
        {
            "StageName": "v1",
            "TracingEnabled": True,
            "AccessLogSetting": Match.object_like({"DestinationArn": Match.any_value()}),
            "MethodSettings": Match.array_with(
                [Match.object_like({"ThrottlingRateLimit": 100, "ThrottlingBurstLimit": 200})]
            ),
        },
    )
    dev.has_resource_properties("AWS::ApiGateway::RequestValidator", {"ValidateRequestBody": True})
    dev.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "KeySchema": [{"AttributeName": "key_id", "KeyType": "HASH"}],
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        },
    )


def test_ingestion_rules_queue_dlq_and_partial_batch_failures(dev: Template) -> None:
    for source in ("github", "vercel"):
        dev.has_resource_properties("AWS::Events::Rule", {"EventPattern": {"source": [source]}})
    dev.has_resource_properties(
        "AWS::SQS::Queue",
        {"VisibilityTimeout": 360, "RedrivePolicy": Match.object_like({"maxReceiveCount": 5})},
    )
    ingest = next(p for p in _ours(dev).values() if p["Timeout"] == 60)
    assert 6 * ingest["Timeout"] <= 360
    dev.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "BatchSize": 10,
            "ScalingConfig": {"MaximumConcurrency": 2},
        },
    )
    # A burst waits in the queue: the ingest function never runs more than its event source allows
    assert ingest["ReservedConcurrentExecutions"] == 2
    reserved = [p for p in _ours(dev).values() if "ReservedConcurrentExecutions" in p]
    assert reserved == [ingest]


def test_ingest_concurrency_can_be_left_unreserved_for_a_new_accounts_quota(
    synth: Callable[[str, dict[str, str]], Template],
) -> None:
    template = synth("dev", {"ingest_concurrency": "unreserved"})
    assert not [p for p in _ours(template).values() if "ReservedConcurrentExecutions" in p]
    template.has_resource_properties("AWS::Lambda::EventSourceMapping", {"ScalingConfig": {"MaximumConcurrency": 2}})


def test_maintenance_bootstraps_the_index_purges_daily_and_resumes_a_reindex(dev: Template, prod: Template) -> None:
    for template, replicas in ((dev, "0"), (prod, "2")):
        template.has_resource_properties(
            "Custom::NeuralMemoryIndex",
            {
                "IndexVersion": f"{SCHEMA_VERSION}:embed-english-v3.0:1024",
                "Mapping": fingerprint(),
                "Replicas": replicas,
            },
        )
        (maintenance,) = [f for f in _ours(template).values() if f["Timeout"] == MAINTENANCE_TIMEOUT_S]
        assert maintenance["Environment"]["Variables"]["NM_OPENSEARCH_REPLICAS"] == replicas
    dev.has_resource_properties("AWS::Events::Rule", {"ScheduleExpression": "rate(1 day)"})
    # The resume schedule sends the action the handler dispatches on
    dev.has_resource_properties(
        "AWS::Events::Rule",
        {
            "ScheduleExpression": "rate(15 minutes)",
            "Targets": [Match.object_like({"Input": Match.serialized_json(RESUME_EVENT)})],
        },
    )


def test_secrets_and_dashboard_and_alarms(dev: Template) -> None:
    dev.resource_count_is("AWS::SecretsManager::Secret", 5)
    body = str(next(iter(dev.find_resources("AWS::CloudWatch::Dashboard").values()))["Properties"]["DashboardBody"])
    for stage in ("Total", "Embed", "Retrieval", "LlmFilter", "Rerank"):
        assert f"SearchLatency{stage}" in body
    metrics = ("GateBypassed", "GateFiltered", "ResultsReturned", "IngestFailed", "EmbeddingCacheHits")
    for needle in ("p50", "p95", "p99", *metrics):
        assert needle in body
    dev.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {"MetricName": "SearchLatencyTotal", "ExtendedStatistic": "p95", "Threshold": 500},
    )
    dev.has_resource_properties(
        "AWS::CloudWatch::Alarm", {"MetricName": "ApproximateNumberOfMessagesVisible", "Threshold": 0}
    )
    dev.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {"Metrics": Match.array_with([Match.object_like({"Expression": Match.string_like_regexp("errors")})])},
    )


def test_webhook_routes_are_stack_configuration_read_by_ingest_and_the_receivers(
    synth: Callable[[str, dict[str, str]], Template],
) -> None:
    routes = {"github:acme/console": "acme", "vercel:team_3Qp9kZ2mW8xV1nB4": "acme"}
    template = synth("dev", {"ingest_routes": json.dumps(routes)})
    by_name = {name: f["Properties"]["Environment"]["Variables"] for name, f in functions(template).items()}
    for name in ("ingest", "webhooks"):
        assert json.loads(by_name[name]["NM_INGEST_ROUTES"]) == routes, name
    assert not [
        name for name, env in by_name.items() if "NM_INGEST_ROUTES" in env and name not in {"ingest", "webhooks"}
    ]
    # The receivers put verified events on the stack's bus, with their own role
    (bus,) = template.find_resources("AWS::Events::EventBus")
    assert by_name["webhooks"]["NM_EVENT_BUS"] == {"Ref": bus}
    webhooks_role = role_of(functions(template)["webhooks"])
    puts = [s for s in statements_of_role(template, webhooks_role) if s["Action"] == "events:PutEvents"]
    assert puts and all(s["Resource"] == {"Fn::GetAtt": [bus, "Arn"]} for s in puts), puts
    # and only for the sources they verify: never an agent's neural-memory.<workspace>
    assert all(s["Condition"] == {"StringEquals": {"events:source": ["github", "vercel"]}} for s in puts), puts


def test_a_malformed_route_fails_the_synth_not_an_event(synth: Callable[[str, dict[str, str]], Template]) -> None:
    with pytest.raises(Exception, match="github:<owner/repo>"):
        synth("dev", {"ingest_routes": json.dumps({"acme/console": "acme"})})


def test_a_routing_table_too_large_for_a_lambda_environment_fails_the_synth(
    synth: Callable[[str, dict[str, str]], Template],
) -> None:
    routes = {f"github:acme/repository-{n:03d}": "acme" for n in range(120)}
    with pytest.raises(Exception, match="4 KB"):
        synth("dev", {"ingest_routes": json.dumps(routes)})


def test_the_llm_provider_and_its_fallback_are_stack_configuration(
    synth: Callable[[str, dict[str, str]], Template], dev: Template
) -> None:
    # By default Anthropic answers and OpenAI stands in (both secrets hold a placeholder until set)
    by_name = {name: f["Properties"]["Environment"]["Variables"] for name, f in functions(dev).items()}
    llm = {"search", "answer", "mcp"}  # mcp: its search_memory, answer_question and who_knows
    for name in llm:
        assert (by_name[name]["NM_LLM_PROVIDER"], by_name[name]["NM_LLM_FALLBACK"]) == ("anthropic", "openai")
    assert not [name for name, env in by_name.items() if "NM_LLM_PROVIDER" in env and name not in llm]
    # -c llm_provider=openai -c llm_fallback=none: OpenAI alone
    template = synth("dev", {"llm_provider": "openai", "llm_fallback": "none"})
    search = functions(template)["search"]["Properties"]["Environment"]["Variables"]
    assert (search["NM_LLM_PROVIDER"], search["NM_LLM_FALLBACK"]) == ("openai", "none")
    dev.has_output("OpenAISecretArn", {"Export": {"Name": Match.string_like_regexp("-openai-secret$")}})
    with pytest.raises(ValueError, match="llm_provider"):
        synth("dev", {"llm_provider": "gemini"})


def test_automatic_promotion_is_stack_configuration_that_lets_the_answer_function_write(
    synth: Callable[[str, dict[str, str]], Template], dev: Template
) -> None:
    # Off by default: the answer function is read-only and not told to count
    answer = functions(dev)["answer"]
    assert "NM_PROMOTE_AFTER_CITATIONS" not in answer["Properties"]["Environment"]["Variables"]
    assert "_bulk" not in json.dumps(statements_of_role(dev, role_of(answer)))
    # -c promote_after_citations=3: the answer function counts, and may write (bulk) to the index
    template = synth("dev", {"promote_after_citations": "3"})
    answer, search = functions(template)["answer"], functions(template)["search"]
    assert answer["Properties"]["Environment"]["Variables"]["NM_PROMOTE_AFTER_CITATIONS"] == "3"
    assert "_bulk" in json.dumps(statements_of_role(template, role_of(answer)))
    assert "_bulk" not in json.dumps(statements_of_role(template, role_of(search)))
    domain = next(iter(template.find_resources("AWS::OpenSearchService::Domain").values()))
    allowed = domain["Properties"]["AccessPolicies"]["Statement"]
    assert any(role_of(answer) in json.dumps(s["Principal"]) and "_bulk" in json.dumps(s["Resource"]) for s in allowed)
    with pytest.raises(ValueError, match="promote_after_citations"):
        synth("dev", {"promote_after_citations": "-1"})


def test_the_secrets_policy_is_stack_configuration_told_to_the_functions_that_write(
    synth: Callable[[str, dict[str, str]], Template], dev: Template
) -> None:
    # By default every writer redacts (the settings' default): nothing in any environment
    by_name = {name: f["Properties"]["Environment"]["Variables"] for name, f in functions(dev).items()}
    assert not [
        name for name, env in by_name.items() if "NM_SECRETS_POLICY" in env or "NM_WORKSPACE_SECRETS_POLICY" in env
    ]
    # -c secrets_policy=refuse -c workspace_secrets_policy='{"lab": "redact"}': the writers are told, the readers not
    template = synth("dev", {"secrets_policy": "refuse", "workspace_secrets_policy": '{"lab": "redact"}'})
    told = {
        name: (env.get("NM_SECRETS_POLICY"), env.get("NM_WORKSPACE_SECRETS_POLICY"))
        for name, f in functions(template).items()
        if (env := f["Properties"]["Environment"]["Variables"]).get("NM_SECRETS_POLICY")
    }
    assert told == dict.fromkeys(("observations", "ingest", "maintenance", "mcp"), ("refuse", '{"lab": "redact"}'))
    with pytest.raises(ValueError, match="secrets_policy"):
        synth("dev", {"secrets_policy": "ignore"})


def test_who_counts_as_the_team_is_stack_configuration_told_to_the_functions_that_write(
    synth: Callable[[str, dict[str, str]], Template], dev: Template
) -> None:
    # By default (GitHub's owners, members and collaborators, committers, deployments, keys) nothing is told
    assert not [n for n, f in functions(dev).items() if "NM_TEAM" in f["Properties"]["Environment"]["Variables"]]
    # -c team=... -c workspace_team=...: the writers are told (they set each observation's trust)
    team, per = '{"actors": ["ana"]}', '{"lab": {"associations": ["OWNER", "MEMBER"]}}'
    template = synth("dev", {"team": team, "workspace_team": per})
    told = {
        name: (env.get("NM_TEAM"), env.get("NM_WORKSPACE_TEAM"))
        for name, f in functions(template).items()
        if (env := f["Properties"]["Environment"]["Variables"]).get("NM_TEAM")
    }
    assert told == dict.fromkeys(("observations", "ingest", "maintenance", "mcp"), (team, per))
    with pytest.raises(ValueError, match="team"):
        synth("dev", {"team": '{"members": ["ana"]}'})


def _bootstrap(template: Template) -> tuple[str, dict]:  # type: ignore[type-arg]
    ((logical_id, resource),) = template.find_resources("Custom::NeuralMemoryIndex").items()
    return logical_id, resource["Properties"]


def test_the_functions_writing_the_index_are_deployed_after_the_bootstrap_adds_its_fields(
    dev: Template, prod: Template
) -> None:
    # A field added in place (mapping.ADDED_IN_PLACE) is in the live index's strict mapping only
    # once the bootstrap ran: a writer deployed before it would have every such write refused.
    for template in (dev, prod):
        bootstrap, _ = _bootstrap(template)
        named = functions(template)
        after = {name for name, f in named.items() if bootstrap in f.get("DependsOn", [])}
        assert after == set(AFTER_BOOTSTRAP) == {"ingest", "observations", "answer", "webhooks", "search", "mcp"}
        assert set(WRITERS) < after
        written = {n for n, f in named.items() if "NM_STORE" in f["Properties"]["Environment"]["Variables"]}
        assert written - {"maintenance"} <= after  # every function of the index but the bootstrap's own


def test_the_bootstrap_runs_again_when_the_layout_of_indices_changes(dev: Template) -> None:
    # An upgrade from the single index changes neither the schema, the model nor the mapping: the
    # layout property is what makes CloudFormation run the bootstrap (which migrates) again.
    _, properties = _bootstrap(dev)
    assert properties["Layout"] == LAYOUT == "index-per-workspace/1"


def test_the_bootstrap_runs_again_when_a_field_is_added_to_the_mapping(
    dev: Template, synth: Callable[[str, dict[str, str]], Template], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, now = _bootstrap(dev)
    assert now["Mapping"] == fingerprint() and len(now["Mapping"]) == 16
    # Given the stack as the release before a field (archived_at, added in place) synthesized it
    monkeypatch.setattr(mapping, "RECORD_FIELDS", tuple(f for f in RECORD_FIELDS if f.name != "archived_at"))
    _, before = _bootstrap(synth("dev", {}))
    # Then the bootstrap's properties differ (CloudFormation updates it: the bootstrap adds the
    # field), though the schema version and the model did not change (no reindex)
    assert before["IndexVersion"] == now["IndexVersion"] == f"{SCHEMA_VERSION}:embed-english-v3.0:1024"
    assert before["Mapping"] != now["Mapping"]
