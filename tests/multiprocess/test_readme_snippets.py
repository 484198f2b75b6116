"""The README's Quick start as a new user runs it (issue 34): its shell blocks, verbatim, against a
fresh ``serve`` of the samples, each reply checked against what the README says of it, and the
CLI's ``search --json`` piped into a JSON parser. The MCP configuration block is run verbatim by
``tests/integration/test_mcp_server.py``. The one substitution: the server listens on a free port,
not 8080 (this machine is shared), so ``127.0.0.1:8080`` in a block reads as that port."""

from __future__ import annotations

import json
import os
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.processes import BIN
from tests.helpers.readme import readme_block
from tests.helpers.serve import Served, serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

SEPARATOR = "\x1e"
# Each curl's reply, apart: the block runs verbatim after this definition.
PRELUDE = f"curl() {{ command curl \"$@\"; printf '\\n{SEPARATOR}\\n'; }}\n"


def _run(block: str, served: Served, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = PRELUDE + block.replace("http://127.0.0.1:8080", served.url)
    command = ["bash", "-e", "-c", script]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def _replies(output: str) -> list[Any]:
    return [json.loads(part) for part in output.split(SEPARATOR) if part.strip()]


@pytest.fixture(scope="module")
def quick_start(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A folder laid out as the repository's root after `make serve`: `.neural-memory` (the data
    folder, with the demo key) and `.venv` (this interpreter's virtualenv)."""
    root = tmp_path_factory.mktemp("clone")
    (root / ".venv").symlink_to(BIN.parent)
    with serve(root / ".neural-memory") as served:
        yield served, root


def test_the_first_search_answers_as_the_readme_says(quick_start: tuple[Served, Path]) -> None:
    served, root = quick_start
    ran = _run(readme_block("sh", '"query": "why did the deploy fail", "topK": 5'), served, root)
    assert ran.returncode == 0, ran.stderr
    (reply,) = _replies(ran.stdout)
    assert reply["results"] and len(reply["results"]) <= 5, reply
    assert set(reply["latency"]) == {"total", "embed", "retrieval", "llmFilter", "rerank"}, reply
    assert {"llm", "degraded"} <= set(reply), reply


def test_every_quick_start_call_answers_what_its_comment_says(quick_start: tuple[Served, Path]) -> None:
    served, root = quick_start
    ran = _run(readme_block("sh", "# an answer grounded in the observations"), served, root)
    assert ran.returncode == 0, ran.stderr
    replies = _replies(ran.stdout)
    (filtered, answered, added, read, deleted, facets, decision, fresh, stale, experts, lineage, health, openapi) = (
        replies
    )
    # filters: every result of the filtered search is a github observation of tier C or E, explained
    assert filtered["results"], filtered
    assert all(r["source"] == "github" and r["tier"] in {"C", "E"} for r in filtered["results"]), filtered
    assert all(r.get("explain") for r in filtered["results"]), filtered
    # an answer grounded in the observations, every citation with its id, quote and url
    assert answered["answer"] and answered["citations"], answered
    assert all({"id", "quote", "url"} <= set(c) for c in answered["citations"]), answered
    # add an observation, read it back, delete it
    assert added["ids"] == ["note-1"], added
    assert read["title"] == "We deploy with blue-green switches", read
    assert deleted["deleted"] is True, deleted
    # how many observations hold each source, type, actor and tier
    # (each field under the other filters: the tiers of github's observations, C and E making the total)
    assert {c["value"] for c in facets["facets"]["sourceTypes"]} >= {"github", "vercel"}, facets
    tiers = {c["value"]: c["count"] for c in facets["facets"]["tiers"]}
    assert facets["total"] == tiers.get("C", 0) + tiers.get("E", 0) > 0, facets
    # what went stale: "possiblyStale": "7f3a9b2c…", and a fresh search leaves it out
    assert str(decision["possiblyStale"]).startswith("7f3a9b2c"), decision
    assert "decision-session-refresh-edge" not in [r["id"] for r in fresh["results"]], fresh
    # and fresh false lists only what went stale
    assert [r["id"] for r in stale["results"]] == ["decision-session-refresh-edge"], stale
    # who knows about it: actors ranked
    assert experts["experts"] and experts["experts"][0]["score"] == 1.0, experts
    # why it changed: the push, the pull request and other deployment events, oldest first
    times = [entry["occurredAt"] for entry in lineage["timeline"]]
    assert len(times) >= 3 and times == sorted(times), lineage
    # health, and the OpenAPI document
    assert health["status"] == "ok", health
    assert openapi["openapi"].startswith("3."), list(openapi)


def test_the_cli_block_runs_and_its_json_parses(quick_start: tuple[Served, Path]) -> None:
    served, root = quick_start
    block = readme_block("sh", "search deploy --json | python3 -m json.tool")
    lines = [line for line in block.splitlines() if line.strip()]
    outputs = []
    for line in lines:  # one at a time: each output is checked against its comment
        ran = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", line],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ},
        )
        assert ran.returncode == 0, (line, ran.stdout, ran.stderr)
        outputs.append(ran.stdout)
    ranked, piped, typo, asked, who = outputs
    # ranked results from the vercel source
    assert "vercel/" in ranked and "results in" in ranked, ranked
    # the API's JSON reply, through a JSON parser
    assert json.loads(piped)["results"], piped
    # 0 results, and why: the sources there are
    assert "0 results" in typo and "githb" in typo and "github" in typo, typo
    # the answer, then each source it cites: id, title, link, the quoted words
    answer, sources = asked.split("\nSources:\n")
    assert answer.strip() and "[1] " in sources and "https://" in sources and '    "' in sources, asked
    # who knows it, best first, each with the memories that show it
    assert who.startswith("1. ") and "(score 1.00:" in who and "   20" in who and "[" in who, who
