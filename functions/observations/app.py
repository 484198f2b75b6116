"""POST /v1/observations, GET and DELETE /v1/observations/{id}, GET /v1/observations/{id}/lineage,
POST /v1/observations/{id}/promote, GET /v1/audit — parse, call the service with who calls (the
key's name and role: the service enforces the role), reply."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.api.resolver import (
    ERROR_RESPONSES,
    build_resolver,
    current_actor,
    current_caller,
    current_request_id,
    current_workspace_id,
)
from neural_memory.models import (
    DEFAULT_LINEAGE,
    MAX_LINEAGE,
    ActorName,
    AuditResponse,
    DeleteResponse,
    ErrorResponse,
    LineageResponse,
    ObservationId,
    ObservationOut,
    ObservationsRequest,
    ObservationsResponse,
    PromoteRequest,
    Timestamp,
)
from neural_memory.models.audit import DEFAULT_PAGE, MAX_PAGE, Action, AuditQuery
from neural_memory.observability import logger, metrics, tracer
from neural_memory.operations import BY_NAME
from neural_memory.runtime import get_service

app = build_resolver()
ADD = BY_NAME["add"]
AUDIT = BY_NAME["audit"]
DELETE = BY_NAME["delete"]
GET = BY_NAME["get"]
LINEAGE = BY_NAME["lineage"]
PROMOTE = BY_NAME["promote"]
_NOT_FOUND: dict[int, OpenAPIResponse] = {
    404: {
        "description": "No such observation in the caller's workspace",
        "content": {"application/json": {"model": ErrorResponse}},
    }
}


@app.post(
    ADD.resolver_path,
    summary=ADD.summary,
    description="Upsert 1..100 observations; the same id (or source event) updates in place. "
    "An id twice in one request is a 400 naming the later one (`observations.N.id`). Needs a `write` key; "
    "changing an observation another key wrote needs `admin`. Each stored observation's `createdBy` is the "
    "key's name (a `createdBy` in the body is ignored).",
    responses={
        200: {"description": "Ids, and how many were created or updated"},
        **ERROR_RESPONSES,
        422: {
            "description": "store_rejected: the store refused some observations for good (each named, with why)",
            "content": {"application/json": {"model": ErrorResponse}},
        },
    },
    tags=["observations"],
)
@tracer.capture_method(capture_response=False)  # observation content never goes to X-Ray
def ingest(request: Annotated[ObservationsRequest, Body()]) -> ObservationsResponse:
    """Ingest observations into the caller's workspace."""
    return get_service().ingest(
        current_workspace_id(app), request.observations, current_request_id(app), current_caller(app)
    )


@app.get(
    GET.resolver_path,
    summary=GET.summary,
    responses={200: {"description": "The observation"}, **_NOT_FOUND, **ERROR_RESPONSES},
    tags=["observations"],
)
@tracer.capture_method(capture_response=False)  # observation content never goes to X-Ray
def read(id: Annotated[ObservationId, Path()]) -> ObservationOut:  # the path parameter's name
    """One observation of the caller's workspace."""
    return get_service().get(current_workspace_id(app), id, current_request_id(app))


@app.delete(
    DELETE.resolver_path,
    summary=DELETE.summary,
    description="Needs a `write` key for an observation the key wrote, `admin` for any other.",
    responses={200: {"description": "Deleted, with all its chunks"}, **_NOT_FOUND, **ERROR_RESPONSES},
    tags=["observations"],
)
@tracer.capture_method(capture_response=False)  # observation content never goes to X-Ray
def delete(id: Annotated[ObservationId, Path()]) -> DeleteResponse:
    """Delete one observation (and its chunks) of the caller's workspace."""
    return get_service().delete(current_workspace_id(app), id, current_request_id(app), current_caller(app))


@app.get(
    LINEAGE.resolver_path,
    summary=LINEAGE.summary,
    description="Its supersession chain both ways (the versions it replaced and those that replaced it), and the "
    "observations sharing an engineering key with it in their metadata (a commit sha, a pull request or issue, a "
    "deployment id), oldest first, each with every link that brought it in.",
    responses={200: {"description": "The timeline, the observation included"}, **_NOT_FOUND, **ERROR_RESPONSES},
    tags=["observations"],
)
@tracer.capture_method(capture_response=False)
def lineage(
    id: Annotated[ObservationId, Path()],
    limit: Annotated[
        int, Query(ge=1, le=MAX_LINEAGE, description="Observations sharing a key, at most (the chain is apart)")
    ] = DEFAULT_LINEAGE,
) -> LineageResponse:
    """The lineage of one observation of the caller's workspace."""
    return get_service().lineage(current_workspace_id(app), id, limit, current_request_id(app))


@app.post(
    PROMOTE.resolver_path,
    summary=PROMOTE.summary,
    description="Keep a collaborative (C) observation for good: tier A, no expiry; who (the API key) and why "
    "(`reason`) are recorded on it. Needs a `write` key (any observation of the workspace: its content is unchanged).",
    responses={
        200: {"description": "The promoted observation"},
        **_NOT_FOUND,
        409: {
            "description": "conflict: the observation is not a live C observation (the message says its tier)",
            "content": {"application/json": {"model": ErrorResponse}},
        },
        **ERROR_RESPONSES,
    },
    tags=["observations"],
)
@tracer.capture_method(capture_response=False)  # observation content never goes to X-Ray
def promote(id: Annotated[ObservationId, Path()], request: Annotated[PromoteRequest, Body()]) -> ObservationOut:
    """Promote one C observation of the caller's workspace to A."""
    return get_service().promote(
        current_workspace_id(app), id, request.reason, current_actor(app), current_request_id(app), current_caller(app)
    )


@app.get(
    AUDIT.resolver_path,
    summary=AUDIT.summary,
    description="What was done to the workspace's memory, newest first: each write, change, delete, promotion, "
    "scrub, purge, key creation and revocation, with when, the key's name, the ids and counts (never content). "
    "Needs an `admin` key. Filter by `key` (a key's name), `action`, `start` and `end`; pass the reply's "
    "`nextCursor` as `cursor` for older entries.",
    responses={200: {"description": "A page of entries, newest first"}, **ERROR_RESPONSES},
    tags=["audit"],
)
@tracer.capture_method(capture_response=False)
def audit(
    key: Annotated[ActorName | None, Query(description="Only this key's entries (its name)")] = None,
    action: Annotated[Action | None, Query(description="Only this action")] = None,
    start: Annotated[Timestamp | None, Query(description="At or after (ISO-8601 with a zone)")] = None,
    end: Annotated[Timestamp | None, Query(description="At or before (ISO-8601 with a zone)")] = None,
    cursor: Annotated[
        str | None, Query(max_length=64, pattern=r"^[0-9]{15}-[0-9a-f]{12}$", description="`nextCursor` of a page")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Entries at most")] = DEFAULT_PAGE,
) -> AuditResponse:
    """A page of the caller's workspace's audit trail."""
    query = AuditQuery(key=key, action=action, start=start, end=end, cursor=cursor, limit=limit)
    return get_service().audit_trail(current_workspace_id(app), query, current_request_id(app), current_caller(app))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """API Gateway REST proxy entry point."""
    return app.resolve(event, context)
