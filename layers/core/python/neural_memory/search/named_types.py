"""Observation types a query names: "the push that capped waitlist offers", "the production deploy
of the waitlist", "the pull request that added exports".

The tier boosts (``NM_TIER_BOOSTS``) are a prior for a query that does not say what kind of record
it wants: architectural notes first, execution events last. A query that names a kind asks for
it, and the prior should not hold it back: in the pipeline's tier stage, a candidate whose type
the query names is boosted as the most boosted tier is. Without this a push, which has only a
lexical score, loses to any design note or release about the same change, whatever the question.

The words are the built-in types' own names (those of ``tiers.DEFAULT_POLICY``, which the
normalizers write) with their plural and verb forms, matched as whole words in any case. Types a
client invents are named by none of them, and a query that names no type ranks exactly as before.
"""

from __future__ import annotations

import re

_DEPLOYMENTS = frozenset({"deployment_created", "deployment_succeeded", "deployment_error", "deployment_canceled"})
_PULL_REQUESTS = frozenset({"pull_request_opened", "pull_request_merged", "pull_request_closed"})

#: Each phrase (a regular expression matched as whole words, any case) and the types it names.
TYPE_PHRASES: tuple[tuple[str, frozenset[str]], ...] = (
    (r"push(?:es|ed)?|commits?", frozenset({"push"})),  # a push is the commits it carries
    (r"deploy(?:s|ed|ing|ments?)?", _DEPLOYMENTS),
    (r"pull[ -]requests?|PRs?", _PULL_REQUESTS),
    (r"issues?", frozenset({"issue_opened", "issue_closed"})),
    (r"comments?", frozenset({"issue_comment"})),
    (r"CI runs?", frozenset({"ci_run"})),
    (r"releases?", frozenset({"release"})),
    (r"decisions?", frozenset({"decision"})),
    (r"ADRs?", frozenset({"adr"})),
    (r"design notes?", frozenset({"design_note"})),
)
_COMPILED = tuple((re.compile(rf"\b(?:{phrase})\b", re.IGNORECASE), types) for phrase, types in TYPE_PHRASES)


def named_types(query: str) -> frozenset[str]:
    """The observation types ``query`` names (empty when it names none)."""
    named: set[str] = set()
    for pattern, types in _COMPILED:
        if pattern.search(query):
            named |= types
    return frozenset(named)
