"""Unit tests never touch the network."""

from __future__ import annotations

import pytest
from pytest_socket import disable_socket, enable_socket


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup() -> None:
    disable_socket()


def pytest_runtest_teardown() -> None:
    enable_socket()
