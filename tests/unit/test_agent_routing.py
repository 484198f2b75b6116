"""An agent's event goes to the workspace its source names (``neural-memory.<workspace>``, the
only field the stack's per-workspace grant can check); the detail never moves it elsewhere."""

from __future__ import annotations

import copy

import pytest
from neural_memory.ingest.normalizers import UnsupportedEvent, event_sources, matches, normalize_eventbridge
from neural_memory.ingest.normalizers.generic import source_for, workspace_of
from neural_memory.ingest.routing import agent_workspaces, check_route, parse_routes, route_key, workspace_for

from tests.helpers.events import load_event

ROUTES = {"neural-memory:acme": "acme", "neural-memory:beta": "beta", "github:acme/console": "acme"}


def _note(source: str, **detail: object) -> dict[str, object]:
    event = copy.deepcopy(load_event("eventbridge/note"))
    event["source"] = source
    event["detail"].update(detail)
    return event


def test_the_source_names_the_workspace() -> None:
    assert source_for("beta.team") == "neural-memory.beta.team"
    assert workspace_of("neural-memory.beta.team") == "beta.team"
    assert [workspace_of(s) for s in ("neural-memory", "neural-memory.", "neural-memoryacme", "github")] == [None] * 4


def test_an_agent_event_is_filed_under_its_source_s_workspace() -> None:
    # Without a workspace in the detail, or with the same one, the source decides
    assert workspace_for(_note("neural-memory.beta"), ROUTES) == "beta"
    assert workspace_for(_note("neural-memory.acme", workspace="acme"), ROUTES) == "acme"
    # And the workspace key never reaches the observation
    (observation,) = normalize_eventbridge(_note("neural-memory.acme", workspace="acme")).observations
    assert "workspace" not in observation.model_dump(by_alias=True)


def test_a_detail_claiming_another_workspace_is_refused_not_filed() -> None:
    # Given acme's source and a detail naming beta (routed too): it lands nowhere
    with pytest.raises(UnsupportedEvent, match="detail.workspace 'beta' disagrees with the event's source"):
        workspace_for(_note("neural-memory.acme", workspace="beta"), ROUTES)
    with pytest.raises(UnsupportedEvent, match="disagrees"):
        workspace_for(_note("neural-memory.acme", workspace=["beta"]), ROUTES)


def test_an_unrouted_workspace_and_the_retired_bare_source_are_refused_with_the_reason() -> None:
    with pytest.raises(UnsupportedEvent, match="no workspace is configured for neural-memory:gamma"):
        workspace_for(_note("neural-memory.gamma"), ROUTES)
    with pytest.raises(UnsupportedEvent, match=r"'neural-memory' is no longer accepted.*neural-memory\.<workspace>"):
        workspace_for(_note("neural-memory", workspace="acme"), ROUTES)


def test_the_normalizers_accept_the_agent_family_by_prefix() -> None:
    (agents,) = [p for p in event_sources() if isinstance(p, dict)]
    assert agents == {"prefix": "neural-memory."}
    assert matches(agents, "neural-memory.acme") and not matches(agents, "neural-memory")
    assert matches("github", "github") and not matches("github", "github.acme")
    with pytest.raises(UnsupportedEvent, match="no normalizer for event source 'neural-memory'"):
        normalize_eventbridge(_note("neural-memory"))


def test_an_agent_route_names_its_own_workspace() -> None:
    check_route("neural-memory:beta.team", "beta.team")
    with pytest.raises(ValueError, match="'neural-memory:acme' must route to 'acme'"):
        check_route("neural-memory:acme", "beta")
    with pytest.raises(ValueError, match="ingest_routes.*must route to"):
        parse_routes({"neural-memory:acme": "beta"}, "ingest_routes")
    assert agent_workspaces(ROUTES) == ["acme", "beta"]
    assert route_key(_note("neural-memory.beta")) == "neural-memory:beta"
