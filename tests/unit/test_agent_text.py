"""What the hooks keep of a turn and read of a project: private spans, long output, the
repository and branch from the .git files, the paths a prompt names, what a session was shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.local.agents.capture import turn_text
from neural_memory.local.agents.private_spans import strip_private
from neural_memory.local.agents.recall import named_paths, relevant
from neural_memory.local.agents.repository import Repository, read_repository

if TYPE_CHECKING:
    from pathlib import Path


def test_private_spans_go_whatever_their_case_or_lines_and_an_unclosed_one_hides_the_rest() -> None:
    assert (
        strip_private("a <private>b</private> c <PRIVATE>\nd\n</Private> e")
        == "a [redacted:private] c [redacted:private] e"
    )
    assert strip_private("keep <private>the rest is hidden") == "keep [redacted:private]"
    assert strip_private("no tags") == "no tags"


def test_a_turn_keeps_what_was_said_not_long_output() -> None:
    short = "```py\nx = 1\n```"
    long = "```diff\n" + "\n".join(f"+{n}" for n in range(31)) + "\n```"
    kept = turn_text(f"We chose X.\n{short}\n{long}\nDone.")
    assert kept == "We chose X.\n```py\nx = 1\n```\n[a code block of 31 lines, not kept]\nDone."
    assert len(turn_text("word " * 5_000)) <= 6_000


def test_the_repository_is_read_from_git_files_a_worktree_included(tmp_path: Path) -> None:
    main = tmp_path / "clone"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (main / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:acme/api.git\n'
    )
    (main / "src").mkdir()
    assert read_repository(main / "src") == Repository("acme/api", "main")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    (main / ".git" / "worktrees" / "wt" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    assert read_repository(worktree) == Repository("acme/api", "feature/x")
    assert read_repository(tmp_path / "elsewhere") == Repository("elsewhere", None)


def test_paths_a_prompt_names() -> None:
    assert named_paths("fix src/auth/middleware.ts and settings.py, not e.g. or 1.5") == [
        "src/auth/middleware.ts",
        "settings.py",
    ]
    assert named_paths("what about the infra/stacks/ folder? and http://x.io/a.html") == ["infra/stacks"]


def test_the_floor_is_on_the_cosine_or_a_strong_keyword_match() -> None:
    assert relevant({"scores": {"vector": 0.5, "lexical": 0.1}}, 0.35)
    # (a memory with the very words asked about stays, once the prompt's best memory cleared its bar)
    assert relevant({"scores": {"vector": 0.3, "lexical": 1.0}}, 0.35)
    assert not relevant({"scores": {"vector": 0.3, "lexical": 0.5}}, 0.35)
    assert relevant({"scores": {"vector": None, "lexical": 0.8}}, 0.35)
    assert not relevant({"scores": {"vector": None, "lexical": 0.5}}, 0.35)


def test_the_hook_loads_the_standard_library_only() -> None:
    # Given every module a hook run can import (each event's, the embedded server's start included)
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "import neural_memory.local.agents.hook, neural_memory.local.agents.recall\n"
        "import neural_memory.local.agents.capture, neural_memory.local.agents.memory_client\n"
        "import neural_memory.local.agents.local_server, neural_memory.local.agents.repository\n"
        "import neural_memory.local.agents.hook_state, neural_memory.local.agents.relevance\n"
        "import neural_memory.local.agents.hook_settings, neural_memory.local.agents.memory_lines\n"
        "import neural_memory.local.agents.text_budget, neural_memory.local.agents.hook_flags\n"
        "import neural_memory.local.agents.transcript, neural_memory.local.agents.outbox_redaction\n"
        "import neural_memory.local.agents.child_process\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    # Then nothing outside the standard library is loaded (no pydantic, no model, no HTTP stack)
    foreign = [m for m in loaded if m not in sys.stdlib_module_names and m != "neural_memory" and not m.startswith("_")]
    assert foreign == [], foreign


def test_the_hooks_http_reads_a_reply_with_a_length_chunked_or_neither() -> None:
    from neural_memory.local.agents.memory_client import HttpError, _parsed
    from neural_memory.operations import quote

    assert _parsed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}trailing") == (200, b"{}")
    chunked = b"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunked += b'4\r\n{"a"\r\n3;x=1\r\n:1}\r\n0\r\n\r\n'
    assert _parsed(chunked) == (500, b'{"a":1}')
    assert _parsed(b"HTTP/1.0 404 Not Found\r\n\r\nnope") == (404, b"nope")
    for garbage in (b"", b"SSH-2.0-OpenSSH\r\n", b"HTTP/1.1 OK\r\n\r\n"):
        try:
            _parsed(garbage)
            raise AssertionError(garbage)
        except HttpError:
            pass
    assert quote("a/b c:é") == "a%2Fb%20c%3A%C3%A9"


def test_what_a_session_was_shown_is_kept_newest_last_per_session_and_forgotten_with_its_context(
    tmp_path: Path,
) -> None:
    import os
    import time

    from neural_memory.local.agents.hook_state import SHOWN_DAYS, SHOWN_LIMIT, HookState

    state = HookState(str(tmp_path))
    assert state.shown("s-1") == set()
    state.add_shown("s-1", ["a", "b"])
    state.add_shown("s-1", ["b", "c"])
    state.add_shown("s/2", ["z"])  # a session id is made a safe file name
    assert state.shown("s-1") == {"a", "b", "c"} and state.shown("s/2") == {"z"}
    # At most SHOWN_LIMIT ids, the newest kept
    state.add_shown("s-1", [f"id-{n}" for n in range(SHOWN_LIMIT + 5)])
    kept = state.shown("s-1")
    assert len(kept) == SHOWN_LIMIT and "a" not in kept and f"id-{SHOWN_LIMIT + 4}" in kept
    # A list that is not one reads as nothing shown
    (tmp_path / "shown" / "s-3.json").write_text("{not json")
    assert state.shown("s-3") == set()
    # Forgetting a session's list also removes the lists of sessions over for SHOWN_DAYS
    old = time.time() - (SHOWN_DAYS + 1) * 86400
    os.utime(tmp_path / "shown" / "s_2.json", (old, old))
    state.forget_shown("s-1")
    assert state.shown("s-1") == set() and state.shown("s/2") == set()
    assert state.shown("s-3") == set() and (tmp_path / "shown" / "s-3.json").exists()


def test_an_entry_cut_for_the_budget_counts_as_shown_only_for_the_ids_left_in_it() -> None:
    from neural_memory.local.agents.text_budget import Composer

    composer = Composer(40, "intro")  # 160 characters in all
    long_thread = "- session s-1: [t1] alice: " + "x" * 110 + " / [t2] claude-code: " + "y" * 200
    composer.section("Where it left off:", [long_thread], [["t1", "t2"]])
    assert composer.items == 1 and "[t1]" in composer.text() and "[t2]" not in composer.text()
    assert composer.shown == ["t1"]
