"""Retrieval quality on conversational memory, in LoCoMo's layout (a ``*.json[.gz]`` list of
samples: ``conversation`` with ``session_<n>`` turn lists and ``session_<n>_date_time``, and ``qa``
with evidence turn ids): each conversation is indexed into its own workspace through the service,
one observation per turn (a chat turn as an agent's ``remember`` writes it: speaker as actor,
session, the session's date, tier A); every question of categories 1–4 is searched in its conversation's workspace and
scored by evidence recall@10 and hit@10, overall and per category."""

from __future__ import annotations

import gzip
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from neural_memory.models import ObservationIn, SearchRequest
from neural_memory.models.agent_notes import AgentNote
from neural_memory.models.chat_turns import CHAT_TURN_TYPE

if TYPE_CHECKING:
    from pathlib import Path

    from neural_memory.models import RerankMode, SearchMode
    from neural_memory.service import Service
    from neural_memory.settings import Settings

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TOP_K = 10
_SESSION = re.compile(r"^session_(\d+)$")
_TURN_ID = re.compile(r"^D\d+:\d+$")


@dataclass
class Question:
    """A question with the ids of the turns that hold its answer."""

    text: str
    category: int
    evidence: set[str]


@dataclass
class Conversation:
    """One conversation: its turns as observations, and its questions."""

    sample_id: str
    turns: list[ObservationIn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def is_conversation_dataset(folder: Path) -> bool:
    """Whether ``folder`` holds a LoCoMo-layout file (rather than a BEIR dataset)."""
    return any(folder.glob("*.json")) or any(folder.glob("*.json.gz"))


def session_time(text: str) -> datetime:
    """LoCoMo's session date, e.g. ``1:56 pm on 8 May, 2023`` (taken as UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load_conversations(folder: Path) -> list[Conversation]:
    """Every sample of the first ``*.json[.gz]`` file in ``folder``."""
    path = next(iter(sorted(folder.glob("*.json")) + sorted(folder.glob("*.json.gz"))))
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        samples = json.load(handle)
    return [_conversation(sample) for sample in samples]


def agent_turn(turn_id: str, speaker: str, session_id: str, when: datetime, text: str) -> ObservationIn:
    """One turn as an agent's ``remember`` writes a chat turn it wants remembered by meaning for
    good (``AgentNote``: the chat-turn type, source agent, the session, tier A; README, "Long-term
    conversation memory"): the conversations are months old, past the window of the default tier C."""
    note = AgentNote.model_validate(
        {
            "id": turn_id,
            "observationType": CHAT_TURN_TYPE,
            "tier": "A",
            "actorName": speaker,
            "sessionId": session_id,
            "occurredAt": when.isoformat(),
            "content": text,
        }
    )
    return ObservationIn.model_validate(note.observation(when))


def _conversation(sample: dict[str, Any]) -> Conversation:
    conversation = Conversation(sample_id=str(sample["sample_id"]))
    talk = sample["conversation"]
    for key in sorted((k for k in talk if _SESSION.match(k)), key=lambda k: int(k.split("_")[1])):
        number = int(key.split("_")[1])
        began = session_time(talk[f"{key}_date_time"])
        for position, turn in enumerate(talk[key]):
            text = str(turn.get("text") or "")
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            conversation.turns.append(
                agent_turn(
                    turn["dia_id"],
                    turn["speaker"],
                    f"{conversation.sample_id}-session-{number}",
                    began + timedelta(seconds=position),
                    text,
                )
            )
    for qa in sample["qa"]:
        category = int(qa.get("category", 0))
        evidence = {e for item in qa.get("evidence", []) for e in re.split(r"[;,\s]+", str(item)) if _TURN_ID.match(e)}
        if category in CATEGORIES and evidence:
            conversation.questions.append(Question(text=str(qa["question"]), category=category, evidence=evidence))
    return conversation


def evaluate(
    service: Service, conversations: list[Conversation], mode: SearchMode, rerank: RerankMode
) -> dict[str, Any]:
    """Index each conversation into its own workspace and score its questions."""
    from tqdm import tqdm

    recall: dict[int, list[float]] = {c: [] for c in CATEGORIES}
    hit: dict[int, list[float]] = {c: [] for c in CATEGORIES}
    questions = sum(len(c.questions) for c in conversations)
    turns = sum(len(c.turns) for c in conversations)
    with tqdm(total=turns, unit="turn", desc="indexing", file=sys.stderr) as bar:
        for conversation in conversations:
            for start in range(0, len(conversation.turns), 100):
                batch = conversation.turns[start : start + 100]
                service.index(conversation.sample_id, batch)
                bar.update(len(batch))
    with tqdm(total=questions, unit="q", desc=f"searching ({mode})", file=sys.stderr) as bar:
        for conversation in conversations:
            for question in conversation.questions:
                request = SearchRequest.model_validate(
                    {"query": question.text, "topK": TOP_K, "mode": mode, "rerank": rerank, "llmFilter": False}
                )
                found = {r.id for r in service.search(conversation.sample_id, request, "eval").results}
                recall[question.category].append(len(found & question.evidence) / len(question.evidence))
                hit[question.category].append(1.0 if found & question.evidence else 0.0)
                bar.update()
    every_recall = [v for values in recall.values() for v in values]
    every_hit = [v for values in hit.values() for v in values]
    return {
        "recall@10": sum(every_recall) / len(every_recall),
        "hit@10": sum(every_hit) / len(every_hit),
        "by_category": {
            CATEGORIES[c]: {"questions": len(recall[c]), "recall@10": _mean(recall[c]), "hit@10": _mean(hit[c])}
            for c in CATEGORIES
        },
        "questions": len(every_recall),
        "conversations": len(conversations),
    }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def run(folder: Path, mode: SearchMode, rerank: RerankMode, settings: Settings) -> dict[str, Any]:
    """Index ``folder``'s conversations into a temporary store (embeddings cached in
    ``settings.data_dir``) and score them."""
    from neural_memory.local.evaluation.temporary_service import evaluation_service

    conversations = load_conversations(folder)
    with evaluation_service(settings) as service:
        scores = evaluate(service, conversations, mode, rerank)
    return {**scores, "mode": mode, "rerank": rerank, "dataset": folder.name}
