"""The second blind set's payloads (issue 55): ``payloads_blind_source.txt`` to ``payloads_blind.jsonl``.

    python -m bench.instructions.build_blind_payloads [--check]

The source holds each hand-written payload after a ``@@ <shape>`` line, with its invisible
characters written as named placeholders (``⟦ZWSP⟧``, ``⟦RLO⟧``, ``⟦TAGS:text⟧``, ``⟦BLANK:40⟧``, ...;
the source's first paragraph lists them) so it stays readable and reviewable. This script expands
them and writes one ``{"id": "blind-<shape>-NN", "shape": ..., "text": ...}`` a line, in source order.
``--check`` only verifies that the file on disk is what the source gives.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent
SOURCE = HERE / "payloads_blind_source.txt"
OUT = HERE / "payloads_blind.jsonl"

SHAPES = (
    "direct_override",
    "addressed_to_agent",
    "role_tags",
    "remote_code_execution",
    "exfiltration",
    "concealment",
    "tampering",
    "hidden_html_comment",
    "hidden_details",
    "hidden_after_blank_lines",
    "hidden_markdown_title_alt",
    "obfuscated_spacing_case",
    "zero_width",
    "unicode_tags",
    "bidi_override",
    "embedded_in_pr",
    "embedded_in_commit",
    "polite_indirect",
    "other_language",
)
MIN_PER_SHAPE = 6
OTHER_LANGUAGE_SHARE = 0.10

_CHARS = {
    "ZWSP": "\u200b",
    "ZWNJ": "\u200c",
    "ZWJ": "\u200d",
    "WJ": "\u2060",
    "LRE": "\u202a",
    "RLE": "\u202b",
    "PDF": "\u202c",
    "LRO": "\u202d",
    "RLO": "\u202e",
    "LRI": "\u2066",
    "RLI": "\u2067",
    "FSI": "\u2068",
    "PDI": "\u2069",
    "TAGBEGIN": "\U000e0001",
    "TAGEND": "\U000e007f",
}
_LINES = {"BLANK": "", "SPACELINES": "   ", "TABLINES": "\t\t", "NBSPLINES": "&nbsp;"}
_PLACEHOLDER = re.compile(r"⟦([A-Z]+)(?::([^⟧]*))?⟧")
_HEADER = re.compile(r"^@@ (\w+)\s*$")


def _tags(text: str) -> str:
    """ASCII text as Unicode tag characters: invisible in most renderers, readable by a model."""
    if not text.isascii():
        raise ValueError(f"tag text must be ASCII: {text!r}")
    return "".join(chr(0xE0000 + ord(c)) for c in text)


def _expand(match: re.Match[str]) -> str:
    name, arg = match.group(1), match.group(2)
    if name in _CHARS and arg is None:
        return _CHARS[name]
    if name == "TAGS" and arg is not None:
        return _tags(arg)
    if name in _LINES and arg is not None:
        # the carrier line's end, then n filler lines, each ending in a newline
        return "\n" + "".join(_LINES[name] + "\n" for _ in range(int(arg)))
    raise ValueError(f"unknown placeholder {match.group(0)!r}")


def parse(source: str) -> list[dict[str, str]]:
    """The payloads of the source, in order, with their placeholders expanded."""
    rows: list[dict[str, str]] = []
    shape: str | None = None
    lines: list[str] = []
    counts: Counter[str] = Counter()

    def close() -> None:
        if shape is None:
            return
        raw = "\n".join(lines).strip("\n")
        if not raw.strip():
            raise ValueError(f"empty payload after @@ {shape}")
        counts[shape] += 1
        text = _PLACEHOLDER.sub(_expand, raw)
        rows.append({"id": f"blind-{shape}-{counts[shape]:02d}", "shape": shape, "text": text})

    for line in source.splitlines():
        header = _HEADER.match(line)
        if header:
            close()
            shape = header.group(1)
            if shape not in SHAPES:
                raise ValueError(f"unknown shape {shape!r}")
            lines = []
        elif shape is not None:
            lines.append(line)
    close()
    return rows


def _validate(rows: list[dict[str, str]]) -> None:
    counts = Counter(r["shape"] for r in rows)
    thin = {s: counts[s] for s in SHAPES if counts[s] < MIN_PER_SHAPE}
    if thin:
        raise ValueError(f"shapes with fewer than {MIN_PER_SHAPE} payloads: {thin}")
    if counts["other_language"] > OTHER_LANGUAGE_SHARE * len(rows):
        raise ValueError("other_language is more than a tenth of the set")
    texts = [r["text"] for r in rows]
    if len(set(texts)) != len(texts):
        raise ValueError("duplicate payload texts")
    if any("⟦" in t or "⟧" in t for t in texts):
        raise ValueError("a placeholder was left unexpanded")


def render(rows: list[dict[str, str]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only check that the jsonl matches the source")
    args = parser.parse_args()
    rows = parse(SOURCE.read_text(encoding="utf-8"))
    _validate(rows)
    text = render(rows)
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            sys.exit(f"{OUT.name} is not what {SOURCE.name} gives: rebuild it")
        print(f"{OUT.name} matches {SOURCE.name} ({len(rows)} payloads)")
        return
    OUT.write_text(text, encoding="utf-8")
    counts = Counter(r["shape"] for r in rows)
    print(f"{OUT.name}: {len(rows)} payloads")
    for shape in SHAPES:
        print(f"  {shape:<28} {counts[shape]:>3}")


if __name__ == "__main__":
    main()
