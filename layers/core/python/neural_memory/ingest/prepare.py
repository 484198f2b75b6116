"""From a validated ``ObservationIn`` to the record and chunks a store writes."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from neural_memory.domain.chunking import (
    DEFAULT_CHUNKING,
    MAX_EMBEDDED_PASSAGES,
    Chunking,
    chunk_text,
    without_path_lists,
)
from neural_memory.domain.ids import content_hash, derived_id, recurrence_key
from neural_memory.domain.record_rules import CLAIM_TYPES
from neural_memory.domain.text_refs import text_refs
from neural_memory.domain.tiers import embeds, expiry_for, tier_for
from neural_memory.models import MAX_CODE_PATHS, Chunk, ObservationIn, ObservationRecord
from neural_memory.stores.base import IndexedObservation

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from neural_memory.models import Tier
    from neural_memory.models.records import ChunkRole


_RESOLVED = {
    "id",
    "source_type",
    "title",
    "ingested_at",
    "expires_at",
    "tier",
    "content_hash",
    "code_refs",
    "recurrence_key",
}
_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")  # owner/name, as CodeRef takes it
TITLE_WORDS = 12  # a derived title: the first words of the content
_COPIED = (set(ObservationRecord.model_fields) & set(ObservationIn.model_fields)) - _RESOLVED


def resolved_title(observation: ObservationIn) -> str:
    """The client's title, or who said it and the first ``TITLE_WORDS`` words of the content (a
    chat turn or an agent's note has no title of its own). The speaker matters: "what did Caroline
    research" is answered by Caroline's own turns, which never name her."""
    return observation.title or derived_title(observation.content, observation.actor_name)


def derived_title(content: str, actor_name: str | None) -> str:
    """The title of an observation given none: who said it and the first words of ``content``."""
    words = content.split(maxsplit=TITLE_WORDS)  # the rest in one piece: content runs to 200,000 characters
    title = " ".join(words[:TITLE_WORDS])[:200] + ("…" if len(words) > TITLE_WORDS else "")
    return f"{actor_name}: {title}" if actor_name else title


def summarised_by_title(record: ObservationRecord) -> bool:
    """Whether the record's title was written as a summary of content it does not repeat (a pull
    request's title over its commits, an article's over its abstract), not derived from it."""
    content = record.content
    return bool(content) and not content.isspace() and record.title != derived_title(content, record.actor_name)


def observation_id(observation: ObservationIn) -> str:
    """The client's id, or one derived from the source event's identity."""
    if observation.id:
        return observation.id
    return derived_id(
        observation.source,
        observation.source_type,
        observation.observation_type,
        observation.url,
        observation.occurred_at.isoformat(),
        resolved_title(observation),
    )


def prepare(
    observation: ObservationIn,
    *,
    now: datetime,
    policy: Mapping[str, Tier],
    ttl_days: float,
    chunking: Chunking = DEFAULT_CHUNKING,
    redactions: Sequence[str] = (),
) -> IndexedObservation:
    """Resolve id, tier and expiry, stamp ``ingested_at``, hash the indexed content and cut it
    into chunks; ``redactions``: what redaction took out of it (``field:kind`` each)."""
    tier = tier_for(observation.observation_type, observation.tier, policy)
    # Every field the client may send is copied as sent; the rest is resolved here.
    copied = observation.model_dump(include=_COPIED)
    title = resolved_title(observation)
    record = ObservationRecord(
        **copied,
        id=observation_id(observation),
        source_type=observation.source_type or observation.observation_type,
        title=title,
        ingested_at=now,
        expires_at=expiry_for(tier, observation.occurred_at, ttl_days),
        tier=tier,
        code_refs=code_ref_keys(observation, title),
        content_hash=indexed_hash(title, observation.content, observation.url, tier, observation.metadata),
        recurrence_key=recurrence_key(title, observation.content) if tier == "E" else None,
        redactions=list(redactions) or None,
    )
    return chunked(record, chunking, now)


def indexed_hash(title: str, content: str, url: str | None, tier: Tier, metadata: Mapping[str, object]) -> str:
    """A record's ``content_hash``: of everything that is indexed (equal: nothing indexed changed)."""
    return content_hash(title, content, url, tier, json.dumps(metadata, sort_keys=True, default=str))


def code_ref_keys(observation: ObservationIn, title: str = "") -> list[str] | None:
    """Each path of the observation's ``codeRefs`` as ``repository:path``, once, in order; for a
    claim, then the paths its title and content name (``engineering.text_refs``: in
    ``metadata.repo`` when it names one, else in any repository)."""
    keys = [f"{ref.repository}:{path}" for ref in observation.code_refs or () for path in ref.paths]
    if observation.observation_type in CLAIM_TYPES:
        repo = observation.metadata.get("repo")
        named = repo if isinstance(repo, str) and _REPOSITORY.match(repo) else None
        keys += text_refs(f"{title}\n{observation.content}", named)
    return list(dict.fromkeys(keys))[:MAX_CODE_PATHS] or None


def chunked(
    record: ObservationRecord, chunking: Chunking = DEFAULT_CHUNKING, now: datetime | None = None
) -> IndexedObservation:
    """The record with its content cut into chunks (each searchable, each pointing back to it):
    at ingestion, and again when a reindex rebuilds an index from the stored records.

    Content that fits one passage (or is never embedded) is cut once, each chunk searched both
    ways. Longer content is cut into passages for the vector side (numbered first, so chunk 0 of
    an embedded observation always has a vector) and windows for the lexical side after them. The
    passages leave out lists of paths (``chunking.PATHS_LINE``: searched by keyword only). With
    ``now``, a C observation already past its window is cut as never embedded.

    An embedded observation whose title summarises it (``summarised_by_title``) also gets a
    passage of its title alone (empty text: the embedder reads the title before every chunk),
    after the others. A query that says what the title says meets it there whole, where the
    title and the content read together as the content: a pull request's title over its commit
    subjects, even two of them. Changelog→PR semantic recall@10 of imported pull requests rose
    by 2-4 points on four real histories (by less than half that when only titles over 32 tokens
    or more of content had one); SciFact and LoCoMo did not move (docs/benchmarks.md, "A passage
    of the title").
    """
    content = record.content
    embedded = embeds(record, now)
    title = embedded and chunking.title_passages and summarised_by_title(record)
    titled: list[tuple[str, ChunkRole]] = [("", "passage")] if title else []
    if chunking.passage_tokens < chunking.tokens and embedded:
        meaning = without_path_lists(content)  # a list of paths is searched by keyword only
        titled = titled if meaning.strip() else []  # chunk 0 embeds the title alone already
        passages = chunk_text(meaning, chunking.passage_tokens, min(chunking.overlap, chunking.passage_tokens // 2))
        passages = passages[:MAX_EMBEDDED_PASSAGES]  # the rest of a long text: by keyword only
        if len(passages) == 1 and meaning == content:  # fits one passage, so one window: one chunk
            return _numbered(record, [(passages[0], "both"), *titled])
        windows = chunk_text(content, chunking.tokens, chunking.overlap)
        pieces = [*((t, "passage") for t in passages), *titled, *((t, "lexical") for t in windows)]
        return _numbered(record, pieces)
    windows = chunk_text(content, chunking.tokens, chunking.overlap)
    return _numbered(record, [*((t, "both") for t in windows), *titled])


def _numbered(record: ObservationRecord, pieces: list[tuple[str, ChunkRole]]) -> IndexedObservation:
    """The record with its pieces (text, role) as chunks numbered in order."""
    chunks = [Chunk(chunk_no=n, text=text, role=role) for n, (text, role) in enumerate(pieces)]
    return IndexedObservation(record=record, chunks=chunks)
