"""The code a claim names in its words (``engineering.text_refs``)."""

from __future__ import annotations

import pytest
from neural_memory.domain.text_refs import paths_in_text, suffixes, text_refs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The parser in `src/werkzeug/formparser.py` now streams.", ["src/werkzeug/formparser.py"]),
        ("Fix http.py and ./setup.py; see docs/changes.rst.", ["http.py", "setup.py", "docs/changes.rst"]),
        (
            "Moved the checks to `src/auth/` and .github/workflows/tests.yml",
            [".github/workflows/tests.yml", "src/auth"],
        ),
        # Not paths: a URL, an email, a dotted module, a version, an abbreviation
        ("See https://github.com/a/b/blob/main/x.py, mail me@host.py, werkzeug.http in 2.0.1, e.g. this", []),
        (
            "Fix MANIFEST.in and ext/Vim/jinja.vim; requirements/tests.in",
            ["MANIFEST.in", "ext/Vim/jinja.vim", "requirements/tests.in"],
        ),
        ("", []),
    ],
)
def test_paths_named_in_text(text: str, expected: list[str]) -> None:
    assert paths_in_text(text) == expected


def test_a_ref_names_its_repository_when_known_and_a_path_has_every_tail() -> None:
    assert text_refs("touches `a/b.py`", "acme/api") == ["acme/api:a/b.py"]
    assert text_refs("touches b.py", None) == ["*:b.py"]
    assert suffixes(["acme/api:src/a/b.py"]) == [
        "*:src/a/b.py",
        "acme/api:a/b.py",
        "*:a/b.py",
        "acme/api:b.py",
        "*:b.py",
    ]


def test_a_github_link_names_a_file_in_the_repository_it_links_to() -> None:
    text = (
        "See https://github.com/pallets/jinja/blob/3.1.x/src/jinja2/lexer.py#L10 and "
        "[Changelog](https://github.com/urllib3/urllib3/blob/main/CHANGES.rst)."
    )
    assert text_refs(text, "pallets/jinja") == ["pallets/jinja:src/jinja2/lexer.py", "urllib3/urllib3:CHANGES.rst"]
    assert paths_in_text(text) == []  # a link is not a path of the claim's own repository


def test_a_link_or_a_path_the_api_could_not_show_is_not_read() -> None:
    text = (
        f"https://github.com/caf\u00e9/x/blob/main/a.py and src/{'a' * 600}.py and "
        f"https://github.com/o/r/blob/main/{'b' * 600}.py"
    )
    assert text_refs(text, "acme/api") == []


def test_a_stored_ref_the_api_cannot_show_is_left_out_of_the_reply() -> None:
    from neural_memory.engineering.staleness import code_refs_out

    shown = code_refs_out(["caf\u00e9/x:a.py", f"acme/api:{'a' * 600}.py", "acme/api:ok.py", "*:b.py"])
    assert [(ref.repository, ref.paths) for ref in shown or []] == [("acme/api", ["ok.py"])]
