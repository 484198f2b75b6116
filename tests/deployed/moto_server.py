"""moto in server mode, as the deployed-shape suite's AWS, with resource-level IAM enforcement.

moto checks a call's permissions against the resource it names only for services that tell it
which resource that is (``_determine_resource``: SQS, IAM, STS); for the others it checks against
``*``, which never matches a statement naming an ARN, so every resource-scoped grant would fail.
Here Secrets Manager, DynamoDB and EventBridge name their resource too, so a role is allowed
exactly what its policy grants, as in AWS. Enforcement starts when the suite posts to
``/moto-api/reset-auth`` after setting up (``INITIAL_NO_AUTH_ACTION_COUNT``).

    python -m tests.deployed.moto_server PORT
"""

from __future__ import annotations

import sys
import threading

from moto.dynamodb.responses import DynamoHandler
from moto.events.responses import EventsHandler
from moto.secretsmanager.responses import SecretsManagerResponse
from moto.server import ThreadedMotoServer

ACCOUNT = "123456789012"
REGION = "us-east-1"


def _secret(self: SecretsManagerResponse) -> str:
    secret = self.backend.secrets.get(self._get_param("SecretId") or "")
    return secret.arn if secret is not None else "*"


def _table(self: DynamoHandler) -> str:
    name = self._get_param("TableName")
    return f"arn:aws:dynamodb:{self.region}:{self.current_account}:table/{name}" if name else "*"


def _bus(self: EventsHandler) -> str:
    entries = self._get_param("Entries") or [{}]
    name = self._get_param("EventBusName") or entries[0].get("EventBusName") or "default"
    return name if name.startswith("arn:") else f"arn:aws:events:{self.region}:{self.current_account}:event-bus/{name}"


SecretsManagerResponse._determine_resource = _secret  # type: ignore[attr-defined]
DynamoHandler._determine_resource = _table  # type: ignore[attr-defined]
EventsHandler._determine_resource = _bus  # type: ignore[attr-defined]


def main() -> None:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=int(sys.argv[1]), verbose=False)
    server.start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
