"""``neural-memory reindex``: the store rebuilt for the configured embedding model while the old
vectors keep serving — the embedded store's vectors embedded aside and swapped in one
transaction (``stores/sqlite/reindex.py``), or a new OpenSearch index swapped behind the alias."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import cli_settings, progress_bar

if TYPE_CHECKING:
    import argparse

    from neural_memory.settings import Settings


def cmd_reindex(args: argparse.Namespace) -> int:
    """Rebuild the store for the configured model (resumable; the old vectors serve until the swap).
    OpenSearch: also list the physical indices behind the alias, or drop an old one."""
    from neural_memory.service import build_service
    from neural_memory.stores.factory import build_admin
    from neural_memory.stores.opensearch.index import ReindexBusy
    from neural_memory.stores.opensearch.reindex import Reindexer

    settings = cli_settings(args)
    admin = build_admin(settings)
    if admin is None:
        if args.drop or args.list or args.force:
            print("--list, --drop and --force are for the OpenSearch store (--store opensearch)", file=sys.stderr)
            return 2
        return _reindex_sqlite(settings, args.batch)
    if args.drop:
        admin.drop(args.drop)
        print(f"dropped {args.drop}")
        return 0
    if args.list:
        live = admin.live()
        for name in [*([live] if live and live not in admin.versions() else []), *admin.versions()]:
            meta = admin.meta(name)
            state = "live" if name == live else "reindexing" if "reindex" in meta else "old"
            print(f"{name}\t{state}\tmodel {meta.get('model_id')} ({meta.get('dimension')} dims), "
                  f"schema {meta.get('schema_version')}")  # fmt: skip
        return 0
    service = build_service(settings)
    bar = None

    def progress(copied: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = progress_bar(total, "obs", "reindex")
        bar.update(copied - bar.n)

    try:
        report = Reindexer(service, admin, batch_size=args.batch).run(progress=progress, force=args.force)
    except ReindexBusy as busy:
        print(f"not now: {busy}", file=sys.stderr)
        return 1
    finally:
        if bar is not None:
            bar.close()
    print(report.summary())
    for (workspace, observation), reason in list(report.failed.items())[:20]:
        print(f"  refused {workspace}/{observation}: {reason}", file=sys.stderr)
    if report.swapped and report.source:
        print(f"the old index {report.source} is kept: `neural-memory reindex --drop {report.source}` deletes it")
    return 0 if report.swapped or report.source is None else 1


def _reindex_sqlite(settings: Settings, batch: int) -> int:
    """The embedded store: embed every chunk again with the configured model beside the old
    vectors (which serve until the swap), then swap; run again to resume. The mirror is saved
    for the new model afterwards, so the next ``serve`` starts at once."""
    from neural_memory.service import build_service
    from neural_memory.stores.sqlite.reindex import ReindexBusy, SqliteReindexer
    from neural_memory.stores.sqlite.store import SqliteStore

    service = build_service(settings)
    embedder = service.embedder
    if embedder is None:
        print("reindex needs an embedding model: NM_EMBEDDER=none has none to build the store for", file=sys.stderr)
        return 2
    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = progress_bar(total, "chunk", "reindex")
            bar.update(done)
        bar.total = max(total, done)
        bar.update(done - bar.n)

    target = (embedder.model_id, embedder.dimension)
    reindexer = SqliteReindexer(settings.sqlite_path, target, service.embed_documents, batch_size=batch)
    try:
        report = reindexer.run(progress=progress)
    except ReindexBusy as busy:
        print(f"not now: {busy}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nstopped: run the same command again to resume where it stopped", file=sys.stderr)
        return 130
    finally:
        if bar is not None:
            bar.close()
        if service.embedding_cache is not None:
            service.embedding_cache.close()
    if report.swapped:
        store = SqliteStore(settings.sqlite_path, settings.sqlite_synchronous)
        try:
            store.refresh_snapshot()
        finally:
            store.close()
    print(report.summary())
    return 0
