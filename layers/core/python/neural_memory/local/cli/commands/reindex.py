"""``neural-memory reindex``: the store rebuilt for the configured embedding model while the old
vectors keep serving — the embedded store's vectors embedded aside and swapped in one
transaction (``stores/sqlite/reindex.py``), or, on OpenSearch, a new index for each workspace
swapped behind its alias. ``neural-memory migrate-index``: the single index of earlier versions
copied into an index per workspace."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import cli_settings, progress_bar
from neural_memory.local.cli.flags import data_dir

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands
    from neural_memory.settings import Settings
    from neural_memory.stores.opensearch.index import OpenSearchAdmin


def cmd_reindex(args: argparse.Namespace) -> int:
    """Rebuild the store for the configured model (resumable; the old vectors serve until the swap).
    OpenSearch: each workspace's index in turn; also list the physical indices behind the
    workspaces' aliases, or drop an old one."""
    from neural_memory.runtime import build_service
    from neural_memory.stores.factory import build_indices
    from neural_memory.stores.opensearch.index import ReindexBusy, space_of
    from neural_memory.use_cases.reindexing import Reindexer

    settings = cli_settings(args)
    indices = build_indices(settings)
    if indices is None:
        if args.drop or args.list or args.force:
            print("--list, --drop and --force are for the OpenSearch store (--store opensearch)", file=sys.stderr)
            return 2
        return _reindex_sqlite(settings, args.batch)
    admins = [indices.admin(alias) for alias in indices.aliases()]
    if args.drop or args.list:
        return _list_or_drop(admins, args.drop)
    service = build_service(settings)
    # Workspaces created from now on are built for this model; the existing ones are reindexed.
    print(indices.put_template(*space_of(service.embedder)))
    swapped_all = True
    busy_workspaces: list[str] = []
    for admin in admins:
        bar = None

        def progress(copied: int, total: int, name: str = admin.alias) -> None:
            nonlocal bar
            if bar is None:
                bar = progress_bar(total, "obs", f"reindex {name}")
            bar.update(copied - bar.n)

        try:
            report = Reindexer(service, admin, batch_size=args.batch).run(progress=progress, force=args.force)
        except ReindexBusy as busy:
            # One workspace held by another run (the schedule, an operator) does not stop the others.
            print(f"not now: {busy}", file=sys.stderr)
            busy_workspaces.append(admin.alias)
            continue
        finally:
            if bar is not None:
                bar.close()
        print(report.summary())
        for (workspace, observation), reason in list(report.failed.items())[:20]:
            print(f"  refused {workspace}/{observation}: {reason}", file=sys.stderr)
        if report.swapped and report.source:
            print(f"the old index {report.source} is kept: `neural-memory reindex --drop {report.source}` deletes it")
        swapped_all &= report.swapped or report.source is None
    if busy_workspaces:
        print(f"busy, run again later: {', '.join(busy_workspaces)}", file=sys.stderr)
    return 0 if swapped_all and not busy_workspaces else 1


def _list_or_drop(admins: list[OpenSearchAdmin], drop: str | None) -> int:
    """``--drop INDEX`` (an old physical index of a workspace), else ``--list``."""
    if drop:
        owner = next((admin for admin in admins if drop in admin.versions()), None)
        if owner is None:
            print(f"no workspace alias has an old index {drop!r}", file=sys.stderr)
            return 1
        owner.drop(drop)
        print(f"dropped {drop}")
        return 0
    for admin in admins:
        live = admin.live()
        for name in [*([live] if live and live not in admin.versions() else []), *admin.versions()]:
            meta = admin.meta(name)
            state = "live" if name == live else "reindexing" if "reindex" in meta else "old"
            print(f"{name}\t{state}\tmodel {meta.get('model_id')} ({meta.get('dimension')} dims), "
                  f"schema {meta.get('schema_version')}")  # fmt: skip
    return 0


def cmd_migrate_index(args: argparse.Namespace) -> int:
    """Copy the single OpenSearch index of earlier versions into an index per workspace."""
    from neural_memory.stores.factory import build_indices
    from neural_memory.stores.opensearch.migration import migrate

    indices = build_indices(cli_settings(args))
    if indices is None:
        print("migrate-index is for the OpenSearch store (--store opensearch)", file=sys.stderr)
        return 2
    report = migrate(indices, again=args.again)
    print(report.summary())
    for document, reason in list(report.failed.items())[:20]:
        print(f"  refused {document}: {reason}", file=sys.stderr)
    return 0 if report.complete else 1


def _reindex_sqlite(settings: Settings, batch: int) -> int:
    """The embedded store: embed every chunk again with the configured model beside the old
    vectors (which serve until the swap), then swap; run again to resume. The mirror is saved
    for the new model afterwards, so the next ``serve`` starts at once."""
    from neural_memory.runtime import build_service
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


def register(commands: Commands) -> None:
    """``reindex`` and ``migrate-index``."""
    reindex = commands.add_parser(
        "reindex",
        help="rebuild the store for the configured embedding model while the old vectors serve (resumable); "
        "OpenSearch: also a new mapping, each workspace's index behind its alias",
    )
    reindex.add_argument(
        "--batch", type=int, default=100, help="observations (embedded store: chunks) embedded and written at a time"
    )
    reindex.add_argument("--list", action="store_true", help="list the physical indices and which one is live")
    reindex.add_argument("--drop", metavar="INDEX", help="delete an old physical index (never the live one)")
    reindex.add_argument(
        "--force", action="store_true", help="move the alias even though some observations were refused (listed)"
    )
    data_dir(reindex)
    reindex.set_defaults(func=cmd_reindex)

    migrate_index = commands.add_parser(
        "migrate-index",
        help="OpenSearch: copy the single index of earlier versions into an index per workspace "
        "(never overwrites what a workspace index holds; the old index is kept)",
    )
    migrate_index.add_argument(
        "--again", action="store_true", help="copy again an index already migrated (catch up what old writers wrote)"
    )
    data_dir(migrate_index)
    migrate_index.set_defaults(func=cmd_migrate_index)
