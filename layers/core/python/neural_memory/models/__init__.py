"""Pydantic models, by role: ``types`` (constrained types, limits, time zones), ``api`` (the HTTP
contract, one module a resource: ``wire`` (``WireModel``), ``filters``, ``search``, ``observations``,
``facets``, ``errors``, ``answers``), ``engineering`` (the lineage and experts views) and ``records``
(the domain records, ``DomainModel``). Everything is re-exported here, so ``from neural_memory.models import X``
reads the same whichever file X is in."""

from neural_memory.models import api, engineering, records, types
from neural_memory.models.api import *  # noqa: F403
from neural_memory.models.engineering import *  # noqa: F403
from neural_memory.models.records import *  # noqa: F403
from neural_memory.models.types import *  # noqa: F403

__all__: list[str] = []
__all__ += api.__all__
__all__ += engineering.__all__
__all__ += records.__all__
__all__ += types.__all__
