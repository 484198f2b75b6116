"""``pip install 'neural-memory[client]'`` in a fresh venv, from this checkout: the client imports
and works from httpx and pydantic alone, and none of the service's providers is installed.

It builds a wheel from a copy of the checkout's sources (PyPI gives setuptools, httpx and pydantic),
so it takes about a minute; it runs with the rest of ``make test``."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = (
    "anthropic",
    "cohere",
    "opensearch-py",
    "boto3",
    "botocore",
    "aws-lambda-powertools",
    "pydantic-settings",
    "numpy",
    "onnxruntime",
    "mcp",
)


@pytest.mark.install
def test_the_client_extra_installs_without_the_providers(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(
        ROOT / "layers" / "core" / "python",
        source / "layers" / "core" / "python",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / ("Scripts" if sys.platform == "win32" else "bin") / "python"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run([*pip, "install", "--quiet", f"{source}[client]"], check=True, cwd=tmp_path, timeout=600)

    listed = subprocess.run([*pip, "list", "--format=freeze"], check=True, capture_output=True, text=True)
    installed = {line.split("==")[0].lower() for line in listed.stdout.splitlines()}
    assert {"neural-memory", "httpx", "pydantic"} <= installed
    assert installed.isdisjoint(PROVIDERS), installed & set(PROVIDERS)
    assert not any(name.startswith("functions") for name in installed)

    # The README's import, and a client made: no provider module loads, no functions package exists.
    probe = (
        "import sys, httpx\n"
        "from neural_memory.local.client import NeuralMemoryClient, NotFound\n"
        "transport = httpx.MockTransport(lambda request: httpx.Response(200, json={}))\n"
        "NeuralMemoryClient('http://example.test', api_key='nm_x', transport=transport).close()\n"
        "loaded = {m.split('.')[0] for m in sys.modules}\n"
        "assert not loaded & {'anthropic', 'cohere', 'opensearchpy', 'boto3', 'aws_lambda_powertools'}, loaded\n"
        "import importlib.util\n"
        "assert importlib.util.find_spec('functions') is None\n"
        "print('ok')\n"
    )
    ran = subprocess.run([str(python), "-c", probe], check=True, capture_output=True, text=True, cwd=tmp_path)
    assert ran.stdout.strip() == "ok"
