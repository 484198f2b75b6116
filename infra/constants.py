"""Names and numbers shared by the stack, its constructs and the dashboards (metric names come from
the layer). Physical names are scoped by stage, so dev and prod coexist in one account."""

from neural_memory.ingest.normalizers import event_sources
from neural_memory.ingest.normalizers.generic import SOURCE as AGENT_EVENT_SOURCE
from neural_memory.observability import METRICS_NAMESPACE, SERVICE_NAME
from neural_memory.settings import SearchSettings

__all__ = ["AGENT_EVENT_SOURCE", "METRICS_NAMESPACE", "SERVICE_NAME"]

STACK_NAME = "NeuralMemory"
LAMBDA_TIMEOUT_S = 15
# API Gateway REST ends an integration after 29 s: a function behind it must finish first.
API_INTEGRATION_LIMIT_S = 29
ANSWER_TIMEOUT_S = 28
INGEST_TIMEOUT_S = 60
MAINTENANCE_TIMEOUT_S = 900  # Lambda's maximum: a reindex copies as much as it can per invocation
INGEST_BATCH_SIZE = 10
# Bulk writers at once against the domain, per stage (dev: one small node). The event source polls
# with at most this many concurrent invocations (SQS' minimum is 2) and the function reserves as
# many, so a burst waits in the queue instead of fanning out. Reserved concurrency comes out of the
# account's pool, which must keep 10 unreserved (a new account's whole quota is 10: ask for more,
# or deploy with -c ingest_concurrency=unreserved to keep only the event source's cap).
INGEST_CONCURRENCY = {"dev": 2, "prod": 5}
DLQ_MAX_RECEIVE_COUNT = 5
# The design's p95 budget per search stage (the settings' defaults, NM_BUDGET_*_MS): a line on each
# stage's latency graph and an alarm on its p95, by the stage's metric suffix.
_BUDGETS = SearchSettings.model_fields
STAGE_BUDGETS_MS: dict[str, int] = {
    "Embed": _BUDGETS["budget_embed_ms"].default,
    "Retrieval": _BUDGETS["budget_retrieval_ms"].default,
    "LlmFilter": _BUDGETS["budget_llm_filter_ms"].default,
    "Total": _BUDGETS["budget_total_ms"].default,
}
LATENCY_ALARM_P95_MS = STAGE_BUDGETS_MS["Total"]
# Every route at once, answers (an LLM call) included.
API_LATENCY_ALARM_P95_MS = 5000
# An event waiting this long means ingestion is stuck or cannot keep up.
QUEUE_AGE_ALARM_S = 900
# How long API Gateway reuses an authorizer's decision for one key: a revoked key keeps working
# on AWS until its cached decision expires (README, "API keys").
AUTHORIZER_CACHE_TTL_S = 300
# The bus has a rule into the ingest queue for every source the ingest function has a normalizer
# for, read from the layer's registry (never a second list here): an event the layer can ingest
# never matches no rule and vanishes. Agents put AGENT_EVENT_SOURCE events (README, "Agents on the bus").
EVENT_SOURCES = event_sources()
INDEX_NAME = "neural-memory"
# Replicas of the index per stage: none on dev's single node (a replica there can never be
# assigned: the cluster would be yellow for good), one per other node in prod's three AZs.
INDEX_REPLICAS = {"dev": 0, "prod": 2}


def physical_name(stage: str, what: str = "") -> str:
    """``neural-memory-<stage>[-<what>]``: the name of anything AWS names per account."""
    return f"{SERVICE_NAME}-{stage}" + (f"-{what}" if what else "")
