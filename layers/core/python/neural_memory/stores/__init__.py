"""Stores: the port (``base.py``), the fields every backend writes (``record_fields.py``), the
factory (``factory.py``) and one folder per backend, each owning its query dialect over the neutral
``Filter``: ``opensearch/`` (the query DSL) and ``sqlite/`` (SQL and the in-memory masks)."""
