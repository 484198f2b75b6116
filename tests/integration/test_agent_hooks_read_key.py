"""``neural-memory-hook`` with a ``read`` key, against the real local API: a prompt's recall works
as with any key; a turn is not captured (the memory refuses the key's writes with a 403), the
hooks' log says so once, and nothing waits in the outbox for a write that can never succeed."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from tests.helpers.events import EVENTS
from tests.helpers.local_api import RunningApi, running_local_api
from tests.integration.test_agent_hooks import WHY_PROMPT, Hooked, context_of, patiently

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxLocalEmbedder) -> Iterator[RunningApi]:
    with running_local_api(tmp_path_factory.mktemp("hooks-read-key"), embedder, EVENTS) as running:
        yield running


def test_a_read_key_recalls_but_does_not_capture_and_says_so_once(api: RunningApi, tmp_path: Path) -> None:
    # Given the hooks with a read key of the demo workspace
    hooked, key = Hooked(tmp_path), api.key_for("demo", "reviewer", "read")
    before = api.service.store.count("demo")
    # When a prompt is submitted, Then its recall is injected as with any key
    code, out, _ = hooked.run(hooked.event("UserPromptSubmit", prompt=WHY_PROMPT), *patiently(api), key=key)
    assert code == 0 and "[decision-session-refresh-edge]" in context_of(out, "UserPromptSubmit")
    # When two turns end, Then neither is captured, and the log says why once
    for n in (1, 2):
        stop = hooked.event("Stop", prompt_id=f"p-{n}", last_assistant_message=f"Answer {n}.", stop_hook_active=False)
        assert hooked.run(stop, "--url", api.url, key=key)[:2] == (0, "")
        if n == 1:
            hooked.wait_for("not captured")
    time.sleep(2)  # the second capture runs detached: give it the time the first took
    refused = [line for line in hooked.log.splitlines() if "Stop" in line]
    assert len([line for line in refused if "not captured" in line]) == 1, hooked.log
    assert (
        "a read key" in hooked.log
        and "capture held" not in hooked.log
        and "captured" not in hooked.log.replace("not captured", "")
    )
    assert api.service.store.count("demo") == before
    assert not (hooked.state / "outbox.jsonl").exists()
    assert key not in "".join(p.read_text() for p in hooked.state.rglob("*") if p.is_file())
