"""The Lambda layer: built from the lock, within budget, nothing the runtime has, no bytecode for
another interpreter, and the same on every build."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from infra.layer_build import BUDGET_BYTES, LOCK, RUNTIME_LOCK, build_layer, layer_size

if TYPE_CHECKING:
    from pathlib import Path

NOT_IN_LAYER = ("boto3", "botocore", "s3transfer", "grpc", "google", "fastavro", "tokenizers", "huggingface_hub")


def test_every_pin_of_the_locks_is_exact_and_hashed() -> None:
    for lock in (LOCK, RUNTIME_LOCK):
        text = "\n".join(line for line in lock.read_text().splitlines() if not line.startswith("#"))
        entries = re.split(r"\n(?=[A-Za-z])", text)
        entries = [e for e in entries if e.strip()]
        assert entries, lock
        for entry in entries:
            assert re.match(r"^[A-Za-z0-9_.-]+==\S+ \\", entry), entry
            assert "--hash=sha256:" in entry, entry


def test_the_lambda_layer_is_within_budget_and_holds_only_what_lambda_can_use(lambda_layer: Path) -> None:
    python = lambda_layer / "python"
    assert layer_size(lambda_layer) <= BUDGET_BYTES
    top = {path.name for path in python.iterdir()}
    assert not top & set(NOT_IN_LAYER), top & set(NOT_IN_LAYER)
    assert not any(name.startswith(("boto3", "botocore", "opensearch_protobufs")) for name in top)
    assert "neural_memory" in top and "functions" not in top
    tags = {part for pyc in python.rglob("*.pyc") for part in pyc.name.split(".") if part.startswith("cpython-")}
    assert tags <= {"cpython-313"}, tags  # bytecode for Lambda's interpreter or none; never the host's
    assert all("aarch64" in so.name for so in python.rglob("*.so"))  # native code for Lambda's arm64


def test_two_builds_give_the_same_files_and_versions(lambda_layer: Path, tmp_path: Path) -> None:
    again = build_layer("lambda", tmp_path / "again")

    def listing(root: Path) -> dict[str, int]:
        return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}

    first, second = listing(lambda_layer), listing(again)
    assert first == second
    versions = sorted(p for p in first if p.endswith(".dist-info/METADATA"))
    assert versions and versions == sorted(p for p in second if p.endswith(".dist-info/METADATA"))


def test_the_host_layer_has_the_same_distributions_as_the_lambda_layer(lambda_layer: Path, host_layer: Path) -> None:
    def distributions(root: Path) -> set[str]:
        return {p.name for p in (root / "python").glob("*.dist-info")}

    assert distributions(host_layer) == distributions(lambda_layer)


def test_lock_lines_name_no_distribution_twice() -> None:
    names = [m.group(1).lower() for m in re.finditer(r"^([A-Za-z0-9_.-]+)==", LOCK.read_text(), re.M)]
    assert len(names) == len(set(names))
