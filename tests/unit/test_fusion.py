"""Fusion: bounded, one candidate per observation, fair to never-embedded tiers, both methods."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from neural_memory.models import Hit, ObservationRecord, Tier
from neural_memory.search.fusion import FusionMethod, fuse

T = datetime(2025, 12, 1, tzinfo=UTC)


def _hit(obs_id: str, score: float, tier: Tier = "A", chunk: int = 0) -> Hit:
    record = ObservationRecord(
        id=obs_id, source="github", source_type="push", observation_type="push", actor_name=None,
        occurred_at=T, ingested_at=T, expires_at=None, tier=tier, title=obs_id, content="", url=None,
        session_id=None, parent_id=None, metadata={}, content_hash="h",
    )  # fmt: skip
    return Hit(observation=record, chunk_no=chunk, score=score)


@pytest.mark.parametrize("method", ["convex", "rrf"])
def test_first_in_both_lists_leads_and_scores_are_bounded(method: FusionMethod) -> None:
    # Given a document ranked first by both retrievers with top scores
    fused = fuse([_hit("a", 1.0), _hit("b", 0.5)], [_hit("a", 1.0), _hit("c", 0.4)], method=method)
    # Then it leads with 1.0, and every score is in [0, 1]
    assert fused[0].observation.id == "a" and fused[0].fused == 1.0
    assert all(0.0 <= c.fused <= 1.0 for c in fused)
    assert {c.observation.id for c in fused} == {"a", "b", "c"}


def test_convex_is_alpha_weighted_and_scales_each_side_by_the_querys_best() -> None:
    # Given a lexical-only and two vector-only documents (the best cosine 0.6, the floor 0.2)
    lexical, vector = [_hit("lex", 1.0)], [_hit("vec", 0.6), _hit("far", 0.4)]
    fused = {c.observation.id: c for c in fuse(lexical, vector, alpha=0.5, min_similarity=0.2)}
    # Then lexical counts 0.5, the best vector hit 0.5, one halfway from the floor to it 0.25
    assert fused["lex"].fused == pytest.approx(0.5)
    assert fused["vec"].fused == pytest.approx(0.5)
    assert fused["far"].fused == pytest.approx(0.25)
    # And each keeps its own retriever's raw score
    assert fused["lex"].lexical == 1.0 and fused["vec"].vector == 0.6


def test_missing_from_a_list_cut_at_the_limit_scores_that_lists_last_entry_not_zero() -> None:
    # Given "lex" ranked first lexically but absent from a vector list that was cut at the limit
    lexical, vector = [_hit("lex", 1.0), _hit("both", 0.5)], [_hit("vec", 0.8), _hit("both", 0.5)]
    cut = {c.observation.id: c.fused for c in fuse(lexical, vector, min_similarity=0.2, cut=(False, True))}
    whole = {c.observation.id: c.fused for c in fuse(lexical, vector, min_similarity=0.2, cut=(False, False))}
    # Then it takes the cut list's lowest (0.5: halfway from the floor to the best), while "vec",
    # missing from a lexical list that was not cut (nothing else matched), scores zero lexically
    assert cut["lex"] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert whole["lex"] == pytest.approx(0.5) and cut["vec"] == whole["vec"] == pytest.approx(0.5)


def test_conversational_cosines_weigh_as_much_as_document_ones() -> None:
    # Given the same ranking, once with the cosines of abstracts and once with those of chat
    # turns (each the same fraction of the way from the floor to the query's best)
    documents = fuse([_hit("b", 1.0), _hit("a", 0.4)], [_hit("a", 0.8), _hit("b", 0.5)], min_similarity=0.2)
    chat = fuse([_hit("b", 1.0), _hit("a", 0.4)], [_hit("a", 0.5), _hit("b", 0.35)], min_similarity=0.2)
    # Then the fused order and scores are the same: only the query's own scale matters
    assert [(c.observation.id, round(c.fused, 6)) for c in documents] == [
        (c.observation.id, round(c.fused, 6)) for c in chat
    ]


def test_rrf_found_by_one_of_two_retrievers_is_at_most_half() -> None:
    fused = {c.observation.id: c for c in fuse([_hit("lex", 1.0)], [_hit("vec", 0.8)], method="rrf")}
    assert fused["lex"].fused == 0.5 and fused["vec"].fused == 0.5


@pytest.mark.parametrize("method", ["convex", "rrf"])
def test_never_embedded_tier_rests_on_lexical_alone(method: FusionMethod) -> None:
    # Given an E-tier observation, which the vector retriever cannot find by design
    fused = {c.observation.id: c for c in fuse([_hit("deploy", 1.0, tier="E")], [_hit("note", 0.9)], method=method)}
    # Then ranking first lexically is the best it can do, and it scores 1.0
    assert fused["deploy"].fused == 1.0


def test_single_retriever_modes_use_that_retriever_alone() -> None:
    assert fuse([_hit("a", 0.8)], None)[0].fused == pytest.approx(0.8)
    assert fuse(None, [_hit("a", 0.6), _hit("b", 0.4)], min_similarity=0.2)[1].fused == pytest.approx(0.5)


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
