"""The opensearch-py client: SigV4-signed in AWS, plain HTTP(S) locally. Built on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from neural_memory.settings import Settings


def build_client(settings: Settings) -> Any:
    """An ``OpenSearch`` client for ``settings.opensearch_url``."""
    from opensearchpy import OpenSearch, RequestsHttpConnection

    if not settings.opensearch_url:
        raise ConfigurationError("NM_OPENSEARCH_URL is not set but NM_STORE=opensearch")
    options: dict[str, Any] = {"hosts": [settings.opensearch_url], "timeout": settings.opensearch_timeout_s}
    if settings.opensearch_aws_region:
        import boto3
        from opensearchpy import AWSV4SignerAuth

        credentials = boto3.Session().get_credentials()
        # TLS follows the endpoint's scheme (the domain is https-only; a local stand-in may be http).
        tls = settings.opensearch_url.startswith("https://")
        options |= {
            "http_auth": AWSV4SignerAuth(credentials, settings.opensearch_aws_region, "es"),
            "use_ssl": tls,
            "verify_certs": tls,
            "connection_class": RequestsHttpConnection,
        }
    return OpenSearch(**options)
