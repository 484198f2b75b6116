"""A Lambda container for one function: run as ``python -I -S runner.py '<json sys.path>'`` with the
function's environment. It imports ``app`` from the function's asset, then serves invocations:
one JSON request per stdin line (``event``, ``request_id``, ``trace_id``), one JSON reply per
stdout line (``result``, or ``errorType`` and ``errorMessage`` as Lambda reports them). Anything
the function prints (its logs) goes to stderr."""

import json
import os
import sys
import time
import traceback

sys.path[:0] = json.loads(sys.argv[1])
replies = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)  # the function's own stdout (its JSON logs) goes to stderr
# As in Lambda, what a function prints (its metrics' EMF lines) reaches its log at once, not when
# a pipe's buffer fills
sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]


class Context:
    """The attributes of Lambda's context object that handlers and Powertools read."""

    def __init__(self, request_id: str) -> None:
        self._deadline = time.monotonic() + float(os.environ["TEST_FUNCTION_TIMEOUT_S"])
        self.aws_request_id = request_id
        self.function_name = os.environ["AWS_LAMBDA_FUNCTION_NAME"]
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = int(os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"])
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self.log_stream_name = "deployed-shape"

    def get_remaining_time_in_millis(self) -> int:
        """As in Lambda: the function's timeout less the time this invocation has run."""
        return max(0, int((self._deadline - time.monotonic()) * 1000))


try:
    import app  # type: ignore[import-not-found]
except Exception as exc:  # an init error, as Lambda reports it
    replies.write(json.dumps({"errorType": type(exc).__name__, "errorMessage": str(exc), "init": True}) + "\n")
    traceback.print_exc()
    sys.exit(1)
replies.write(json.dumps({"ready": True}) + "\n")

for line in sys.stdin:
    request = json.loads(line)
    os.environ["_X_AMZN_TRACE_ID"] = request["trace_id"]
    try:
        reply = {"result": app.lambda_handler(request["event"], Context(request["request_id"]))}
    except Exception as exc:
        traceback.print_exc()
        reply = {"errorType": type(exc).__name__, "errorMessage": str(exc)}
    replies.write(json.dumps(reply, default=str) + "\n")
