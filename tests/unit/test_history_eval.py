"""What ``eval-history`` reads from a repository's own words: changelog entries citing pull
requests (the queries of "what changed") and the files a commit message names (the staleness truth)."""

from __future__ import annotations

from neural_memory.local.history_eval import changelog_entries, named_paths


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


def test_the_staleness_truth_reads_links_into_its_own_repository_only() -> None:
    known = {"CHANGES.rst", "src/app/cookies.py"}
    by_name = {"CHANGES.rst": {"CHANGES.rst"}, "cookies.py": {"src/app/cookies.py"}}
    text = (
        "Bump urllib3 ([Changelog](https://github.com/urllib3/urllib3/blob/main/CHANGES.rst)); "
        "see https://github.com/acme/web/blob/main/src/app/cookies.py#L3"
    )
    assert named_paths(text, known, by_name, "acme/web") == {"src/app/cookies.py": {"src/app/cookies.py"}}
