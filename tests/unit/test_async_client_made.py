"""The asynchronous client is made from the synchronous one (``local/client/make_async.py``): the
committed ``aio.py`` is what it makes today, so the two clients cannot drift apart."""

from __future__ import annotations

import inspect

from neural_memory.local.client import AsyncNeuralMemoryClient, NeuralMemoryClient
from neural_memory.local.client.make_async import TARGET, made


def test_the_committed_async_client_is_made_from_the_sync_one() -> None:
    assert TARGET.read_text() == made(), "run: python layers/core/python/neural_memory/local/client/make_async.py"


def test_every_method_of_the_sync_client_is_a_coroutine_of_the_async_one() -> None:
    renamed = {"close": "aclose", "__enter__": "__aenter__", "__exit__": "__aexit__"}
    for name, method in inspect.getmembers(NeuralMemoryClient, inspect.isfunction):
        if name == "__init__" or (name.startswith("_") and name not in renamed):
            continue
        twin = getattr(AsyncNeuralMemoryClient, renamed.get(name, name))
        assert inspect.iscoroutinefunction(twin), name
        assert list(inspect.signature(twin).parameters) == list(inspect.signature(method).parameters), name
