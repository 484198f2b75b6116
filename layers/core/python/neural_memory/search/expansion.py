"""``expand: "observation"``: each search result carries the whole observation it was found in.

The whole text is the observation's stored ``content`` (the title when it has none), which both
stores return with every hit: the chunks are cut from it, and rebuilding it from them would be
lossy (the whitespace between windows is gone) and wrong (a chat turn's context passage holds
the turn before it; OpenSearch keeps no text for passages).

A reply must stay under ``max_reply_bytes`` (a synchronous Lambda answers at most 6 MB, counted
on the JSON it returns, in which the body is a JSON string again): texts are given best result
first, and the first that does not fit, and every one after it, is cut (``textTruncated``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from neural_memory.models import SearchResponse

# The reply's status, headers and envelope around its body, with room to spare.
ENVELOPE_BYTES = 4096
_EMPTY = len(json.dumps(json.dumps("")))


def cost(text: str) -> int:
    """Bytes ``text`` adds to a Lambda proxy reply as a JSON string value: escaped once in the
    body (non-ASCII as ``\\uXXXX``, as Powertools serializes it) and once more as the body string."""
    return len(json.dumps(json.dumps(text))) - _EMPTY


def reply_bytes(response: SearchResponse) -> int:
    """The size of ``response`` in the Lambda proxy reply (body serialized, then escaped as a string)."""
    body = json.dumps(response.model_dump(mode="json", by_alias=True), separators=(",", ":"))
    return len(json.dumps(body)) + ENVELOPE_BYTES


def prefix_within(text: str, budget: int) -> str:
    """The longest prefix of ``text`` whose ``cost`` is at most ``budget``."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if cost(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return text[:low]


def expanded(response: SearchResponse, texts: Mapping[str, str], max_bytes: int) -> SearchResponse:
    """``response`` with each result's ``text``: its observation's whole text (``texts``, by id;
    the title when empty), best result first, cut where the reply would exceed ``max_bytes``."""
    results = [r.model_copy(update={"text": "", "text_truncated": False}) for r in response.results]
    budget = max_bytes - reply_bytes(response.model_copy(update={"results": results}))
    filled = []
    for result in results:
        whole = texts.get(result.id) or result.title
        text = whole if cost(whole) <= budget else prefix_within(whole, max(budget, 0))
        budget -= cost(text)
        filled.append(result.model_copy(update={"text": text, "text_truncated": len(text) < len(whole)}))
    return response.model_copy(update={"results": filled})
