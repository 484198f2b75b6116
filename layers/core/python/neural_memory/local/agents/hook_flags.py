"""The hook's flags, as ``agents install`` writes them into each hook's command: ``--url``,
``--data-dir``, ``--workspace``, ``--budget-tokens``, ``--floor`` and ``--timeout`` (``--name value``
or ``--name=value``), parsed by hand because ``argparse`` would cost each prompt more than the
whole recall's own code; a flag it does not know, or a value of the wrong type, is kept aside for
the log line rather than failing the hook."""

from __future__ import annotations

DEFAULT_BUDGET_TOKENS = 1_500  # recall.DEFAULT_BUDGET_TOKENS
DEFAULT_FLOOR = 0.35  # recall.DEFAULT_FLOOR


class Flags:
    """The hook's flags (``--name value`` or ``--name=value``; parsed by hand: ``argparse`` costs
    each prompt more than the whole recall's own code)."""

    def __init__(self, argv: list[str]) -> None:
        self.url = ""
        self.data_dir = ""
        self.workspace = ""
        self.budget_tokens = DEFAULT_BUDGET_TOKENS
        self.floor = DEFAULT_FLOOR
        self.timeout = 0.0
        self.unknown: list[str] = []
        words = iter(argv)
        for word in words:
            name, equals, value = word.partition("=")
            attribute = name.removeprefix("--").replace("-", "_")
            if not name.startswith("--") or attribute not in {
                "url",
                "data_dir",
                "workspace",
                "budget_tokens",
                "floor",
                "timeout",
            }:
                self.unknown.append(word)
                continue
            value = value if equals else next(words, "")
            try:
                current = getattr(self, attribute)
                setattr(self, attribute, type(current)(value))
            except ValueError:
                self.unknown.append(word)
