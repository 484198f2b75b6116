"""Cold import of every Lambda handler as Lambda does it: a fresh interpreter whose import path is
only the function's own folder, the layer built from the lock (for this host), and the runtime's
boto3 — with the Lambda environment (tracing on, the OpenSearch store, Cohere embeddings).

    python -m bench.cold_import [--runs 7] [--base REV]

Prints, per handler, the median import time and any heavy module loaded at import. The host
layer is compiled for this interpreter first, as the Lambda layer is compiled for CPython 3.13,
so the numbers are imports, not compilation. With ``--base``, the same for that revision's handlers
and layer (built in a temporary worktree), its interpreters alternated with this tree's one by
one, so a busy moment weighs on both sides alike; the ratio is this tree's median over the base's.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from infra.layer_build import build_layer, build_runtime

ROOT = Path(__file__).resolve().parents[1]
HANDLERS = tuple(sorted(app.parent.name for app in (ROOT / "functions").glob("*/app.py")))
HEAVY = ("numpy", "onnxruntime", "cohere", "anthropic", "openai", "boto3", "opensearchpy", "tokenizers", "aws_xray_sdk")
LAMBDA_ENV = {
    "AWS_LAMBDA_FUNCTION_NAME": "cold-import",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "POWERTOOLS_SERVICE_NAME": "neural-memory",
    "NM_STORE": "opensearch",
    "NM_OPENSEARCH_URL": "https://search.example.com",
    "NM_EMBEDDER": "cohere",
}
_PROBE = """
import sys, time, json
sys.path[:0] = {paths!r}
began = time.perf_counter()
import app
took = time.perf_counter() - began
print(json.dumps({{"seconds": took, "heavy": [m for m in {heavy!r} if m in sys.modules]}}))
"""


def import_once(asset: Path, layer: Path, runtime: Path) -> tuple[float, list[str]]:
    """Seconds to import ``asset``'s ``app`` in a fresh, isolated interpreter, and the heavy modules loaded."""
    paths = [str(asset), str(layer / "python"), str(runtime)]
    code = _PROBE.format(paths=paths, heavy=HEAVY)
    env = {"PATH": os.environ.get("PATH", ""), **LAMBDA_ENV}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True, env=env, cwd=asset
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["seconds"]), list(result["heavy"])


def prepare(root: Path) -> tuple[Path, Path]:
    """The host layer and runtime, compiled for this interpreter."""
    layer = build_layer("host", root / "layer")
    runtime = build_runtime(root / "runtime")
    for folder in (layer, runtime, ROOT / "functions"):
        compileall.compile_dir(folder, quiet=1, workers=0)
    return layer, runtime


def prepare_base(revision: str, root: Path) -> tuple[Path, Path]:
    """``revision``'s functions folder and host layer (its own build), in a worktree under ``root``."""
    tree = root / "base"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), revision], check=True)
    layer = tree / "layer"
    subprocess.run(
        [sys.executable, "-m", "infra.layer_build", "--target", "host", "--out", str(layer)], cwd=tree, check=True
    )
    for folder in (layer, tree / "functions"):
        compileall.compile_dir(folder, quiet=1, workers=0)
    return tree / "functions", layer


def compare(revision: str, runs: int, root: Path, layer: Path, runtime: Path) -> None:
    """This tree's handlers against ``revision``'s, interpreters alternated."""
    base_functions, base_layer = prepare_base(revision, root)
    try:
        for name in HANDLERS:
            if not (base_functions / name / "app.py").is_file():
                continue
            head: list[float] = []
            base: list[float] = []
            for _ in range(runs):
                head.append(import_once(ROOT / "functions" / name, layer, runtime)[0] * 1000)
                base.append(import_once(base_functions / name, base_layer, runtime)[0] * 1000)
            mine, theirs = statistics.median(head), statistics.median(base)
            print(
                f"{name:<13} median {mine:4.0f} ms, base {theirs:4.0f} ms: x{mine / theirs:.3f} ({runs} each)",
                flush=True,
            )
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(root / "base")], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--base", help="a revision to compare with (its interpreters alternated with this tree's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        layer, runtime = prepare(Path(tmp))
        if args.base:
            compare(args.base, args.runs, Path(tmp), layer, runtime)
            return
        for name in HANDLERS:
            runs = [import_once(ROOT / "functions" / name, layer, runtime) for _ in range(args.runs)]
            times = sorted(seconds * 1000 for seconds, _ in runs)
            heavy = sorted({m for _, loaded in runs for m in loaded})
            print(
                f"{name:<13} median {statistics.median(times):4.0f} ms  (min {times[0]:.0f}, max {times[-1]:.0f}, "
                f"{args.runs} fresh interpreters); heavy modules at import: {', '.join(heavy) or 'none'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
