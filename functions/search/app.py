"""POST /v1/search, GET /v1/facets and GET/POST /v1/experts — parse, call the service, reply — and
the search console's static page (GET /console), which people use to search in a browser."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse, OpenAPIResponseContentSchema
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.api.console import console_file
from neural_memory.api.resolver import ERROR_RESPONSES, build_resolver, current_request_id, current_workspace_id
from neural_memory.models import (
    ActorName,
    ErrorResponse,
    ExpertsRequest,
    ExpertsResponse,
    FacetsResponse,
    QueryText,
    SearchFilters,
    SearchMode,
    SearchRequest,
    SearchResponse,
    Slug,
    Tier,
    Timestamp,
)
from neural_memory.models.facets import DEFAULT_FACET_VALUES, MAX_FACET_VALUES, facet_filters
from neural_memory.observability import logger, metrics, tracer
from neural_memory.operations import BY_NAME
from neural_memory.runtime import get_service

app = build_resolver()
EXPERTS = BY_NAME["experts"]
FACETS = BY_NAME["facets"]
SEARCH = BY_NAME["search"]

# The filters of GET /v1/facets and GET /v1/experts, declared once (repeat a parameter for several values).
SourcesParam = Annotated[
    list[Slug] | None, Query(max_length=50, description="Observations whose `source` is one of these")
]
SourceTypesParam = Annotated[
    list[Slug] | None, Query(alias="sourceTypes", max_length=50, description="`sources` under its first name")
]
ObservationTypesParam = Annotated[list[Slug] | None, Query(alias="observationTypes", max_length=50)]
ActorNamesParam = Annotated[
    list[ActorName] | None, Query(alias="actorNames", max_length=50, description="`actors` under its first name")
]
ActorsParam = Annotated[
    list[ActorName] | None, Query(max_length=50, description="Observations whose `actorName` is one of these")
]
TiersParam = Annotated[list[Tier] | None, Query(max_length=50)]
StartParam = Annotated[Timestamp | None, Query(description="occurredAt at or after (ISO-8601 with a zone)")]
EndParam = Annotated[Timestamp | None, Query(description="occurredAt at or before (ISO-8601 with a zone)")]


@app.post(
    SEARCH.resolver_path,
    summary=SEARCH.summary,
    description="Filtered hybrid search over the caller's workspace, with scores and per-stage latency.",
    responses={200: {"description": "Results, best first"}, **ERROR_RESPONSES},
    tags=["search"],
)
@tracer.capture_method(capture_response=False)  # observation content never goes to X-Ray
def search(request: Annotated[SearchRequest, Body()]) -> SearchResponse:
    """Search the caller's workspace."""
    return get_service().search(current_workspace_id(app), request, current_request_id(app))


@app.get(
    FACETS.resolver_path,
    summary=FACETS.summary,
    description="For sources, observation types, actors and tiers: how many live observations of the caller's "
    "workspace hold each value, the most frequent first. Each field is counted under every filter given except "
    "its own (a chosen source leaves the other sources their counts); `total` matches all of them. Repeat a "
    "parameter for several values (`sources=github&sources=vercel`; `sourceTypes` and `actorNames`, the first names "
    "of `sources` and `actors`, are accepted too). The reply's counts are named as these filters are.",
    responses={200: {"description": "Counts per field, and the total"}, **ERROR_RESPONSES},
    tags=["search"],
)
@tracer.capture_method(capture_response=False)
def facets(
    sources: SourcesParam = None,
    source_types: SourceTypesParam = None,
    observation_types: ObservationTypesParam = None,
    actor_names: ActorNamesParam = None,
    tiers: TiersParam = None,
    start: StartParam = None,
    end: EndParam = None,
    limit: Annotated[int, Query(ge=1, le=MAX_FACET_VALUES, description="values per field")] = DEFAULT_FACET_VALUES,
    actors: ActorsParam = None,
) -> FacetsResponse:
    """Facet counts of the caller's workspace."""
    filters = facet_filters(
        sources=sources,
        source_types=source_types,
        observation_types=observation_types,
        actor_names=actor_names,
        actors=actors,
        tiers=tiers,
        start=start,
        end=end,
    )
    return get_service().facets(current_workspace_id(app), filters, limit, current_request_id(app))


_EXPERTS_DESCRIPTION = (
    "The actors of the caller's workspace ranked by the relevance of their observations to the query: the "
    "search's best 50 candidates under the filters, each crediting its author (and an imported pull request's "
    "reviewers and merger) with fused score x type weight x recency (at most half of the credit, halving every "
    "730 days from the workspace's newest observation), summed per actor best first with the k-th counting "
    "1/sqrt(k) (docs/api.md); each actor with their kind, counts per observation type and best evidence. Bots and "
    "agents are left out unless `includeBots` / `includeAgents`; `explain` says why each ranks where it does."
)


@app.post(
    EXPERTS.resolver_path,
    summary=EXPERTS.summary,
    description=_EXPERTS_DESCRIPTION,
    responses={200: {"description": "Actors, best first"}, **ERROR_RESPONSES},
    tags=["search"],
)
@tracer.capture_method(capture_response=False)
def experts(request: Annotated[ExpertsRequest, Body()]) -> ExpertsResponse:
    """Experts of the caller's workspace, the search body given."""
    return get_service().experts(current_workspace_id(app), request, current_request_id(app))


@app.get(
    EXPERTS.resolver_path,
    summary=EXPERTS.summary,
    description=_EXPERTS_DESCRIPTION + " The filters are those of `GET /v1/facets` (repeat one for several values), "
    "and `fresh`.",
    responses={200: {"description": "Actors, best first"}, **ERROR_RESPONSES},
    tags=["search"],
)
@tracer.capture_method(capture_response=False)
def experts_by_query(
    q: Annotated[QueryText, Query(description="The subject: 1..2000 characters after trimming")],
    sources: SourcesParam = None,
    source_types: SourceTypesParam = None,
    observation_types: ObservationTypesParam = None,
    actor_names: ActorNamesParam = None,
    tiers: TiersParam = None,
    start: StartParam = None,
    end: EndParam = None,
    fresh: Annotated[
        bool | None, Query(description="true: leave out observations marked possiblyStale; false: only those")
    ] = None,
    mode: Annotated[SearchMode, Query(description="how candidates are found (keyword by default)")] = "keyword",
    top_k: Annotated[int, Query(alias="topK", ge=1, le=20, description="actors at most")] = 5,
    evidence: Annotated[int, Query(ge=1, le=10, description="evidence ids per actor at most")] = 3,
    include_bots: Annotated[bool, Query(alias="includeBots", description="also rank bots")] = False,
    include_agents: Annotated[bool, Query(alias="includeAgents", description="also rank agents")] = False,
    explain: Annotated[bool, Query(description="each expert says why it ranks there")] = False,
) -> ExpertsResponse:
    """Experts of the caller's workspace, the query and filters in the query string."""
    filters = facet_filters(
        sources=sources,
        source_types=source_types,
        observation_types=observation_types,
        actor_names=actor_names,
        tiers=tiers,
        start=start,
        end=end,
    )
    if fresh is not None:  # false: only what went stale
        filters = (filters or SearchFilters.model_construct()).model_copy(update={"fresh": fresh})
    request = ExpertsRequest.model_construct(
        query=q,
        filters=filters,
        mode=mode,
        top_k=top_k,
        evidence=evidence,
        include_bots=include_bots,
        include_agents=include_agents,
        explain=explain,
    )
    return get_service().experts(current_workspace_id(app), request, current_request_id(app))


_FILE_ERRORS: dict[int, OpenAPIResponse] = {
    404: {"description": "No such file", "content": {"application/json": {"model": ErrorResponse}}},
    # No 401: the console's files take no key (the API calls the page makes do).
    **{status: response for status, response in ERROR_RESPONSES.items() if status not in (401, 403)},
}
_TEXT: OpenAPIResponseContentSchema = {"schema": {"type": "string"}}


@app.get(
    "/console",
    summary="The search console",
    description="A web page to search, filter, answer, add and delete observations in a browser. It takes no "
    "API key itself: the page asks for one and sends it with every API call.",
    responses={200: {"description": "The page", "content": {"text/html": _TEXT}}, **_FILE_ERRORS},
    tags=["console"],
)
def console() -> Response[str]:
    """The console's page."""
    page = console_file()
    return Response(status_code=200, body=page.body, headers=page.headers)


@app.get(
    "/console/<asset>",
    summary="A file of the search console",
    description="The console's script modules, style sheet and icon.",
    responses={
        200: {
            "description": "The file",
            "content": dict.fromkeys(("text/javascript", "text/css", "image/svg+xml"), _TEXT),
        },
        **_FILE_ERRORS,
    },
    tags=["console"],
)
def console_asset(asset: Annotated[str, Path(max_length=64)]) -> Response[str]:
    """One of the console's files, by name."""
    file = console_file(asset)
    return Response(status_code=200, body=file.body, headers=file.headers)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """API Gateway REST proxy entry point."""
    return app.resolve(event, context)
