"""How a query reads as a question (``search/questions.py``): the frame comes off, what it asks
for stays; a query that is not a question of these forms is left as it was."""

from __future__ import annotations

import pytest
from neural_memory.search.questions import Question, read_question


@pytest.mark.parametrize(
    ("query", "kind", "subject", "year"),
    [
        ("why did the reload behaviour change", "why", "reload behaviour", None),
        (
            "Why does the dev server drop headers with underscores?",
            "why",
            "dev server drop headers with underscores",
            None,
        ),
        ("When did we start using watchfiles?", "when", "using watchfiles", None),
        ("when was the logfmt renderer added", "when", "logfmt renderer added", None),
        ("when do we start signing releases?", "when", "signing releases", None),
        ("when the logfmt renderer was added", "when", "logfmt renderer was added", None),
        ("Which PR added the proxy argument?", "which", "added the proxy argument", None),
        ("which pull request made Local use context variables", "which", "Local use context variables", None),
        ("What changed in 2023 about cookies?", "year", "cookies", 2023),
        ("what happened to the reloader in 2021", "year", "reloader", 2021),
        ("How did the reloader change in 2022?", "year", "reloader", 2022),
        ("What changed about how certifi gets imported?", "what", "certifi gets imported", None),
        ("can you tell me why the deploy failed?", "why", "deploy failed", None),
        ("who knows about websockets", "who", "websockets", None),
        ("Who should I ask about the URL parsing code?", "who", "URL parsing", None),
        ("Who's the expert on the dev console renderer?", "who", "dev console renderer", None),
        ("Who can review changes to password hashing?", "who", "password hashing", None),
        ("Who worked on URL routing the most?", "who", "URL routing", None),
        ("What was the reason for dropping Python 3.7?", "why", "dropping Python 3.7", None),
        ("How come the reloader stopped watching the cwd?", "why", "reloader stopped watching the cwd", None),
        ("In 2023, what changed in cookie handling?", "year", "cookie handling", 2023),
        ("Which PR was it that added socks support?", "which", "added socks support", None),
        ("Who is the best person to ask about the reloader?", "who", "reloader", None),
        ("Who would know about the reloader?", "who", "reloader", None),
        ("who are the main contributors to the debugger", "who", "debugger", None),
    ],
)
def test_the_frame_comes_off_and_what_it_asks_for_stays(query: str, kind: str, subject: str, year: int | None) -> None:
    assert read_question(query) == Question(kind=kind, subject=subject, year=year)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "query",
    [
        "cookie parsing",  # keywords
        "0-dimensional biomaterials show inductive properties.",  # a claim (SciFact)
        "stop watching the current directory when reload dirs are given",  # a change, described
        "What did Melanie paint recently?",  # asks for a thing, not a change
        "What is Caroline's identity?",
        "when are feature flags cleaned up",  # a schedule, not a change
        "When does the session token expire?",
        "When is Jon's grand opening?",
        "why?",  # nothing left once the frame is off
        "who knows",
    ],
)
def test_a_query_of_no_such_form_is_searched_as_written(query: str) -> None:
    assert read_question(query) is None


def test_only_a_change_question_asks_for_changes() -> None:
    asked = read_question("why did we drop python 2")
    assert asked is not None and asked.wants_changes
    who = read_question("who knows the test client")
    assert who is not None and not who.wants_changes


@pytest.mark.parametrize(
    ("query", "subject", "recent"),
    [
        ("who knows routing lately", "routing", True),
        ("Who currently maintains the reloader?", "reloader", True),
        ("who knows about websockets these days", "websockets", True),
        ("who should I ask about cookies right now?", "cookies", True),
        ("who has been working on the CLI lately?", "CLI", True),
        ("who knows routing", "routing", False),
        ("who knows the now-playing widget", "now-playing widget", False),  # a name, not a time
        ("who knows about today's build", "today's build", False),
        ("who knows the currently.py module lately.", "currently.py module", True),
        ("who knows NOW()", "NOW()", False),
        ("who knows the 'recently used' cache", "'recently used' cache", False),
        ("who owns auth now?", "auth", True),
    ],
)
def test_a_who_question_asked_about_now_says_so_and_keeps_its_subject(query: str, subject: str, recent: bool) -> None:
    asked = read_question(query)
    assert asked is not None and asked.kind == "who" and asked.subject == subject and asked.recent is recent


def test_only_a_who_question_reads_recency() -> None:
    asked = read_question("why did the reloader change recently")
    assert asked is not None and asked.kind == "why" and not asked.recent
