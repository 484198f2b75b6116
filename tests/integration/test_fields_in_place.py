"""New index fields reach a deployed OpenSearch index in place (``mapping.ADDED_IN_PLACE``), not by
a reindex: an index of the same schema version whose strict mapping predates them (as every index
a deployment made before the tier lifecycle, the staleness marks and the embedding cache has)
refuses documents carrying them until the bootstrap puts them into its mapping; then E writes
(``recurrence_key``), promotions (``promoted_*``) and staleness marks (``code_refs``,
``possibly_stale``) succeed, and nothing was reindexed or embedded again. The bootstrap of a
deploy that does reindex (another model) adds them to the live index first: writes keep going to
it until the swap."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.errors import ConfigurationError
from neural_memory.ingest import lifecycle
from neural_memory.models import SearchRequest
from neural_memory.service import Service
from neural_memory.stores.base import read_one
from neural_memory.stores.opensearch.index import OpenSearchAdmin
from neural_memory.stores.opensearch.mapping import ADDED_IN_PLACE, SCHEMA_VERSION, index_body
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.opensearch.workspace_indices import all_alias, workspace_alias
from neural_memory.use_cases.index_bootstrap import bootstrap
from opensearchpy import OpenSearch

from tests.helpers.fakes import HashEmbedder
from tests.helpers.pipeline import NOW, note
from tests.integration.test_reindex import ALIAS, _service
from tests.integration.test_staleness import BEFORE, FIX_SHA, PUSH_ID, _normalized, _noted, _push

if TYPE_CHECKING:
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration
WS = "acme"


def _deployed_index(client: OpenSearch, model_id: str, dimension: int = 64, *, workspace: str | None = None) -> str:
    """The live index as an existing deployment has it: schema version 3's strict mapping, without
    any of the fields added in place since; the single index, or ``workspace``'s own."""
    body = index_body(dimension, model_id, replicas=0)
    for name in ADDED_IN_PLACE:
        del body["mappings"]["properties"][name]
    aliases = [ALIAS] if workspace is None else [workspace_alias(ALIAS, workspace), all_alias(ALIAS)]
    name = f"{aliases[0]}-000001"
    client.indices.create(index=name, body=body)
    client.indices.update_aliases(body={"actions": [{"add": {"index": name, "alias": alias}} for alias in aliases]})
    return name


def _workspaces_service(client: OpenSearch, embedder: Any, settings: Settings) -> Service:
    """A service over the index per workspace under the prefix ``ALIAS``."""
    return Service(OpenSearchStore(client, ALIAS, refresh="true"), embedder, settings, clock=lambda: NOW)


def _failure(obs_id: str, build: int) -> Any:
    """An E observation (a CI run), which carries a ``recurrence_key``."""
    content = f"Build {build} failed: test_login timed out"
    return note(
        obs_id, f"CI run {build} failed", content, observation_type="ci_run", occurred_at=NOW - timedelta(days=1)
    )


def _turn(obs_id: str, text: str) -> Any:
    """A C observation (a conversation turn), which may be promoted."""
    return note(obs_id, text, text, observation_type="conversation_turn", occurred_at=NOW - timedelta(hours=1))


def test_an_index_of_a_deployment_takes_the_new_fields_at_the_bootstrap_and_every_new_write_succeeds(
    osmem_url: str, settings: Settings
) -> None:
    # Given the live index of a deployment made before the new fields, of the current schema version
    client = OpenSearch(hosts=[osmem_url])
    embedder = HashEmbedder()
    live = _deployed_index(client, embedder.model_id)
    service = _service(client, embedder, settings)
    admin = OpenSearchAdmin(client, ALIAS, replicas=0)
    assert admin.meta(live)["schema_version"] == SCHEMA_VERSION and not admin.needs_reindex(64, embedder.model_id)
    # When new code writes before the bootstrap ran, Then its strict mapping refuses the E write
    # (what the stack's ordering prevents: the writers are deployed after the bootstrap)
    refused = service.index(WS, [_failure("ci-1", 101)])
    reason = refused.failed.get("ci-1", "")
    assert any(f"[{name}]" in reason for name in ("recurrence_key", "created_by")), refused.failed
    # When the bootstrap checks the index, Then it adds every new field in place (no reindex)
    assert admin.ensure_index(64, embedder.model_id) == f"ok, added {', '.join(sorted(ADDED_IN_PLACE))}"
    assert admin.ensure_index(64, embedder.model_id) == "ok"
    assert admin.live() == live and admin.versions() == [live]
    # Then an E write stores its recurrence key, and who wrote it
    written = service.index(WS, [_failure("ci-1", 101), _turn("c1", "retry policy: back off on 429")])
    assert not written.failed and sorted(written.created) == ["c1", "ci-1"]
    stored = read_one(service.store, WS, "ci-1")
    assert stored is not None and stored.recurrence_key is not None and stored.created_by == "system:cli"
    # And a promotion records who and why
    promoted = service.promote(WS, "c1", "every client follows it", "key:3f9a1c0b7e42", "r")
    assert (promoted.tier, promoted.promoted_by, promoted.promotion_reason) == (
        "A",
        "key:3f9a1c0b7e42",
        "every client follows it",
    )
    # And a push marks the note about its code stale, which filters.fresh leaves out
    written = service.index(WS, [_noted("before", BEFORE), *_normalized(_push())])
    assert not written.failed and PUSH_ID in written.created, written.failed
    marked = read_one(service.store, WS, "before")
    assert marked is not None and marked.possibly_stale == FIX_SHA
    body = {"query": "auth sessions edge middleware", "topK": 50, "mode": "keyword", "llmFilter": False}
    fresh = SearchRequest.model_validate(body | {"filters": {"fresh": True}})
    assert "before" not in {r.id for r in service.search(WS, fresh, "r").results}
    # And the maintenance archives the E observations (archived_at)
    assert lifecycle.archive_execution(service.store, NOW, NOW) == 2  # the CI run and the push


def test_a_bootstrap_that_reindexes_for_another_model_adds_the_fields_to_the_live_index_first(
    osmem_url: str, settings: Settings
) -> None:
    # Given a workspace's live index of a deployment, built for another model, holding a note
    client = OpenSearch(hosts=[osmem_url])
    old = HashEmbedder(dimension=32)
    live = _deployed_index(client, old.model_id, dimension=32, workspace=WS)
    _workspaces_service(client, old, settings).index(WS, [note("n1", "deploy note", "the deploy went fine")])
    admin = OpenSearchAdmin(client, workspace_alias(ALIAS, WS), replicas=0)
    new = HashEmbedder()
    with pytest.raises(ConfigurationError):
        admin.ensure_index(64, new.model_id)  # a reindex is needed: nothing added by the check
    # When the deploy's bootstrap runs with a deadline already past (the reindex left to the
    # schedule, as one too long for the deploy is)
    configured = settings.model_copy(
        update={"store": "opensearch", "opensearch_url": osmem_url, "opensearch_index": ALIAS, "opensearch_replicas": 0}
    )
    service = _workspaces_service(client, new, configured)
    outcome = bootstrap(service, deadline=0.0)
    # Then the live index, which the writers still write to until the swap, took the new fields
    assert f"added {', '.join(sorted(ADDED_IN_PLACE))} to the live index first" in outcome, outcome
    assert admin.live() == live
    properties = client.indices.get_mapping(index=live)[live]["mappings"]["properties"]
    assert set(ADDED_IN_PLACE) <= set(properties)
    # And an E write of the old model's writer lands there with its new fields
    written = _workspaces_service(client, old, settings).index(WS, [_failure("ci-2", 102)])
    assert not written.failed, written.failed
