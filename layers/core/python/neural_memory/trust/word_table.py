"""Writes ``instruction_words.py`` and its parts: the words each instruction pattern cannot match
without, read once here from the patterns (``literal_rule.required_words``) so that no process parses
ninety patterns to start (the hook runs as a process per event; a Lambda function starts cold). The
table is split by the first digit of each pattern's key into parts of at most ``MAX_LINES`` lines,
which ``instruction_words.py`` joins into ``WORDS``. A test checks the files against the patterns;
after changing one:

    python -m neural_memory.trust.word_table
"""

from __future__ import annotations

import pprint
from pathlib import Path

from neural_memory.trust.instructions import FLAGS, SOURCES
from neural_memory.trust.literal_rule import Words, key_of, listed, required_words

# The first hex digits of the keys each part holds: keys are digests, so the parts stay even.
PARTS = ("01234567", "89abcdef")
MAX_LINES = 400
HEADER = '"""Made by ``python -m neural_memory.trust.word_table``: do not edit."""\n'
TYPE = "dict[str, list[list[list[str]]]]"


def table() -> dict[str, Words]:
    """Each pattern's key and its words, as the file lists them."""
    return {key_of(source): listed(required_words(source, FLAGS)) for source in SOURCES}


def part_name(digits: str) -> str:
    """The module holding the keys that start with one of ``digits``."""
    return f"instruction_words_{digits[0]}_{digits[-1]}"


def part_text(words: dict[str, Words]) -> str:
    """A part's file: its keys' words, as a dict literal."""
    literal = pprint.pformat(words, width=110, compact=True)
    return f"{HEADER}\n# ruff: noqa: E501\n# fmt: off\nWORDS: {TYPE} = {literal}\n"


def joined_text() -> str:
    """``instruction_words.py``: the parts joined into ``WORDS``."""
    names = [part_name(digits) for digits in PARTS]
    imports = "".join(f"from neural_memory.trust.{name} import WORDS as {name.upper()}\n" for name in names)
    joined = ", ".join(f"**{name.upper()}" for name in names)
    return f"{HEADER}\n{imports}\nWORDS: {TYPE} = {{{joined}}}\n"


def files() -> dict[str, str]:
    """Each file's name and text."""
    words = table()
    made = {
        f"{part_name(digits)}.py": part_text({k: v for k, v in words.items() if k[0] in digits}) for digits in PARTS
    }
    for name, text in made.items():
        # A module over the line budget is hard to read and review: split the digits further.
        if len(text.splitlines()) > MAX_LINES:
            raise SystemExit(f"{name} would be over {MAX_LINES} lines: add a part to PARTS")
    return {**made, "instruction_words.py": joined_text()}


def main() -> None:
    folder = Path(__file__).parent
    for name, text in files().items():
        (folder / name).write_text(text)


if __name__ == "__main__":
    main()
