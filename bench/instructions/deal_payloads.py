"""Deal the hand-written payloads of ``payloads_source.txt`` into the set's two halves (issue 55).

    python -m bench.instructions.deal_payloads

Each shape's examples, in the order written, go alternately to ``payloads_tuning.jsonl`` and
``payloads_holdout.jsonl``, so both halves hold every shape in (nearly) equal numbers. Placeholders
for invisible characters are expanded here (the source says which); a line holding an invisible or
format character is written with JSON escapes, so that it can be seen in the file.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

HERE = Path(__file__).parent
CHARACTERS = {
    "ZWSP": "\u200b",
    "ZWNJ": "\u200c",
    "ZWJ": "\u200d",
    "WJ": "\u2060",
    "BOM": "\ufeff",
    "LRE": "\u202a",
    "RLE": "\u202b",
    "PDF": "\u202c",
    "LRO": "\u202d",
    "RLO": "\u202e",
    "LRI": "\u2066",
    "RLI": "\u2067",
    "PDI": "\u2069",
    "LANGTAG": "\U000e0001",
    "CANCELTAG": "\U000e007f",
    "HR": "---",
}
_PLACEHOLDER = re.compile(r"\{(TAG:[^}]*|BLANK:\d+|[A-Z]+)\}")


def _expand(match: re.Match[str]) -> str:
    name = match.group(1)
    if name.startswith("TAG:"):
        # Tag characters mirror printable ASCII; a newline has none, so it becomes a space.
        return "".join(chr(0xE0000 + ord(c)) for c in name[4:].replace("\n", " "))
    if name.startswith("BLANK:"):
        return "\n" * int(name[6:])
    return CHARACTERS[name]


def parse(source: str) -> dict[str, list[str]]:
    """Each shape's payloads, in the order written, placeholders expanded."""
    shapes: dict[str, list[str]] = {}
    _, *blocks = re.split(r"^=== ", source, flags=re.MULTILINE)
    for block in blocks:
        shape, _, body = block.partition("\n")
        entries = re.split(r"^---\n", body, flags=re.MULTILINE)
        shapes[shape.strip()] = [_PLACEHOLDER.sub(_expand, e.strip("\n")) for e in entries if e.strip()]
    return shapes


def _line(row: dict[str, str]) -> str:
    hidden = any(unicodedata.category(c) == "Cf" for c in row["text"])
    return json.dumps(row, ensure_ascii=hidden) + "\n"


def main() -> None:
    shapes = parse((HERE / "payloads_source.txt").read_text(encoding="utf-8"))
    halves: dict[str, list[str]] = {"tuning": [], "holdout": []}
    for shape, texts in shapes.items():
        for i, text in enumerate(texts):
            half = "tuning" if i % 2 == 0 else "holdout"
            halves[half].append(_line({"id": f"{shape}-{i + 1:02d}", "shape": shape, "text": text}))
    for half, lines in halves.items():
        (HERE / f"payloads_{half}.jsonl").write_text("".join(lines), encoding="utf-8")
        print(f"payloads_{half}.jsonl: {len(lines)} payloads")
    for shape, texts in shapes.items():
        print(f"  {shape}: {len(texts)}")


if __name__ == "__main__":
    main()
