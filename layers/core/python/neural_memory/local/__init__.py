"""The embedded default: a local HTTP gateway in front of the very same handlers, and the CLI."""
