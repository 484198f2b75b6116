"""What ``import git`` reads of a commit's diff: the functions and classes it changed, in the
source files only, the most edited first."""

from __future__ import annotations

import pytest
from neural_memory.local.history.definitions import MAX_DEFINITIONS, DiffDefinitions, defined_name


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("def quote_header_value(value, allow_token=True):", "quote_header_value"),
        ("    async def send(self, request):", "send"),
        ("class Headers(MutableMapping):", "Headers"),
        ("func (c *Client) Do(req *Request) (*Response, error) {", "Do"),
        ("func main() {", "main"),
        ("type Client struct {", "Client"),
        ("export default async function handler(req, res) {", "handler"),
        ("pub(crate) fn parse_header(input: &str) -> Header {", "parse_header"),
        ("impl<T> Display for Headers<T> {", "Headers"),
        ("public static final class Builder {", "Builder"),
        ("suspend fun fetch(url: String): Response {", "fetch"),
        ("  def self.build(options)", "build"),
        ("  defp parse(value) do", "parse"),
        ("local function trim(s)", "trim"),
        ("    def __init__(self):", None),
        ("    return define(value)", None),
        ("# the class of cookies we keep", None),
        ("    module level helper for the parser", None),  # a docstring's words
        ("struct stat st;", None),
        ("export default class extends Base {", None),
    ],
)
def test_a_line_names_what_it_defines(line: str, name: str | None) -> None:
    assert defined_name(line) == name


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("static struct cache_entry *lookup(const char *key)", "lookup"),
        ("int helper(int a) {", "helper"),
        ("public void run() throws IOException {", "run"),
        ("    render() {", "render"),
        ("if (ready) {", None),
        ("describe('cookies', () => {", None),
    ],
)
def test_a_c_like_hunk_header_names_the_function_its_signature_declares(header: str, name: str | None) -> None:
    assert defined_name(header, signature=True) == name


DIFF = """diff --git a/CHANGES.rst b/CHANGES.rst
--- a/CHANGES.rst
+++ b/CHANGES.rst
@@ -3,0 +4 @@ Version 3.1
+-   def quote_everything quotes the empty string.
diff --git a/src/werkzeug/http.py b/src/werkzeug/http.py
--- a/src/werkzeug/http.py
+++ b/src/werkzeug/http.py
@@ -10 +10 @@ def quote_header_value(value, allow_token=True):
-    if not value:
+    if value == "":
@@ -20,0 +21,3 @@ def quote_header_value(value, allow_token=True):
+
+def unquote_header_value(value):
+    return value
@@ -40,2 +43 @@ class Headers:
-    def __init__(self):
-        pass
+    pass
diff --git a/docs/http.md b/docs/http.md
--- a/docs/http.md
+++ b/docs/http.md
@@ -1 +1 @@ class Nothing
-def old_docs_example():
+def new_docs_example():
"""


def test_a_commit_changed_the_definitions_its_source_hunks_are_in_or_define() -> None:
    # Given the diffs of two commits: a changelog, a source file, a Markdown page; then nothing
    reader = DiffDefinitions()
    reader.start("a" * 40)
    for line in DIFF.splitlines(keepends=True):
        reader.feed(line)
    reader.start("b" * 40)
    for line in ["diff --git a/README b/README\n", "@@ -1 +1 @@ def readme\n", "+words\n"]:
        reader.feed(line)
    found = reader.finish()
    # Then the first changed what its source hunks were inside and what it defined: the function
    # added after quote_header_value is that hunk's, not quote_header_value's (edited once, in
    # the first hunk); __init__'s lines are Headers'; the changelog and the page name nothing
    assert found == {"a" * 40: ["quote_header_value", "unquote_header_value", "Headers"]}
    # And an edit inside a function counts for it each time
    reader = DiffDefinitions()
    reader.start("c" * 40)
    for line in DIFF.splitlines(keepends=True)[:10]:
        reader.feed(line)
    reader.feed("@@ -30 +31 @@ def unquote_header_value(value):\n")
    reader.feed("+    return value.strip()\n")
    assert reader.finish() == {"c" * 40: ["quote_header_value", "unquote_header_value"]}


def test_a_commit_keeps_its_most_edited_definitions_only() -> None:
    reader = DiffDefinitions()
    reader.start("c" * 40)
    reader.feed("diff --git a/big.py b/big.py\n")
    for n in range(MAX_DEFINITIONS + 10):
        for _ in range(1 + (n == MAX_DEFINITIONS + 5)):
            reader.feed(f"@@ -{n} +{n} @@ def step_{n}():\n")
            reader.feed("-    x = 1\n")
    names = reader.finish()["c" * 40]
    assert len(names) == MAX_DEFINITIONS and names[0] == f"step_{MAX_DEFINITIONS + 5}"
