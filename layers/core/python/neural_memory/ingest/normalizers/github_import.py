"""What ``neural-memory import github`` adds to a pull request payload (``import``) beyond what a
webhook carries: reviewers, merger, commit count, changed files, commit messages and the names of
the code changed, made into metadata and into text the pull request's content ends with."""

from __future__ import annotations

import json
import re
from typing import Any

from neural_memory.domain.chunking import DEFINITIONS_LINE, PATHS_LINE
from neural_memory.ingest.normalizers.base import first_line
from neural_memory.ingest.normalizers.github_paths import later_names, listed_paths, touched_paths

# What an import adds to a pull request's content (its commits' subjects and changed paths), kept
# in metadata too so a later webhook delivery, which carries none of it, keeps it
# (``ingest.lifecycle.carried_over``).
IMPORTED_TEXT = "importedText"
IMPORTED_FACTS = ("reviewers", "mergedBy", "commits", IMPORTED_TEXT)
MAX_IMPORTED_COMMITS = 50
MAX_IMPORTED_FILES = 100
MAX_IMPORTED_DEFINITIONS = 30
# What a function's name can be (an event on the bus can say anything under ``import``).
_NAME = re.compile(r"[A-Za-z_$][\w$]{0,199}")
# JSON characters of the imported text: metadata holds it, within ``MAX_METADATA_BYTES`` in all.
MAX_IMPORTED_TEXT = 12_000
MAX_COMMIT_BODY = 500  # characters of one commit's body in a pull request's content


def imported_facts(payload: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """What only ``neural-memory import github`` puts in a pull request payload (``import``: the
    reviewers, the merger, the commit count and the changed files, read from the REST API): extra
    metadata and code refs. A webhook carries no ``import``, so its observation is unchanged."""
    facts = payload.get("import")
    if not isinstance(facts, dict):
        return {}, []
    metadata: dict[str, Any] = {}
    reviewers = facts.get("reviewers")
    if isinstance(reviewers, list):
        metadata["reviewers"] = [r for r in reviewers if isinstance(r, str)]
    if isinstance(facts.get("mergedBy"), str):
        metadata["mergedBy"] = facts["mergedBy"]
    if isinstance(facts.get("commits"), int) and not isinstance(facts["commits"], bool):
        metadata["commits"] = facts["commits"]
    files = facts.get("files")
    paths = touched_paths([{"modified": files}]) if isinstance(files, list) else []
    messages = facts.get("commitMessages")
    commits = (
        [m for m in messages if isinstance(m, str) and m.strip()][:MAX_IMPORTED_COMMITS]
        if isinstance(messages, list)
        else []
    )
    names = facts.get("definitions")
    defined = (
        [n.strip() for n in names if isinstance(n, str) and _NAME.fullmatch(n.strip())][:MAX_IMPORTED_DEFINITIONS]
        if isinstance(names, list)
        else []
    )
    text = _imported_text(commits, defined, paths[:MAX_IMPORTED_FILES], later_names(payload))
    if text:
        metadata[IMPORTED_TEXT] = text
    return metadata, paths


def _imported_text(commits: list[str], defined: list[str], paths: list[str], later: dict[str, str]) -> str:
    """What it did, as its content says it: the commits, the code changed and the paths. Metadata
    holds it too, and has a size limit: when it would not fit, what says least goes first (the
    commits' bodies, then the names of the code), then lines from the end."""
    code = f"{DEFINITIONS_LINE}{', '.join(defined)}" if defined else ""
    where = f"{PATHS_LINE}{listed_paths(paths, later)}" if paths else ""

    def joined(lines: list[str], code: str) -> str:
        listed = "Commits:\n" + "\n".join(lines) if lines else ""
        return "\n".join(part for part in (listed, code, where) if part).strip()

    text = joined([_commit_line(m) for m in commits], code)
    if _fits(text):
        return text
    subjects = [_commit_line(m, body=False) for m in commits]
    for text in (joined(subjects, code), joined(subjects, "")):
        if _fits(text):
            return text
    kept = text.split("\n")
    while kept and not _fits("\n".join(kept)):
        kept.pop()
    return "\n".join(kept)


def _fits(text: str) -> bool:
    """Whether ``text`` fits the imported text's share of metadata, as JSON."""
    return len(json.dumps(text)) <= MAX_IMPORTED_TEXT


# What a commit message carries beyond its words: sign-offs and co-authors, Subversion's and
# Mercurial's conversion notes, a cherry-pick's origin.
_TRAILER = re.compile(
    r"^(?:[\w-]+-by:|change-id:|git-svn-id:|\(cherry picked from |--hg--$|(?:branch|rename|extra)\s*:)", re.IGNORECASE
)


def _commit_line(message: str, *, body: bool = True) -> str:
    """A commit as the pull request's content lists it: ``- subject``, then (with ``body``) what
    its body says (trailers dropped, whitespace collapsed, at most ``MAX_COMMIT_BODY`` characters)."""
    subject, _, rest = message.strip().partition("\n")
    said = " ".join(
        " ".join(line.split()) for line in rest.splitlines() if line.strip() and not _TRAILER.match(line.strip())
    )
    return f"- {first_line(subject)}" + (f"\n  {said[:MAX_COMMIT_BODY].rstrip()}" if said and body else "")
