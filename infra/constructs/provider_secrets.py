"""Cohere, Anthropic and OpenAI API keys and the GitHub and Vercel webhook signing secrets in Secrets
Manager; functions read them once per container."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct


class ProviderSecrets(Construct):
    """Empty secrets to fill after deploy (``aws secretsmanager put-secret-value``)."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.cohere = secretsmanager.Secret(
            self, "Cohere", description="Cohere API key (plain string)", removal_policy=RemovalPolicy.DESTROY
        )
        self.anthropic = secretsmanager.Secret(
            self, "Anthropic", description="Anthropic API key (plain string)", removal_policy=RemovalPolicy.DESTROY
        )
        self.openai = secretsmanager.Secret(
            self, "OpenAI", description="OpenAI API key (plain string)", removal_policy=RemovalPolicy.DESTROY
        )
        self.github_webhook = secretsmanager.Secret(
            self,
            "GithubWebhook",
            description="GitHub webhook secret (plain string; the same value as in the repository's webhook)",
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.vercel_webhook = secretsmanager.Secret(
            self,
            "VercelWebhook",
            description="Vercel webhook secret (plain string; shown when the webhook is created in Vercel)",
            removal_policy=RemovalPolicy.DESTROY,
        )
