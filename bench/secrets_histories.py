"""What redaction takes out of real histories: every observation ``import git`` makes of a clone,
redacted as a write redacts it, each finding printed in its context to be looked at.

    python -m bench.secrets_histories /work/repos/NAME[=owner/name] ... [--limit N]

Prints, per history, the observations read, how many had something redacted, and each finding
(field, kind, the text around it with the finding marked); the detector's false positives on real
engineering text are whatever of these is not a secret (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from neural_memory.redaction.detectors import find_secrets
from neural_memory.redaction.observations import IDENTIFIERS, redact


def _texts(observation: object) -> list[tuple[str, str]]:
    """Each scanned field's text, named."""
    from neural_memory.models import ObservationIn

    assert isinstance(observation, ObservationIn)
    texts = [(name, getattr(observation, name) or "") for name in ("title", "content", "url", *IDENTIFIERS)]
    texts += [(f"metadata.{key}", str(value)) for key, value in (observation.metadata or {}).items()]
    texts += [("codeRefs", path) for ref in observation.code_refs or [] for path in ref.paths]
    return texts


def main() -> None:
    from neural_memory.local.history.git import GitHistory
    from neural_memory.local.ingest.files import load_document

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("clones", nargs="+", help="a clone, or clone=owner/name when its origin does not say")
    parser.add_argument("--limit", type=int, default=0, help="observations per history at most (0: all)")
    args = parser.parse_args()
    for clone in args.clones:
        path, _, repo = clone.partition("=")
        read = redacted = 0
        for origin, document in GitHistory(Path(path), repo=repo or None).events():
            for observation in load_document(document, origin).observations:
                read += 1
                if not redact(observation).redactions:
                    continue
                redacted += 1
                for field, text in _texts(observation):
                    for f in find_secrets(text):
                        context = text[max(0, f.start - 60) : f.start] + "«" + text[f.start : f.end] + "»"
                        print(f"  {observation.id} {field} {f.kind}: {(context + text[f.end : f.end + 40])!r}")
            if args.limit and read >= args.limit:
                break
        print(f"{path}: {read} observations, {redacted} with something redacted")


if __name__ == "__main__":
    main()
