"""The command line: the program's own flags, then each command in the order ``--help`` lists
them, added by its module's ``register`` (``commands/``: its flags and the function that runs it)."""

from __future__ import annotations

import argparse

from neural_memory.local.cli.commands import (
    agents,
    answers,
    audit,
    backup,
    check,
    dlq,
    eval_history,
    eval_questions,
    evaluate,
    history,
    ingest,
    keys,
    mcp,
    models,
    openapi,
    purge,
    reindex,
    restore,
    routes,
    scrub,
    search,
    serve,
)

DESCRIPTION = "Run the local API, manage keys, ingest files and search from the terminal."


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    from neural_memory import __version__

    parser = argparse.ArgumentParser(prog="neural-memory", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"neural-memory {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve.register(commands)
    keys.register(commands)
    audit.register(commands)
    routes.register(commands)
    ingest.register_ingest(commands)
    history.register(commands)
    ingest.register_replay(commands)
    dlq.register(commands)
    search.register(commands)
    answers.register(commands)
    mcp.register(commands)
    agents.register(commands)
    purge.register(commands)
    scrub.register(commands)
    reindex.register(commands)
    evaluate.register(commands)
    eval_history.register(commands)
    eval_questions.register(commands)
    models.register(commands)
    openapi.register(commands)
    backup.register(commands)
    restore.register(commands)
    check.register(commands)
    return parser
