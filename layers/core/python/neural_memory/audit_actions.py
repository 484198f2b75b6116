"""What the audit trail records, by name (apart, so the CLI's parser reads it without the models)."""

from typing import Literal, get_args

Action = Literal["write", "change", "delete", "promote", "scrub", "purge", "key.create", "key.revoke"]
ACTIONS: tuple[str, ...] = get_args(Action)
