"""Our hooks in Claude Code's ``.claude/settings.json``: the events they run at with Claude Code's
timeout and the hook's own deadline (``HOOK_EVENTS``), the ``neural-memory-hook`` command each
runs, and the settings with them added (in their place when already there: no diff) or taken out
again, every other hook left as it is (``claude_code.py`` writes the file)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neural_memory.local.agents.claude_code import Target

HOOK_SCRIPT = "neural-memory-hook"
# Claude Code's own timeout per hook (seconds) and the hook's deadline within it: a memory that is
# down or slow costs the agent at most the deadline, never Claude Code's timeout.
HOOK_EVENTS: dict[str, tuple[int, float | None]] = {
    "SessionStart": (15, None),  # None: the hook's own (3 s, or 10 s when it starts the embedded server)
    "UserPromptSubmit": (5, 2.0),
    "Stop": (10, None),  # returns at once: the capture runs detached
}


def is_our_hook(hook: Any) -> bool:
    return isinstance(hook, dict) and HOOK_SCRIPT in str(hook.get("command", ""))


def without_our_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` with every hook entry running ``neural-memory-hook`` taken out (and a group, an
    event or ``hooks`` left empty by that)."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return settings
    kept_events: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            kept_events[event] = groups
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list) or not any(is_our_hook(h) for h in inner):
                kept_groups.append(group)
            elif rest := [h for h in inner if not is_our_hook(h)]:
                kept_groups.append({**group, "hooks": rest})
        if kept_groups:
            kept_events[event] = kept_groups
    result = {k: v for k, v in settings.items() if k != "hooks"}
    if kept_events:
        result["hooks"] = kept_events
    return result


def hook_command(target: Target, event: str, budget_tokens: int | None) -> str:
    """The shell command Claude Code runs for ``event``."""
    words = [HOOK_SCRIPT, *target.hook_args()]
    if budget_tokens is not None:
        words += ["--budget-tokens", str(budget_tokens)]
    if (deadline := HOOK_EVENTS[event][1]) is not None:
        words += ["--timeout", str(deadline)]
    return " ".join(shlex.quote(word) for word in words)


def _our_commands(settings: dict[str, Any]) -> dict[str, list[str]]:
    """The commands of our hooks, event by event."""
    found: dict[str, list[str]] = {}
    for event, groups in (settings.get("hooks") or {}).items():
        for group in groups if isinstance(groups, list) else []:
            for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if is_our_hook(hook):
                    found.setdefault(event, []).append(str(hook.get("command")))
    return found


def installed_budget(settings: dict[str, Any]) -> int | None:
    """The ``--budget-tokens`` our installed hooks were given (None: the default)."""
    for commands in _our_commands(settings).values():
        words = shlex.split(commands[0])
        if "--budget-tokens" in words[:-1]:
            try:
                return int(words[words.index("--budget-tokens") + 1])
            except ValueError:
                return None
    return None


def with_our_hooks(settings: dict[str, Any], target: Target, budget_tokens: int | None) -> dict[str, Any]:
    """``settings`` with our hooks; as it is when it holds them already (their place kept: no diff)."""
    if budget_tokens is None:
        budget_tokens = installed_budget(settings)
    wanted = {event: [hook_command(target, event, budget_tokens)] for event in HOOK_EVENTS}
    if _our_commands(settings) == wanted:
        return settings
    result = without_our_hooks(settings)
    hooks = dict(result.get("hooks") or {})
    for event, (timeout, _) in HOOK_EVENTS.items():
        ours = {"type": "command", "command": wanted[event][0], "timeout": timeout}
        hooks[event] = [*(hooks.get(event) or []), {"hooks": [ours]}]
    result["hooks"] = hooks
    return result
