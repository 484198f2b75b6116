"""Writes ``instruction_words.py``: the words each instruction pattern cannot match without, read
once here from the patterns (``literal_rule.required_words``) so that no process parses ninety
patterns to start (the hook runs as a process per event; a Lambda function starts cold). A test
checks the file against the patterns; after changing one:

    python -m neural_memory.trust.word_table > layers/core/python/neural_memory/trust/instruction_words.py
"""

from __future__ import annotations

import pprint

from neural_memory.trust.instructions import FLAGS, SOURCES
from neural_memory.trust.literal_rule import Words, key_of, listed, required_words


def table() -> dict[str, Words]:
    """Each pattern's key and its words, as the file lists them."""
    return {key_of(source): listed(required_words(source, FLAGS)) for source in SOURCES}


def main() -> None:
    print('"""Made by ``python -m neural_memory.trust.word_table``: do not edit."""\n')
    print("# ruff: noqa: E501")
    print("# fmt: off")
    print("WORDS: dict[str, list[list[list[str]]]] = " + pprint.pformat(table(), width=110, compact=True))


if __name__ == "__main__":
    main()
