"""The HTTP contract: request and response models (camelCase on the wire; docs/api.md,
docs/openapi.json), one module a resource, all importable from here and from ``neural_memory.models``
as one contract: ``wire`` (the bases), ``filters``, ``search``, ``observations``, ``facets``,
``errors`` and ``answers`` (the engineering views are ``engineering``). Those modules are this one's
parts: their public names are listed here once."""

from __future__ import annotations

from neural_memory.models.answers import AnswerRequest, AnswerResponse, Citation
from neural_memory.models.audit import AuditEntryOut, AuditResponse
from neural_memory.models.errors import ErrorBody, ErrorDetail, ErrorResponse
from neural_memory.models.facets import FacetCount, Facets, FacetsResponse
from neural_memory.models.filters import DateRange, ExcludedValues, FilterGroup, SearchFilters
from neural_memory.models.observations import (
    MAX_CODE_PATHS,
    MAX_CODE_REFS,
    CodeRef,
    DeleteResponse,
    ObservationIn,
    ObservationOut,
    ObservationsRequest,
    ObservationsResponse,
    PromoteRequest,
    Redaction,
    WebhookReceipt,
)
from neural_memory.models.search import (
    AutoFiltersStatus,
    Latency,
    LlmStatus,
    QuestionStatus,
    RerankProvider,
    RerankStatus,
    ResultMetadata,
    Scores,
    SearchRequest,
    SearchResponse,
    SearchResult,
    StageExplanation,
    ThresholdStatus,
)
from neural_memory.models.wire import RequestModel, WireModel

__all__ = [
    "WireModel",
    "RequestModel",
    "DateRange",
    "ExcludedValues",
    "FilterGroup",
    "SearchFilters",
    "SearchRequest",
    "Scores",
    "ResultMetadata",
    "StageExplanation",
    "SearchResult",
    "Latency",
    "LlmStatus",
    "RerankProvider",
    "RerankStatus",
    "ThresholdStatus",
    "AutoFiltersStatus",
    "QuestionStatus",
    "SearchResponse",
    "MAX_CODE_REFS",
    "MAX_CODE_PATHS",
    "CodeRef",
    "ObservationIn",
    "ObservationsRequest",
    "WebhookReceipt",
    "ObservationsResponse",
    "Redaction",
    "ObservationOut",
    "PromoteRequest",
    "DeleteResponse",
    "FacetCount",
    "Facets",
    "FacetsResponse",
    "ErrorDetail",
    "ErrorBody",
    "ErrorResponse",
    "AnswerRequest",
    "Citation",
    "AnswerResponse",
    "AuditEntryOut",
    "AuditResponse",
]
