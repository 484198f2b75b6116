"""An MCP session's first requests on a cold ``/mcp`` function, as Lambda runs it: a fresh
interpreter with only the function's folder, the host layer built from the lock and the runtime's
boto3 on its path (``bench.cold_import``), the Lambda environment; then API Gateway's proxy events
for ``initialize`` and ``tools/list``, as a client's connection sends them, each timed.

    python -m bench.mcp_cold_start [--runs 7]

Prints the medians (import, first ``initialize``, then ``tools/list``) and the heavy modules loaded
by then: none of the store's or a provider's, since the handshake and the listing build no store.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.cold_import import HEAVY, LAMBDA_ENV, ROOT, prepare

_PROBE = """
import sys, time, json, copy
sys.path[:0] = {paths!r}
event = json.loads({event!r})

class Context:
    function_name = "mcp"; function_version = "$LATEST"; memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mcp"
    log_group_name = "/aws/lambda/mcp"; log_stream_name = "bench"; aws_request_id = "bench"
    def get_remaining_time_in_millis(self): return 28000

def message(body):
    sent = copy.deepcopy(event); sent["body"] = json.dumps(body); return sent

began = time.perf_counter()
import app
imported = time.perf_counter()
hello = {{"protocolVersion": "2025-06-18", "capabilities": {{}}, "clientInfo": {{"name": "bench", "version": "0"}}}}
first = app.lambda_handler(message({{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}}), Context())
initialized = time.perf_counter()
listed = app.lambda_handler(message({{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}}), Context())
done = time.perf_counter()
assert first["statusCode"] == listed["statusCode"] == 200, (first, listed)
assert len(json.loads(listed["body"])["result"]["tools"]) == 7
print(json.dumps({{"import": imported - began, "initialize": initialized - imported, "list": done - initialized,
                  "heavy": [m for m in {heavy!r} if m in sys.modules]}}))
"""


def _event() -> str:
    event = json.loads((ROOT / "events" / "api" / "observation_get.json").read_text())
    event.update(resource="/mcp", path="/mcp", httpMethod="POST", pathParameters=None)
    event["headers"] = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    event["multiValueHeaders"] = {name: [value] for name, value in event["headers"].items()}
    event["requestContext"].update(resourcePath="/mcp", httpMethod="POST")
    return json.dumps(event)


def run_once(layer: Path, runtime: Path) -> dict[str, object]:
    asset = ROOT / "functions" / "mcp"
    code = _PROBE.format(paths=[str(asset), str(layer / "python"), str(runtime)], event=_event(), heavy=HEAVY)
    env = {"PATH": os.environ.get("PATH", ""), **LAMBDA_ENV, "POWERTOOLS_METRICS_DISABLED": "true"}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True, env=env, cwd=asset
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        layer, runtime = prepare(Path(tmp))
        runs = [run_once(layer, runtime) for _ in range(args.runs)]
    for step in ("import", "initialize", "list"):
        times = sorted(float(str(run[step])) * 1000 for run in runs)
        print(f"{step:<10} median {statistics.median(times):5.1f} ms  (min {times[0]:.1f}, max {times[-1]:.1f})")
    heavy = sorted({str(m) for run in runs for m in run["heavy"]})  # type: ignore[attr-defined]
    print(f"{args.runs} fresh interpreters; heavy modules loaded by the end: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
