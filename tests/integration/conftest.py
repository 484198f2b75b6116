"""Fixtures the integration modules share: ``svc``, the two-store service (``tests/helpers/two_stores.py``)."""

from tests.helpers.two_stores import svc  # noqa: F401  (a fixture, found by name)
