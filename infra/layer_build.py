"""The Lambda layer, built from the lock file, for Lambda (arm64, CPython 3.13) or for this host
(the deployed-shape tests run handlers from it), and the lock file itself.

- ``requirements/layer.txt`` pins every distribution the functions import, with the sha256 of
  its wheel for both platforms; the build installs exactly those (``--no-deps
  --require-hashes``), so the layer does not depend on the day it is built.
- Nothing the Lambda runtime already ships (boto3, botocore and their pure-Python dependencies:
  ``requirements/lambda-runtime.txt`` pins the copy the host build stands in with).
- Bytecode only for the interpreter that runs it: CPython 3.13 when one is on this machine
  (hash-based, so two builds are identical), else none; never the build host's.

``python -m infra.layer_build --target lambda --out .build/layers/core`` (``make build``);
``python -m infra.layer_build lock`` rewrites the hashes after a pin changes (``make lock``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Literal

from infra.layer_contents import PACKAGE, layer_files

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "layer.txt"
RUNTIME_LOCK = ROOT / "requirements" / "lambda-runtime.txt"
CACHE = ROOT / ".build" / "cache"
# Lambda's Amazon Linux 2023 has glibc 2.34: any of these wheel tags runs there.
LAMBDA_PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_28_aarch64", "manylinux_2_34_aarch64")
LAMBDA_PYTHON = "3.13"
# Lambda allows 250 MB unzipped; the budget keeps the layer small on purpose. The openai SDK, the
# LLM fallback's second provider, takes 16.7 MB with bytecode, 5.6 MB without its other APIs
# (below): 54.5 MB in all.
BUDGET_BYTES = 60 * 1024 * 1024
# The openai SDK's other APIs, which its Chat Completions path (the only one the functions call:
# providers/llm/openai_tool.py) never imports: their resources and types, about 70% of its source.
# tests/layer/test_openai_path.py runs that path from the built layer (a forced function call
# answered, refused and failed every way the provider handles) and fails if one of these is
# imported; tests/deployed answers through OpenAI from it.
OPENAI_UNUSED = tuple(
    f"{kind}/{api}"
    for kind in ("resources", "types")
    for api in (
        "admin", "audio", "beta", "containers", "conversations", "evals", "fine_tuning", "live", "realtime",
        "safety", "skills", "uploads", "vector_stores", "webhooks",
    )
) + ("resources/responses", "lib/beta", "lib/live", "lib/responses_websocket")  # fmt: skip

Target = Literal["lambda", "host"]
_PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)")


def _say(message: str) -> None:
    print(f"layer: {message}", file=sys.stderr, flush=True)


def _pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def _platform_args(target: Target) -> list[str]:
    if target == "host":
        return []
    platforms = [arg for platform in LAMBDA_PLATFORMS for arg in ("--platform", platform)]
    return [*platforms, "--implementation", "cp", "--python-version", LAMBDA_PYTHON, "--only-binary=:all:"]


def _digest(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _install(lock: Path, target: Target) -> Path:
    """The locked distributions, installed once per lock content and target under ``.build/cache``."""
    done = CACHE / f"{lock.stem}-{target}-{_digest(lock)}"
    if not done.exists():
        _say(f"installing {lock.relative_to(ROOT)} for {target}")
        CACHE.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{done.name}-", dir=CACHE))
        quiet = ["--quiet", "--no-deps", "--require-hashes", "--no-compile"]
        _pip("install", *quiet, "--target", str(staging), *_platform_args(target), "-r", str(lock))
        shutil.rmtree(staging / "bin", ignore_errors=True)
        staging.replace(done)
    return done


def _lambda_interpreter() -> str | None:
    """A working CPython 3.13 on this machine (PATH, then pyenv's versions), or None."""
    found = shutil.which(f"python{LAMBDA_PYTHON}")
    candidates = [found] if found else []
    candidates += sorted(
        str(p) for p in Path.home().glob(f".pyenv/versions/{LAMBDA_PYTHON}.*/bin/python{LAMBDA_PYTHON}")
    )
    for candidate in candidates:
        probe = [candidate, "-c", "import sys; print(sys.implementation.cache_tag)"]
        result = subprocess.run(probe, capture_output=True, text=True, check=False)
        if result.returncode == 0 and result.stdout.strip() == f"cpython-{LAMBDA_PYTHON.replace('.', '')}":
            return candidate
    return None


def _compile_for_lambda(python_dir: Path) -> None:
    """CPython 3.13 bytecode, hash-based (no timestamps: identical on every build), if a 3.13
    interpreter is at hand; else the layer ships source only and Lambda compiles on import."""
    interpreter = _lambda_interpreter()
    if interpreter is None:
        _say(f"no python{LAMBDA_PYTHON} on this machine: the layer ships without bytecode")
        return
    _say(f"compiling for CPython {LAMBDA_PYTHON}")
    subprocess.run(
        # Paths in the bytecode are where Lambda mounts the layer, not where it was built.
        [
            interpreter,
            "-m",
            "compileall",
            "-q",
            "-j",
            "0",
            "--invalidation-mode",
            "unchecked-hash",
            "-s",
            str(python_dir),
            "-p",
            "/opt/python",
            str(python_dir),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def build_layer(target: Target, out: Path) -> Path:
    """``out/python``: the locked distributions and the part of ``neural_memory`` the functions import
    (``infra.layer_contents``) for ``target``; returns ``out``."""
    python_dir = out / "python"
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(_install(LOCK, target), python_dir)
    for unused in OPENAI_UNUSED:  # both targets: the deployed-shape tests run the host layer
        shutil.rmtree(python_dir / "openai" / unused, ignore_errors=True)
    for relative in layer_files():  # what the handlers import, transitively (infra/layer_contents.py)
        (python_dir / "neural_memory" / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PACKAGE / relative, python_dir / "neural_memory" / relative)
    if target == "lambda":
        _compile_for_lambda(python_dir)
        size = layer_size(out)
        _say(f"{size / 2**20:.1f} MB unzipped (budget {BUDGET_BYTES / 2**20:.0f} MB) in {out}")
    return out


def build_runtime(out: Path) -> Path:
    """What the Lambda Python runtime itself provides (boto3 and its dependencies), for the host:
    the deployed-shape tests put it on ``sys.path`` after the layer, as ``/var/runtime`` is."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(_install(RUNTIME_LOCK, "host"), out)
    return out


def layer_size(out: Path) -> int:
    """Bytes the layer takes unzipped (what Lambda counts against its limit)."""
    return sum(path.stat().st_size for path in out.rglob("*") if path.is_file())


def lock(path: Path = LOCK) -> None:
    """Rewrite the ``--hash`` lines of a lock file for its pins: every wheel of the pinned version
    for Lambda and for this host (pip accepts any one of them)."""
    lines = path.read_text().splitlines()
    header = [line for line in lines if line.startswith("#")]
    pins = [(m.group(1), m.group(2)) for line in lines if (m := _PIN.match(line.strip()))]
    out = [*header]
    with tempfile.TemporaryDirectory() as scratch:
        for name, version in pins:
            pin = f"{name}=={version}"
            _say(f"hashing {pin}")
            hashes = set()
            for target in ("lambda", "host"):
                where = Path(scratch) / f"{name}-{target}"
                binary = ["--only-binary=:all:"] if target == "host" else []
                _pip("download", "--quiet", "--no-deps", "-d", str(where), *_platform_args(target), *binary, pin)
                hashes |= {hashlib.sha256(wheel.read_bytes()).hexdigest() for wheel in where.iterdir()}
            out.append(f"{name}=={version} \\")
            out += [f"    --hash=sha256:{h} \\" for h in sorted(hashes)[:-1]]
            out.append(f"    --hash=sha256:{sorted(hashes)[-1]}")
    path.write_text("\n".join(out) + "\n")


def main() -> int:
    """``--target lambda|host --out DIR`` builds a layer; ``lock`` rewrites the lock files' hashes."""
    parser = argparse.ArgumentParser(prog="python -m infra.layer_build", description=__doc__)
    parser.add_argument("command", nargs="?", default="build", choices=["build", "lock"])
    parser.add_argument("--target", default="lambda", choices=["lambda", "host"])
    parser.add_argument("--out", default=str(ROOT / ".build" / "layers" / "core"))
    args = parser.parse_args()
    if args.command == "lock":
        lock(LOCK)
        lock(RUNTIME_LOCK)
        return 0
    out = build_layer(args.target, Path(args.out))
    if args.target == "lambda" and layer_size(out) > BUDGET_BYTES:
        _say("over budget")
        return 1
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    sys.exit(main())
