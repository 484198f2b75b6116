"""The persistent embedding cache: hits by (model, text), separate per model, safe when damaged."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from neural_memory.domain.ids import text_key
from neural_memory.providers.embeddings.cache import EmbeddingCache
from neural_memory.stores.sqlite.files import holders_path

if TYPE_CHECKING:
    from pathlib import Path


def test_a_stored_vector_is_found_again_after_reopening(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache.sqlite3")
    cache.put_many("m1", "acme", [("deploy failed", [0.5, -0.25, 1.0]), ("rollback", [0.0, 1.0, 0.0])])
    cache.close()
    found = EmbeddingCache(tmp_path / "cache.sqlite3").get_many("m1", "acme", ["deploy failed", "rollback", "unseen"])
    assert found == {text_key("deploy failed"): [0.5, -0.25, 1.0], text_key("rollback"): [0.0, 1.0, 0.0]}


def test_another_model_never_sees_the_vector(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache.sqlite3")
    cache.put_many("m1", "acme", [("deploy failed", [1.0, 0.0])])
    assert cache.get_many("m2", "acme", ["deploy failed"]) == {}


def test_an_existing_entry_is_kept_and_many_texts_are_read_in_batches(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache.sqlite3")
    cache.put_many("m1", "acme", [("t", [1.0])])
    cache.put_many("m1", "acme", [("t", [2.0])])  # same model, same text: the first vector stays
    texts = [f"text {n}" for n in range(1200)]
    cache.put_many("m1", "acme", [(t, [float(n)]) for n, t in enumerate(texts)])
    found = cache.get_many("m1", "acme", ["t", *texts])
    assert found[text_key("t")] == [1.0] and len(found) == 1201 and found[text_key("text 1199")] == [1199.0]


def test_a_corrupt_cache_file_is_set_aside_and_a_new_cache_started(tmp_path: Path) -> None:
    # Given a file that is not a database (disk damage, a stray file)
    path = tmp_path / "cache.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    # When the cache is used, Then it finds nothing (no vector is made up), works again, and the
    # damaged file is kept beside it for inspection
    cache = EmbeddingCache(path)
    assert cache.get_many("m1", "acme", ["deploy failed"]) == {}
    cache.put_many("m1", "acme", [("deploy failed", [1.0])])
    assert cache.get_many("m1", "acme", ["deploy failed"]) == {text_key("deploy failed"): [1.0]}
    assert [p.name.split("-")[0] for p in tmp_path.glob("cache.sqlite3.corrupt-*")] == ["cache.sqlite3.corrupt"]


def test_entries_are_per_workspace_so_the_cache_tells_nothing_across_workspaces(tmp_path: Path) -> None:
    # Given a text embedded for workspace acme
    cache = EmbeddingCache(tmp_path / "cache.sqlite3")
    cache.put_many("m1", "acme", [("our acquisition target is Initech", [1.0])])
    # Then rival's lookup of the same text misses (rival's ingest embeds it: no timing tells rival
    # what acme stored), and acme's hits
    assert cache.get_many("m1", "rival", ["our acquisition target is Initech"]) == {}
    assert cache.get_many("m1", "acme", ["our acquisition target is Initech"]) != {}


def test_a_corrupt_cache_another_process_holds_stays_in_place_and_the_cache_is_skipped(tmp_path: Path) -> None:
    # Given a damaged cache file that another process uses (it holds the file's holders lock)
    path = tmp_path / "cache.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    holder = "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR); "
    holder += "fcntl.flock(fd, fcntl.LOCK_SH); print('held', flush=True); time.sleep(60)"
    other = subprocess.Popen([sys.executable, "-c", holder, str(holders_path(path))], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "held"
        # When the cache is used, Then it finds nothing and stores nothing, and the file is not moved
        cache = EmbeddingCache(path)
        assert cache.get_many("m1", "acme", ["deploy failed"]) == {}
        cache.put_many("m1", "acme", [("deploy failed", [1.0])])
        assert cache.get_many("m1", "acme", ["deploy failed"]) == {}
        assert path.read_bytes().startswith(b"this is not sqlite") and not list(tmp_path.glob("*.corrupt-*"))
    finally:
        other.kill()
        other.wait()
