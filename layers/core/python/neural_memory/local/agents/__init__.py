"""Coding agents that remember without being asked (local only): Claude Code's hooks recall what
the memory holds when a session starts and a prompt is sent, and capture each turn when it ends.

``hook.py`` is the hook's entry point (``neural-memory-hook``); it and everything it imports
(``hook_flags``, ``memory_client``, ``recall``, ``memory_lines``, ``text_budget``, ``capture``,
``transcript``, ``outbox_redaction``, ``child_process``, ``private``, ``repository``,
``hook_state``, ``local_server``) use the standard library only, so a hook costs a bare Python
start and a few HTTP calls, never the model. ``claude_code.py`` writes and removes the
configuration (``neural-memory agents install|uninstall|status``), our hooks' entries in it with
``hook_settings.py``."""
