"""`neural-memory eval` on LoCoMo-layout conversations: one workspace per conversation, a turn per
observation written as an agent's chat turn (speaker, session, date, no title, tier A), evidence
recall@10 and hit@10 per category."""

from __future__ import annotations

import gzip
import json
from typing import TYPE_CHECKING

import pytest
from neural_memory.local.cli import main
from neural_memory.local.evaluation.conversations import load_conversations, session_time

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a greyhound called Pixel last weekend!"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! I started pottery classes on Tuesdays."},
        ],
        "session_2_date_time": "10:04 am on 2 June, 2023",
        "session_2": [
            {"speaker": "Ana", "dia_id": "D2:1", "text": "Pixel loves the beach.", "blip_caption": "a dog on sand"},
            {"speaker": "Ben", "dia_id": "D2:2", "text": "My first bowl cracked in the kiln."},
        ],
    },
    "qa": [
        {"question": "Who adopted a greyhound?", "answer": "Ana", "evidence": ["D1:1"], "category": 4},
        {"question": "What class does Ben take?", "answer": "pottery", "evidence": ["D1:2; D2:2"], "category": 1},
        {"question": "Unanswerable?", "adversarial_answer": "x", "evidence": ["D1:1"], "category": 5},
        {"question": "No evidence?", "answer": "x", "evidence": ["D"], "category": 4},
    ],
}


def _dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "locomo-mini"
    folder.mkdir()
    with gzip.open(folder / "mini.json.gz", "wt", encoding="utf-8") as handle:
        json.dump([SAMPLE], handle)
    return folder


def test_turns_become_untitled_agent_turns_with_speaker_session_and_date(tmp_path: Path) -> None:
    (conversation,) = load_conversations(_dataset(tmp_path))
    first, _, photo, _ = conversation.turns
    assert (first.id, first.actor_name, first.session_id, first.title) == ("D1:1", "Ana", "conv-x-session-1", None)
    # written as an agent writes a chat turn it wants remembered by meaning for good
    assert (first.observation_type, first.source, first.tier) == ("conversation_turn", "agent", "A")
    assert first.occurred_at == session_time("1:56 pm on 8 May, 2023")
    assert photo.content.endswith("[shares a photo: a dog on sand]")
    # category 5 and questions without a usable evidence id are not retrieval questions
    assert [(q.category, q.evidence) for q in conversation.questions] == [(4, {"D1:1"}), (1, {"D1:2", "D2:2"})]


def test_eval_prints_recall_and_hit_per_category_and_a_json_last_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a LoCoMo-layout folder, When `neural-memory eval` scores it in keyword mode
    code = main(["eval", str(_dataset(tmp_path)), "--mode", "keyword", "--data-dir", str(tmp_path / "data")])
    out = capsys.readouterr().out.strip().splitlines()
    # Then it prints a summary, a line per category, and the scores as the last line's JSON
    result = json.loads(out[-1])
    assert code == 0 and result["questions"] == 2 and result["conversations"] == 1
    assert result["by_category"]["single-hop"] == {"questions": 1, "recall@10": 1.0, "hit@10": 1.0}
    assert result["by_category"]["multi-hop"]["questions"] == 1
    assert result["recall@10"] == pytest.approx((1.0 + result["by_category"]["multi-hop"]["recall@10"]) / 2)
    assert out[0].startswith("keyword (locomo-mini, 2 questions in 1 conversations): evidence recall@10")
