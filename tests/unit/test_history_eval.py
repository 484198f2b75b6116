"""What ``eval-history`` reads from a repository's own words: changelog entries citing pull
requests (the queries of "what changed") and the files a commit message names (the staleness truth)."""

from __future__ import annotations

from neural_memory.local.evaluation.history import _cited
from neural_memory.local.evaluation.history_truth import _most, changelog_entries, named_paths
from neural_memory.local.evaluation.imported_history import Imported


def test_changelog_entries_cite_prs_in_sphinx_myst_and_github_forms_and_keep_only_words() -> None:
    text = """## Version 8.5.0

- Add PowerShell completion support to
  the completion script. {issue}`2672` {pr}`3637`
- Fix :func:`parse_date` for zones. :issue:`12` :pr:`34`
- Drop Python 2 (#99)
- Cites nothing at all here
"""
    entries = changelog_entries(text)
    assert [(e.text, e.prs) for e in entries] == [
        ("Add PowerShell completion support to the completion script", (3637,)),
        ("Fix parse_date for zones", (34,)),
        ("Drop Python 2", (99,)),
    ]


def test_an_entry_counts_a_cited_pr_only_if_it_was_merged_by_the_end_of_its_release_year() -> None:
    # Given a changelog newest first: an unreleased version, one released in 2013, one without a
    # date (released before the one above it), one from 2008 whose numbers are a tracker's
    text = """## Unreleased

- Fix header value quoting (#400)

Version 0.9
-----------

Released on June 13th 2013, codename Planierraupe.

- Add the test client (#354)

Version 0.4.1
-------------

- Fixed `Headers.set` (#354).  Caused header
  duplication before.

## Version 0.4 (2008-11-23)

- Fixed the url adapter's dispatch (#318)
"""
    entries = changelog_entries(text)
    assert [(e.prs, e.released) for e in entries] == [((400,), None), ((354,), 2013), ((354,), 2013), ((318,), 2008)]
    # When the history holds PRs 400 and 354 (merged 2013) and 318 (merged 2013, after 2008)
    facts = Imported(prs={n: {"ids": {f"pr-{n}"}, "at": at} for n, at in ((400, "2024-01-02T00:00:00Z"),
                     (354, "2013-05-21T09:24:59Z"), (318, "2013-05-20T00:00:00Z"))})  # fmt: skip
    # Then each entry counts the PRs merged by the end of its year; 2008's cites none of GitHub's
    assert [_cited(e, facts) for e in entries] == [[400], [354], [354], []]
    # And a changelog oldest first keeps each version's own date, but an undated one takes none
    ascending = "## 1.0 (2008)\n\n- Add a thing (#318)\n\n## 2.0\n\n- Add more things (#354)\n\n## 3.0 (2014)\n"
    assert [e.released for e in changelog_entries(ascending)] == [2008, None]


def test_a_release_year_is_a_headings_or_a_released_lines_not_a_bullets() -> None:
    # Given calendar versions, a bullet that says "released", and one maintenance release of an
    # older line listed below a newer one of the year before (newest first still, mostly)
    text = """## 2020.12.1 (2021-01-05)

- Released the lock held since 2015 (#901)

## 5.0.0 (2019-06-28)

- Drop Python 2 support (#700)

## 4.6.11 (2020-06-04)

- Backport the fix for pipes (#710)

## 4.6.0

- Add the deprecation warnings (#600)

## 4.5.0 (2019-05-11)
"""
    # Then each entry has its version's year; the undated one takes the year above it
    assert [(e.prs, e.released) for e in changelog_entries(text)] == [
        ((901,), 2021),
        ((700,), 2019),
        ((710,), 2020),
        ((600,), 2020),
    ]


def test_the_staleness_truth_reads_links_into_its_own_repository_only() -> None:
    known = {"CHANGES.rst", "src/app/cookies.py"}
    by_name = {"CHANGES.rst": {"CHANGES.rst"}, "cookies.py": {"src/app/cookies.py"}}
    text = (
        "Bump urllib3 ([Changelog](https://github.com/urllib3/urllib3/blob/main/CHANGES.rst)); "
        "see https://github.com/acme/web/blob/main/src/app/cookies.py#L3"
    )
    assert named_paths(text, known, by_name, "acme/web") == {"src/app/cookies.py": {"src/app/cookies.py"}}


def test_a_files_top_author_is_everyone_tied_at_the_most_commits() -> None:
    # A file two people each touched twice has no one top author: either answer is right
    assert _most(["Ann", "Bo", "Ann", "Bo", "Cy"]) == ("Ann", "Bo")
    assert _most(["Bo", "Ann", "Bo"]) == ("Bo",)
    assert _most([]) == ()  # untouched in the window: no truth to score against
