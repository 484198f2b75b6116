"""The name of a workspace's OpenSearch index: derived from the prefix and the workspace id,
legal for OpenSearch, bounded, never the same for two ids, never another's physical index."""

from __future__ import annotations

import re

from neural_memory.auth.keys import WORKSPACE_PATTERN
from neural_memory.stores.opensearch.index import _version_of
from neural_memory.stores.opensearch.workspace_indices import all_alias, pattern, workspace_alias

# OpenSearch: lower case, none of \ / * ? " < > | space , #, not starting with - _ +, at most 255 bytes
LEGAL = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
IDS = ["acme", "Acme", "ACME", "a.b", "a_b", "a-b", "a--b", "x" * 64, "x" * 63 + "y", "0", "9.9.9", "Zz_9-.q"]


def test_every_workspace_id_gets_a_legal_bounded_name_of_its_own() -> None:
    assert all(WORKSPACE_PATTERN.match(i) for i in IDS)  # ids the API accepts
    names = {i: workspace_alias("neural-memory", i) for i in IDS}
    for workspace_id, name in names.items():
        assert LEGAL.match(name) and len(name.encode()) <= 100, name
        # Under the prefix's pattern (the template's, the grants'), not the alias over them all
        assert name.startswith(pattern("neural-memory")[:-1]) and name != all_alias("neural-memory")
        # Readable: the id's letters are in it
        assert re.sub(r"[^a-z0-9]", "", workspace_id.lower())[:30] in name.replace("-", "")
    # Two ids never share a name, even when lower-casing or the slug makes them alike
    assert len(set(names.values())) == len(IDS)
    assert names["acme"] != names["Acme"] != names["ACME"] and names["a.b"] != names["a_b"] != names["a-b"]
    # The same id always gets the same name (every process finds the same index)
    assert workspace_alias("neural-memory", "acme") == workspace_alias("neural-memory", "acme")


def test_no_workspace_alias_is_a_physical_index_of_another() -> None:
    # A physical index is <alias>-NNNNNN; an alias ends in 16 hex, so it never reads as one
    names = [workspace_alias("nm", i) for i in [*IDS, "b-000001", "acme-000001"]]
    for alias in names:
        assert all(_version_of(other, alias) is None for other in names)
