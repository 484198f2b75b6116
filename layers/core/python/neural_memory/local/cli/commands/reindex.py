"""``neural-memory reindex``: a new OpenSearch index built and swapped behind the alias."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import cli_settings, progress_bar

if TYPE_CHECKING:
    import argparse


def cmd_reindex(args: argparse.Namespace) -> int:
    """OpenSearch: list the physical indices behind the alias, drop an old one, or rebuild the live
    one for the configured model and mapping (resumable; the alias moves when it is complete)."""
    from neural_memory.service import build_service
    from neural_memory.stores.factory import build_admin
    from neural_memory.stores.opensearch.index import ReindexBusy
    from neural_memory.stores.opensearch.reindex import Reindexer

    settings = cli_settings(args)
    admin = build_admin(settings)
    if admin is None:
        print("reindex is for the OpenSearch store (--store opensearch): the embedded store keeps "
              "each model's vectors apart and needs none", file=sys.stderr)  # fmt: skip
        return 2
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
