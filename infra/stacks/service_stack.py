"""The Neural Memory stack: it only composes constructs, one per capability."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import CfnOutput, Stack
from neural_memory.embeddings.cohere import DIMENSIONS
from neural_memory.stores.opensearch import SCHEMA_VERSION

from infra.constants import INDEX_NAME
from infra.constructs.api import Api
from infra.constructs.core_layer import CoreLayer
from infra.constructs.ingest_pipeline import IngestPipeline
from infra.constructs.lambda_factory import LambdaFactory
from infra.constructs.maintenance import Maintenance
from infra.constructs.monitoring import Monitoring
from infra.constructs.provider_secrets import ProviderSecrets
from infra.constructs.search_domain import SearchDomain

if TYPE_CHECKING:
    from constructs import Construct

EMBED_MODEL = "embed-english-v3.0"


class ServiceStack(Stack):
    """API, functions sharing one layer, the OpenSearch k-NN domain, ingestion and monitoring."""

    def __init__(self, scope: Construct, construct_id: str, *, stage: str, layer_dir: str, **kwargs: object) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        prod = stage == "prod"
        search = SearchDomain(self, "Search", prod=prod)
        secrets = ProviderSecrets(self, "ProviderSecrets")
        layer = CoreLayer(self, "CoreLayer", layer_dir=layer_dir).layer
        factory = LambdaFactory(
            layer,
            {
                "NM_STORE": "opensearch",
                "NM_OPENSEARCH_URL": f"https://{search.domain.domain_endpoint}",
                "NM_OPENSEARCH_INDEX": INDEX_NAME,
                "NM_OPENSEARCH_AWS_REGION": self.region,
                "NM_EMBEDDER": "cohere",
                "NM_COHERE_EMBED_MODEL": EMBED_MODEL,
                "NM_COHERE_SECRET_ARN": secrets.cohere.secret_arn,
                "NM_ANTHROPIC_SECRET_ARN": secrets.anthropic.secret_arn,
            },
        )
        api = Api(self, "Api", factory=factory, prod=prod)
        ingest = IngestPipeline(self, "Ingest", factory=factory)
        maintenance = Maintenance(
            self,
            "Maintenance",
            factory=factory,
            index_version=f"{SCHEMA_VERSION}:{EMBED_MODEL}:{DIMENSIONS[EMBED_MODEL]}",
        )
        readers_writers = (
            api.search_function, api.answer_function, api.observations_function, ingest.function, maintenance.function,
        )  # fmt: skip
        for function in readers_writers:
            search.domain.grant_read_write(function)
            secrets.cohere.grant_read(function)
        for function in (api.search_function, api.answer_function, api.observations_function):
            secrets.anthropic.grant_read(function)
        self.monitoring = Monitoring(self, "Monitoring", rest_api=api.rest_api, dlq=ingest.dlq)
        self.api, self.ingest, self.search, self.maintenance = api, ingest, search, maintenance
        CfnOutput(self, "ApiUrl", value=api.rest_api.url, export_name=f"{construct_id}-api-url")
        CfnOutput(self, "EventBusName", value=ingest.bus.event_bus_name, export_name=f"{construct_id}-event-bus")
        CfnOutput(self, "KeysTable", value=api.keys.table_name, export_name=f"{construct_id}-keys-table")
        CfnOutput(self, "CohereSecretArn", value=secrets.cohere.secret_arn, export_name=f"{construct_id}-cohere-secret")
        CfnOutput(
            self,
            "AnthropicSecretArn",
            value=secrets.anthropic.secret_arn,
            export_name=f"{construct_id}-anthropic-secret",
        )
