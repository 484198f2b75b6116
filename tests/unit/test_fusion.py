"""Rank fusion: bounded, one candidate per observation, fair to never-embedded tiers."""

from __future__ import annotations

from datetime import UTC, datetime

from neural_memory.fusion import fuse
from neural_memory.models import Hit, ObservationRecord, Tier

T = datetime(2025, 12, 1, tzinfo=UTC)


def _hit(obs_id: str, score: float, tier: Tier = "A", chunk: int = 0) -> Hit:
    record = ObservationRecord(
        id=obs_id, source="github", source_type="push", observation_type="push", actor_name=None,
        occurred_at=T, ingested_at=T, expires_at=None, tier=tier, title=obs_id, content="", url=None,
        session_id=None, parent_id=None, metadata={}, content_hash="h",
    )  # fmt: skip
    return Hit(observation=record, chunk_no=chunk, score=score)


def test_first_in_both_lists_scores_one() -> None:
    # Given a document ranked first by both retrievers
    # When fused
    fused = fuse([_hit("a", 1.0), _hit("b", 0.5)], [_hit("a", 0.9), _hit("c", 0.4)])
    # Then it scores 1.0 and leads, and every score is in [0, 1]
    assert fused[0].observation.id == "a" and fused[0].fused == 1.0
    assert all(0.0 <= c.fused <= 1.0 for c in fused)
    assert {c.observation.id for c in fused} == {"a", "b", "c"}


def test_found_by_one_of_two_retrievers_is_at_most_half() -> None:
    # Given documents each found by a single retriever
    fused = {c.observation.id: c for c in fuse([_hit("lex", 1.0)], [_hit("vec", 0.8)])}
    # Then each scores at most 0.5 and keeps its own retriever's score
    assert fused["lex"].fused == 0.5 and fused["lex"].lexical == 1.0 and fused["lex"].vector is None
    assert fused["vec"].fused == 0.5 and fused["vec"].vector == 0.8


def test_never_embedded_tier_is_normalised_by_lexical_alone() -> None:
    # Given an E-tier observation, which the vector retriever cannot find by design
    fused = {c.observation.id: c for c in fuse([_hit("deploy", 1.0, tier="E")], [_hit("note", 0.8)])}
    # Then ranking first lexically is the best it can do, and it scores 1.0
    assert fused["deploy"].fused == 1.0
    assert fused["note"].fused == 0.5


def test_best_chunk_per_observation_and_ranks_count_observations() -> None:
    # Given two chunks of one observation in the vector list
    fused = fuse(None, [_hit("a", 0.9, chunk=2), _hit("a", 0.8, chunk=0), _hit("b", 0.7)])
    by_id = {c.observation.id: c for c in fused}
    # Then the observation appears once with its best chunk, and the next one is rank 2
    assert len(fused) == 2
    assert by_id["a"].chunk_no == 2 and by_id["a"].vector == 0.9
    assert by_id["b"].vector_rank == 2


def test_nothing_ran_gives_nothing() -> None:
    assert fuse(None, None) == []
