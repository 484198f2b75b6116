"""The text a hook hands the model, under its token budget (``CHARS_PER_TOKEN`` characters a
token, the hook having no tokenizer): an intro, then sections whose heading shows only with an item
under it, each item while it fits (the last one cut short, never to a stub), and the keys of what
made it in, so that a session is not shown the same memory twice."""

from __future__ import annotations

CHARS_PER_TOKEN = 4  # the usual estimate for English text and code (the hook has no tokenizer)
MIN_ITEM_CHARS = 80  # the least of an item worth showing (its id, date and a few words)


class Composer:
    """Lines under a budget of characters (the intro's included): a section's heading only with at
    least one item under it; ``shown``: the keys of the entries that made it in."""

    def __init__(self, budget_tokens: int, intro: str) -> None:
        self.intro = intro
        self.left = budget_tokens * CHARS_PER_TOKEN - len(intro)
        self.lines: list[str] = []
        self.items = 0
        self.shown: list[str] = []

    def section(self, heading: str, entries: list[str], keys: list[list[str]] | None = None) -> None:
        """``entries`` under ``heading`` while they fit; ``keys[n]``: what entry n shows (memory
        ids, or a key such as ``experts:PATH``)."""
        pending = heading
        for n, whole in enumerate(entries):
            headed = len(pending) + 1 if pending else 0
            room = self.left - headed - 1
            entry = whole
            if len(whole) > room:
                if room < MIN_ITEM_CHARS:  # a stub of an item is no use: stop here
                    return
                entry = whole[: room - 1].rstrip() + "…"  # the last item that fits, cut (its id stays first)
            cost = len(entry) + 1 + headed
            if pending:
                self.lines.append(pending)
                pending = ""
            self.lines.append(entry)
            self.items += 1
            self.left -= cost
            if keys is not None:  # an entry cut short showed only the ids still in it
                self.shown.extend(k for k in keys[n] if entry is whole or f"[{k}]" in entry)

    def text(self) -> str:
        return "" if not self.items else "\n".join([self.intro, *self.lines])
