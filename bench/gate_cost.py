"""What the gate sends per call, by how many candidates it scores: characters of the request (system
prompt, tool schema, user message; ``gating.prompt_chars``) and the reply's token ceiling
(``max_tokens``), for candidates at the longest text the gate sends (``MAX_TEXT_CHARS``) and at a
short note. Offline and exact in characters; tokens need the provider's tokenizer (not here).

    python bench/gate_cost.py
"""

from __future__ import annotations

from datetime import UTC, datetime

from neural_memory.ingest.prepare import prepare
from neural_memory.models import Candidate, ObservationIn
from neural_memory.providers.llm.gating import MAX_TEXT_CHARS, max_output_tokens, prompt_chars
from neural_memory.settings import Settings

NOW = datetime(2025, 12, 14, tzinfo=UTC)
QUERY = "why did the production deploy fail after the env var change"


def _candidate(n: int, text: str) -> Candidate:
    note = ObservationIn.model_validate(
        {"id": f"o{n}", "source": "manual", "observationType": "note", "occurredAt": NOW.isoformat(),
         "title": f"deploy note {n}: what happened and why", "content": text}
    )  # fmt: skip
    settings = Settings()
    record = prepare(note, now=NOW, policy=settings.tier_policy, ttl_days=7, chunking=settings.chunking).record
    return Candidate(observation=record, chunk_no=0)


def main() -> None:
    long_text = ("The deploy failed because NEXT_PUBLIC_API_URL was missing in production. " * 40)[:MAX_TEXT_CHARS]
    short_text = "Preview deploy succeeded."
    print("candidates | request chars (1500-char texts) | request chars (short notes) | max output tokens")
    for count in (5, 6, 10, 20, 40):
        long_chars = prompt_chars(QUERY, [_candidate(n, long_text) for n in range(count)])
        short_chars = prompt_chars(QUERY, [_candidate(n, short_text) for n in range(count)])
        print(f"{count} | {long_chars} | {short_chars} | {max_output_tokens(count)}")


if __name__ == "__main__":
    main()
