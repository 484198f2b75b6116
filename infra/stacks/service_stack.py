"""The Neural Memory stack: it composes constructs, one per capability, and decides what each
function may touch (its environment, its secrets, its OpenSearch access), in one table."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_iam as iam
from neural_memory.api.webhooks import SOURCES as WEBHOOK_SOURCES
from neural_memory.ingest.normalizers.generic import source_for
from neural_memory.ingest.routing import agent_workspaces
from neural_memory.providers.embeddings.cohere import DIMENSIONS
from neural_memory.stores.opensearch.mapping import SCHEMA_VERSION, fingerprint

from infra.constants import (
    ANSWER_TIMEOUT_S,
    INDEX_NAME,
    INDEX_REPLICAS,
    INGEST_CONCURRENCY,
    INGEST_TIMEOUT_S,
    LAMBDA_TIMEOUT_S,
    MAINTENANCE_TIMEOUT_S,
    physical_name,
)
from infra.constructs.agent_events import AgentEvents, output_name
from infra.constructs.api import Api
from infra.constructs.core_layer import CoreLayer
from infra.constructs.domain_access import grant
from infra.constructs.ingest_pipeline import IngestPipeline
from infra.constructs.lambda_factory import LambdaFactory
from infra.constructs.maintenance import Maintenance
from infra.constructs.monitoring import Monitoring
from infra.constructs.provider_secrets import ProviderSecrets
from infra.constructs.search_domain import SearchDomain

if TYPE_CHECKING:
    from aws_cdk import aws_lambda as lambda_
    from constructs import Construct

    from infra.constructs.domain_access import Access

EMBED_MODEL = "embed-english-v3.0"


@dataclass(frozen=True)
class FunctionNeeds:
    """What one function may touch: least privilege, decided here once."""

    opensearch: Access | None = None
    secrets: tuple[str, ...] = ()  # "cohere", "anthropic", "openai", "github_webhook", "vercel_webhook"
    timeout_s: int = LAMBDA_TIMEOUT_S
    memory_mb: int = 1024


NEEDS: dict[str, FunctionNeeds] = {
    "search": FunctionNeeds("read", ("cohere", "anthropic", "openai")),
    "answer": FunctionNeeds("read", ("cohere", "anthropic", "openai"), timeout_s=ANSWER_TIMEOUT_S),
    "observations": FunctionNeeds("write", ("cohere",)),
    # MCP's tools: search and who_knows (read, the LLM gate and rerank), answer_question (the LLM),
    # remember and forget (write, embeddings): what the search, answer and observations functions need.
    "mcp": FunctionNeeds("write", ("cohere", "anthropic", "openai"), timeout_s=ANSWER_TIMEOUT_S),
    "ingest": FunctionNeeds("write", ("cohere",), timeout_s=INGEST_TIMEOUT_S),
    # A reindex at deploy reuses the vectors the old index stores for unchanged text and embeds the
    # rest (a new model, text never embedded by this one): that needs the Cohere key.
    "maintenance": FunctionNeeds("admin", ("cohere",), timeout_s=MAINTENANCE_TIMEOUT_S),
    "authorizer": FunctionNeeds(memory_mb=256),
    # Verifies signatures and puts events on the bus: no store, no embedder.
    "webhooks": FunctionNeeds(secrets=("github_webhook", "vercel_webhook"), memory_mb=256),
}
# A Lambda function's whole environment is limited to 4 KB; the rest of it takes about 1 KB.
MAX_ROUTES_BYTES = 3000
# The LLM's provider and fallback (-c llm_provider=openai -c llm_fallback=anthropic): both secrets are
# deployed with a placeholder value, so a function must be told which one holds a key; by default
# Anthropic answers (as before OpenAI existed) and OpenAI stands in when it fails.
LLM_PROVIDERS = ("anthropic", "openai")
LLM_DEFAULT = {"llm_provider": "anthropic", "llm_fallback": "openai"}
# Functions whose new code may write a field the live index lacks until the bootstrap adds it in
# place (``mapping.ADDED_IN_PLACE``): deployed after it. The webhooks put events on the bus that the
# ingest function writes; the answer function counts citations (automatic promotion).
WRITERS = ("ingest", "observations", "answer", "webhooks", "mcp")
# And the reader: after a change of layout (workspace_indices.LAYOUT) the new code reads indices
# that exist once the bootstrap migrated the old one, so it too is deployed after the bootstrap.
AFTER_BOOTSTRAP = (*WRITERS, "search")
# Functions that read the routing table (stack configuration: ingest-routes.json or -c ingest_routes).
ROUTED = ("ingest", "webhooks")
# Automatic promotion (-c promote_after_citations=N, NM_PROMOTE_AFTER_CITATIONS): the answer function
# counts citations, so only then may it write to the index; off, it stays read-only. MCP's
# answer_question counts them too (its function writes anyway).
PROMOTION_CONTEXT = "promote_after_citations"
ANSWERING = ("answer", "mcp")
# What a write does with a secret (-c secrets_policy=refuse, -c workspace_secrets_policy='{"acme":
# "refuse"}'; NM_SECRETS_POLICY, NM_WORKSPACE_SECRETS_POLICY): told to the functions that write.
SECRETS_POLICIES = ("redact", "refuse")
# Who counts as the team (-c team='{"actors": ["ana"]}', -c workspace_team='{"acme": {...}}';
# NM_TEAM, NM_WORKSPACE_TEAM: trust/team.py): told to the functions that write, which set trust.
TEAM_FIELDS = {"associations", "actors"}


class ServiceStack(Stack):
    """API, functions sharing one layer, the OpenSearch k-NN domain, ingestion and monitoring."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        stage: str,
        layer_dir: str,
        ingest_routes: dict[str, str] | None = None,
        **kwargs: object,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        prod = stage == "prod"
        sizing = "prod" if prod else "dev"  # every other stage is sized like dev
        self._replicas = INDEX_REPLICAS[sizing]
        self._llm = {key: str(self.node.try_get_context(key) or default) for key, default in LLM_DEFAULT.items()}
        if self._llm["llm_provider"] not in LLM_PROVIDERS or self._llm["llm_fallback"] not in (*LLM_PROVIDERS, "none"):
            raise ValueError(
                f"llm_provider must be one of {LLM_PROVIDERS}, llm_fallback one of them or none: {self._llm}"
            )
        promote = str(self.node.try_get_context(PROMOTION_CONTEXT) or "0")
        if not promote.isdigit():
            raise ValueError(f"{PROMOTION_CONTEXT} must be a whole number of citations (0: off), not {promote!r}")
        self._promote_after = int(promote)
        self._secrets_env = self._secrets_policy() | self._team_policy()
        self._routes = json.dumps(dict(sorted((ingest_routes or {}).items())))
        if len(self._routes) > MAX_ROUTES_BYTES:  # fail the synth, not the deploy, with the reason
            raise ValueError(
                f"the routing table is {len(self._routes)} bytes of JSON; a Lambda environment holds 4 KB "
                f"in all, so at most {MAX_ROUTES_BYTES} for NM_INGEST_ROUTES"
            )
        self.search = SearchDomain(self, "Search", name=physical_name(stage), prod=prod)
        self.secrets = ProviderSecrets(self, "ProviderSecrets")
        self._factory = LambdaFactory(CoreLayer(self, "CoreLayer", layer_dir=layer_dir).layer, stage)
        self.functions: dict[str, lambda_.Function] = {}

        self.api = Api(self, "Api", name=physical_name(stage), make_function=self._function, prod=prod)
        concurrency = INGEST_CONCURRENCY[sizing]
        reserve = self.node.try_get_context("ingest_concurrency") != "unreserved"
        self.ingest = IngestPipeline(
            self,
            "Ingest",
            bus_name=physical_name(stage),
            function=self._function(self, "ingest", {}, reserved_concurrency=concurrency if reserve else None),
            max_concurrency=concurrency,
        )
        self.maintenance = Maintenance(
            self,
            "Maintenance",
            function=self._function(self, "maintenance", {}),
            index_version=f"{SCHEMA_VERSION}:{EMBED_MODEL}:{DIMENSIONS[EMBED_MODEL]}",
            mapping=fingerprint(),
            replicas=self._replicas,
        )
        self.maintenance.depend_on_bootstrap(self.functions[name] for name in AFTER_BOOTSTRAP)
        webhooks = self.functions["webhooks"]
        # The receivers put only the sources they verify: never an agent's, which names a workspace
        webhooks.add_to_role_policy(
            iam.PolicyStatement(
                actions=["events:PutEvents"],
                resources=[self.ingest.bus.event_bus_arn],
                conditions={"StringEquals": {"events:source": sorted(WEBHOOK_SOURCES)}},
            )
        )
        self.agents = AgentEvents(
            self, "AgentEvents", bus=self.ingest.bus, workspaces=agent_workspaces(ingest_routes or {})
        )
        webhooks.add_environment("NM_EVENT_BUS", self.ingest.bus.event_bus_name)
        missing = set(NEEDS) - set(self.functions)
        if missing:
            raise ValueError(f"functions declared in NEEDS but never built: {sorted(missing)}")
        readers = {
            fn.role.role_arn: access
            for name, fn in self.functions.items()
            if fn.role is not None and (access := self._access(name)) is not None
        }
        operator = self.node.try_get_context("operator_role_arn")
        self.search.restrict_to(INDEX_NAME, readers, str(operator) if operator else None)
        email = self.node.try_get_context("alarm_email")
        self.monitoring = Monitoring(
            self,
            "Monitoring",
            stage=stage,
            rest_api=self.api.rest_api,
            functions=self.functions,
            queue=self.ingest.queue,
            dlq=self.ingest.dlq,
            domain=self.search.domain,
            storage_gb=self.search.storage_gb,
            alarm_email=str(email) if email else None,
        )

        CfnOutput(
            self, "AlarmTopicArn", value=self.monitoring.topic.topic_arn, export_name=f"{construct_id}-alarm-topic"
        )
        CfnOutput(self, "ApiUrl", value=self.api.rest_api.url, export_name=f"{construct_id}-api-url")
        CfnOutput(self, "EventBusName", value=self.ingest.bus.event_bus_name, export_name=f"{construct_id}-event-bus")
        for workspace, agent in self.agents.grants.items():  # what an operator hands a workspace's agent
            name, export = output_name(workspace, "A-Za-z0-9"), output_name(workspace, "A-Za-z0-9-")
            CfnOutput(
                self,
                f"AgentPolicyArn{name}",
                value=agent.policy.managed_policy_arn,
                description=f"workspace {workspace}: PutEvents on the bus with source {source_for(workspace)} only",
                export_name=f"{construct_id}-agent-policy-{export}",
            )
            CfnOutput(
                self,
                f"AgentRoleArn{name}",
                value=agent.role.role_arn,
                description=f"workspace {workspace}: a role holding AgentPolicyArn{name} alone",
                export_name=f"{construct_id}-agent-role-{export}",
            )
        CfnOutput(self, "KeysTable", value=self.api.keys.table_name, export_name=f"{construct_id}-keys-table")
        CfnOutput(
            self, "CohereSecretArn", value=self.secrets.cohere.secret_arn, export_name=f"{construct_id}-cohere-secret"
        )
        for name, secret in (("Github", self.secrets.github_webhook), ("Vercel", self.secrets.vercel_webhook)):
            CfnOutput(
                self,
                f"{name}WebhookSecretArn",
                value=secret.secret_arn,
                export_name=f"{construct_id}-{name.lower()}-webhook",
            )
        CfnOutput(
            self,
            "AnthropicSecretArn",
            value=self.secrets.anthropic.secret_arn,
            export_name=f"{construct_id}-anthropic-secret",
        )
        CfnOutput(
            self, "OpenAISecretArn", value=self.secrets.openai.secret_arn, export_name=f"{construct_id}-openai-secret"
        )

    def _access(self, name: str) -> Access | None:
        """Function ``name``'s OpenSearch access: ``NEEDS``', but write for the answer function
        when it counts citations for the automatic promotion."""
        if name == "answer" and self._promote_after:
            return "write"
        return NEEDS[name].opensearch

    def _secrets_policy(self) -> dict[str, str]:
        """The writers' environment for ``-c secrets_policy`` and ``-c workspace_secrets_policy``
        (nothing when neither is given: redact, the default), checked at synth."""
        env: dict[str, str] = {}
        policy = self.node.try_get_context("secrets_policy")
        if policy is not None:
            if policy not in SECRETS_POLICIES:
                raise ValueError(f"secrets_policy must be one of {SECRETS_POLICIES}, not {policy!r}")
            env["NM_SECRETS_POLICY"] = str(policy)
        per_workspace = self.node.try_get_context("workspace_secrets_policy")
        if per_workspace is not None:
            table = json.loads(per_workspace) if isinstance(per_workspace, str) else per_workspace
            if not isinstance(table, dict) or not set(table.values()) <= set(SECRETS_POLICIES):
                raise ValueError(f"workspace_secrets_policy must map workspaces to {SECRETS_POLICIES}: {per_workspace}")
            env["NM_WORKSPACE_SECRETS_POLICY"] = json.dumps(dict(sorted(table.items())))
        return env

    def _team_policy(self) -> dict[str, str]:
        """The writers' environment for ``-c team`` and ``-c workspace_team`` (nothing when neither
        is given: the default team), checked at synth."""
        env: dict[str, str] = {}
        for context, variable in (("team", "NM_TEAM"), ("workspace_team", "NM_WORKSPACE_TEAM")):
            given = self.node.try_get_context(context)
            if given is None:
                continue
            value = json.loads(given) if isinstance(given, str) else given
            policies = value.values() if context == "workspace_team" and isinstance(value, dict) else [value]
            if not isinstance(value, dict) or not all(_team_shaped(policy) for policy in policies):
                raise ValueError(f"{context} must be {{'associations': [...], 'actors': [...]}} (per workspace for "
                                 f"workspace_team): {given}")  # fmt: skip
            env[variable] = json.dumps(value, sort_keys=True)
        return env

    def _function(
        self, scope: Construct, name: str, environment: dict[str, str], reserved_concurrency: int | None = None
    ) -> lambda_.Function:
        """Build function ``name`` with exactly what ``NEEDS[name]`` grants it."""
        needs = NEEDS[name]
        access = self._access(name)
        env = dict(environment)
        if name in ANSWERING and self._promote_after:
            env["NM_PROMOTE_AFTER_CITATIONS"] = str(self._promote_after)
        if access is not None:
            env |= {
                "NM_STORE": "opensearch",
                "NM_OPENSEARCH_URL": f"https://{self.search.domain.domain_endpoint}",
                "NM_OPENSEARCH_INDEX": INDEX_NAME,
                "NM_OPENSEARCH_AWS_REGION": self.region,
                "NM_EMBEDDER": "cohere",
                "NM_COHERE_EMBED_MODEL": EMBED_MODEL,
            }
        if access == "admin":  # the index bootstrap creates the index and keeps its replicas
            env["NM_OPENSEARCH_REPLICAS"] = str(self._replicas)
        if name in ROUTED:
            env["NM_INGEST_ROUTES"] = self._routes
        if access in ("write", "admin"):  # the writers (and maintenance's scrub) redact or refuse
            env |= self._secrets_env
        if access is None:
            env["NM_EMBEDDER"] = "none"  # nothing to embed: never load a model
        secrets = {
            "cohere": self.secrets.cohere,
            "anthropic": self.secrets.anthropic,
            "openai": self.secrets.openai,
            "github_webhook": self.secrets.github_webhook,
            "vercel_webhook": self.secrets.vercel_webhook,
        }
        for provider in needs.secrets:
            env[f"NM_{provider.upper()}_SECRET_ARN"] = secrets[provider].secret_arn
        if set(LLM_PROVIDERS) & set(needs.secrets):
            env |= {f"NM_{key.upper()}": value for key, value in self._llm.items()}
        function = self._factory.function(
            scope,
            name,
            memory_mb=needs.memory_mb,
            timeout_s=needs.timeout_s,
            environment=env,
            reserved_concurrency=reserved_concurrency,
        )
        for provider in needs.secrets:
            secrets[provider].grant_read(function)
        if access is not None and function.role is not None:
            grant(function.role, self.search.arn, INDEX_NAME, access)
        self.functions[name] = function
        return function


def _team_shaped(policy: object) -> bool:
    """Whether ``policy`` is a team policy: lists of strings under ``associations`` and ``actors``."""
    return (
        isinstance(policy, dict)
        and set(policy) <= TEAM_FIELDS
        and all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in policy.values())
    )
