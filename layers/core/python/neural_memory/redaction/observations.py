"""Secrets out of an observation before anything keeps it: every write path (HTTP, the bus and its
queue, webhooks, files, imports, MCP ``remember``, the agents' hooks) reaches the store through
``Service.index``, which runs this first, so the store, the embedder, the embedding cache, the
full-text index and the logs only ever see the redacted text.

A secret becomes a typed placeholder, ``[redacted:github-token]`` (no space: it also stands in a
URL), and the observation records what was redacted as ``field:kind`` (``content:github-token``),
never the value. A ``<private>…</private>`` span (an agent's convention for what must not be
kept; any case, spaces in its tags; unclosed, to the end: ``redaction.private``, the hook's reading
too) becomes ``[redacted:private]``. Scanned: the title, the content, the
URL, every string in the metadata (read with its key, so ``{"password": "…"}`` is an assignment)
and every code-ref string; the identifiers too (``id``, ``parentId``, ``supersedes``, ``sessionId``,
``actorName``, ``source``, ``sourceType``, ``observationType``): a secret in one becomes
``redacted-<kind>-<digest>`` (``redaction.identifiers``), so an id that held one is replaced by a
stable derived id, which the reply returns and under which ``GET``/``DELETE`` of the original
id find it.

Under a workspace's ``refuse`` policy the write is refused instead (``SecretRefused``: a 400 naming
the field and the kind), and nothing of the batch is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.errors import InvalidInput
from neural_memory.redaction.detectors import find_secrets
from neural_memory.redaction.identifiers import redact_identifier
from neural_memory.redaction.private import without_private

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pydantic import JsonValue

    from neural_memory.models import CodeRef, ObservationIn, Redaction, SecretsPolicy

# The identifiers redaction reaches, by their name in the model and on the wire.
IDENTIFIERS = {
    "id": "id", "parent_id": "parentId", "session_id": "sessionId", "actor_name": "actorName",
    "source": "source", "source_type": "sourceType", "observation_type": "observationType",
}  # fmt: skip
FREE_TEXT_IDENTIFIERS = frozenset({"actor_name", "session_id"})  # any text: read whole, never pre-filtered


def placeholder(kind: str) -> str:
    """What stands where a secret of ``kind`` was."""
    return f"[redacted:{kind}]"


class SecretRefused(InvalidInput):
    """A write holding a secret, in a workspace whose policy refuses them (names the field and the
    kind, never the value)."""

    code = "secret_refused"

    def __init__(self, field: str, kind: str) -> None:
        super().__init__(field, f"holds a secret ({kind}); this workspace refuses secrets instead of redacting them")
        self.kind = kind


@dataclass(frozen=True, slots=True)
class Redacted:
    """An observation as it may be kept, and what was taken out of it (``field:kind`` each)."""

    observation: ObservationIn
    redactions: tuple[str, ...]


def redact_text(text: str) -> tuple[str, list[str]]:
    """``text`` with its private spans and secrets replaced by placeholders, and their kinds in order."""
    text, private = without_private(text)
    kinds = ["private"] * private
    findings = find_secrets(text)
    if not findings:
        return text, kinds
    pieces: list[str] = []
    at = 0
    for finding in findings:
        pieces += [text[at : finding.start], placeholder(finding.kind)]
        kinds.append(finding.kind)
        at = finding.end
    pieces.append(text[at:])
    return "".join(pieces), kinds


def _redact_value(key: str, value: str) -> tuple[str, list[str]]:
    """A metadata string, read as ``key=value`` so that the key can name it a secret; only the
    value's part of the result is kept."""
    redacted, kinds = redact_text(f"{key}={value}")
    if not kinds:
        return value, kinds
    prefix = f"{key}="
    if redacted.startswith(prefix):
        return redacted[len(prefix) :], kinds
    return redact_text(value)  # a placeholder took the key too: redact the value alone


def _redact_json(value: JsonValue, path: str, found: list[str], key: str = "") -> JsonValue:
    if isinstance(value, str):
        text, kinds = _redact_value(key, value) if key else redact_text(value)
        found += [f"{path}:{kind}" for kind in kinds]
        return text
    if isinstance(value, dict):
        return {k: _redact_json(v, f"{path}.{k}", found, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_json(v, path, found, key) for v in value]
    return value


def redact_metadata(metadata: Mapping[str, JsonValue]) -> tuple[dict[str, JsonValue], list[str]]:
    """Metadata with every string redacted (each read with its key), and ``metadata.<key>:kind``
    for each secret taken out."""
    found: list[str] = []
    redacted = _redact_json(dict(metadata), "metadata", found)
    assert isinstance(redacted, dict)
    return redacted, found


def redacted_document(document: JsonValue) -> JsonValue:
    """Any JSON document (a bus event, a failure report's line) with every string redacted, each
    read with its key."""
    return _redact_json(document, "document", [])


def _redact_code_refs(refs: Sequence[CodeRef], found: list[str]) -> list[CodeRef]:
    """Code refs with secrets out of their paths; a ref whose repository holds one is dropped (a
    placeholder is not an ``owner/name``)."""
    kept = []
    for ref in refs:
        _, repo_kinds = redact_text(ref.repository)
        if repo_kinds:
            found += [f"codeRefs:{kind}" for kind in repo_kinds]
            continue
        paths = []
        for path in ref.paths:
            text, kinds = redact_text(path)
            found += [f"codeRefs:{kind}" for kind in kinds]
            paths.append(text)
        kept.append(ref.model_copy(update={"paths": paths}))
    return kept


def _redact_identifiers(observation: ObservationIn, update: dict[str, object], found: list[str]) -> None:
    for name, wire in IDENTIFIERS.items():
        value = getattr(observation, name)
        if value:
            text, kinds = redact_identifier(value, slug=name not in FREE_TEXT_IDENTIFIERS)
            if kinds:
                update[name] = text
                found += [f"{wire}:{kind}" for kind in kinds]
    if observation.supersedes:
        ids = []
        for value in observation.supersedes:
            text, kinds = redact_identifier(value)
            ids.append(text)
            found += [f"supersedes:{kind}" for kind in kinds]
        if ids != observation.supersedes:
            update["supersedes"] = ids


def redact_fields(
    texts: Mapping[str, str | None],
    metadata: Mapping[str, JsonValue] | None,
    update: dict[str, object],
    found: list[str],
) -> None:
    """Secrets out of ``texts`` (field name → value) and ``metadata``: each changed field into
    ``update``, what was taken out (``field:kind``) into ``found``. An observation's scanned fields
    (``redact``) and a stored record's (``records.redact_record``)."""
    for name, value in texts.items():
        if value:
            text, kinds = redact_text(value)
            if kinds:
                update[name] = text
                found += [f"{name}:{kind}" for kind in kinds]
    if metadata:
        redacted, kinds = redact_metadata(metadata)
        if kinds:
            update["metadata"] = redacted
            found += kinds


def redact(observation: ObservationIn) -> Redacted:
    """The observation with every secret of its scanned fields replaced (``redact_text``)."""
    found: list[str] = []
    update: dict[str, object] = {}
    _redact_identifiers(observation, update, found)
    redact_fields(
        {n: getattr(observation, n) for n in ("title", "content", "url")}, observation.metadata, update, found
    )
    if observation.code_refs:
        before = len(found)
        refs = _redact_code_refs(observation.code_refs, found)
        if len(found) > before:
            update["code_refs"] = refs or None
    if not found:
        return Redacted(observation, ())
    return Redacted(observation.model_copy(update=update), tuple(dict.fromkeys(found)))


def redact_all(observations: Sequence[ObservationIn], policy: SecretsPolicy) -> list[Redacted]:
    """Each observation redacted, in order; under ``refuse``, ``SecretRefused`` for the first one
    holding a secret (``observations.N.field``), before anything is written."""
    redacted = [redact(o) for o in observations]
    if policy == "refuse":
        for n, item in enumerate(redacted):
            if item.redactions:
                field, kind = item.redactions[0].split(":", 1)
                raise SecretRefused(f"observations.{n}.{_wire_name(field)}", kind)
    return redacted


def _wire_name(field: str) -> str:
    return {"code_refs": "codeRefs"}.get(field, field)


def redactions_out(stored: Sequence[str] | None) -> list[Redaction] | None:
    """The wire form of a record's ``redactions`` (``field:kind`` each)."""
    from neural_memory.models import Redaction

    if not stored:
        return None
    return [Redaction(field=item.split(":", 1)[0], kind=item.split(":", 1)[1]) for item in stored]
