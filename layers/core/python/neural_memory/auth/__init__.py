"""API keys: the port and its record (``base.py``), the key logic (``keys.py``), one backend a file
(``sqlite.py``, ``dynamodb.py``) and the factory choosing one (``factory.py``). Nothing in
``stores/`` imports this package."""
