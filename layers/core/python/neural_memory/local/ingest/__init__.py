"""Ingest from files: the runner, the JSON/JSONL readers, the dead-letter file."""
