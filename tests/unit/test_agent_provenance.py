"""Whose and which repository's a memory an agent saves is (``agent_tools/provenance.py``): the
session's defaults fill what the agent left out, never what it wrote, and a header that is not
what it should be is dropped."""

from __future__ import annotations

from neural_memory.agent_tools.provenance import Provenance, from_headers


def test_the_sessions_repository_and_person_fill_only_what_the_agent_left_out() -> None:
    session = Provenance("acme/console", "Ann Lee")
    bare = {"content": "We decided to cap retries at five.", "observationType": "decision"}
    own = {"content": "x", "actorName": "Bo Chen", "metadata": {"repo": "acme/api", "team": "core"}}
    other_metadata = {"content": "y", "metadata": {"team": "core"}}
    assert session.apply([bare, own, other_metadata]) == [
        {**bare, "actorName": "Ann Lee", "metadata": {"repo": "acme/console"}},
        own,
        {"content": "y", "actorName": "Ann Lee", "metadata": {"team": "core", "repo": "acme/console"}},
    ]
    assert bare == {
        "content": "We decided to cap retries at five.",
        "observationType": "decision",
    }  # not changed in place
    assert Provenance().apply([bare]) == [bare]


def test_headers_are_read_case_insensitively_and_what_is_not_a_repository_or_a_name_is_dropped() -> None:
    assert from_headers({"x-neural-memory-repository": "acme/console", "X-NEURAL-MEMORY-ACTOR": " Ann  Lee "}) == (
        Provenance("acme/console", "Ann Lee")
    )
    assert from_headers({"X-Neural-Memory-Repository": "../../etc", "X-Neural-Memory-Actor": "   "}) == Provenance()
    assert from_headers({"X-Neural-Memory-Repository": "acme/console/extra"}) == Provenance()
    assert from_headers({}) == Provenance()
    assert Provenance.of("a/b", "x" * 500).actor == "x" * 200
