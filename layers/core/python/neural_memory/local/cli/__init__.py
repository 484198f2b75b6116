"""``neural-memory``: run the local API, manage keys, ingest files and search from the terminal.

One file per command in ``commands/`` (``register`` adds its flags, ``cmd_<name>(args) -> exit
code`` runs it), the parser that calls each ``register`` in ``parser.py``, the flags several share
in ``flags.py``, what they share when they run in ``common.py``; ``main`` here is the console script."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from neural_memory.local.cli.parser import build_parser

if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``neural-memory`` console script."""
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        # Concurrent searches each scan on their own thread; BLAS's own helper threads would only
        # oversubscribe the cores (measured: 6 clients p95 173 -> 130 ms at 100k, 1 client unchanged).
        for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(variable, "1")
        # EMF lines are for CloudWatch, and Powertools keeps one metric set per process, which
        # the server's concurrent handler instances would mix; latency is in every reply.
        os.environ["POWERTOOLS_METRICS_DISABLED"] = "true"
    else:
        # EMF lines belong to the API's logs, not to a terminal command's output.
        os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    if getattr(args, "verbose", None) is False:  # a command whose output is its answer
        from neural_memory.local.cli.common import logs_to_file

        logs_to_file()
    from pydantic import ValidationError

    from neural_memory.errors import ConfigurationError

    try:
        result: int = args.func(args)
    except ConfigurationError as exc:  # e.g. the store was built by another model, a model not pulled:
        print(f"error: {exc}", file=sys.stderr)  # the message names the command that fixes it
        return 2
    except ValidationError as exc:
        if exc.title != "Settings":
            raise
        # refused at start, each problem on a line naming the variable (the messages say what to set)
        for error in exc.errors():
            where = "NM_" + str(error["loc"][0]).upper() + ": " if error["loc"] else ""
            print(f"error: invalid configuration: {where}{error['msg'].removeprefix('Value error, ')}", file=sys.stderr)
        return 2
    return result


if __name__ == "__main__":
    sys.exit(main())
