"""Names shared by the stack, its constructs and the dashboards (metric names come from the layer)."""

from neural_memory.observability import METRICS_NAMESPACE, SERVICE_NAME

__all__ = ["METRICS_NAMESPACE", "SERVICE_NAME"]

STACK_NAME = "NeuralMemory"
LAMBDA_TIMEOUT_S = 15
INGEST_TIMEOUT_S = 60
INGEST_BATCH_SIZE = 10
DLQ_MAX_RECEIVE_COUNT = 5
LOG_RETENTION_DAYS = 30
LATENCY_ALARM_P95_MS = 500
EVENT_SOURCES = ("github", "vercel")
INDEX_NAME = "neural-memory"
