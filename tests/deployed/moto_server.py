"""moto in server mode, as the deployed-shape suite's AWS, with resource-level IAM enforcement.

moto checks a call's permissions against the resource it names only for services that tell it
which resource that is (``_determine_resource``: SQS, IAM, STS); for the others it checks against
``*``, which never matches a statement naming an ARN, so every resource-scoped grant would fail.
Here Secrets Manager, DynamoDB and EventBridge name their resource too, so a role is allowed
exactly what its policy grants, as in AWS. Enforcement starts when the suite posts to
``/moto-api/reset-auth`` after setting up (``INITIAL_NO_AUTH_ACTION_COUNT``).

moto evaluates no ``events:source`` condition (it supplies no value for it, so any source
passes). AWS authorizes PutEvents per entry: an entry whose source the caller's policies do not
allow fails alone with ``NotAuthorizedForSourceException``, the others go on the bus. Here too.

    python -m tests.deployed.moto_server PORT
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

from moto import settings
from moto.core.authorization import ActionAuthenticatorMixin
from moto.dynamodb.responses import DynamoHandler
from moto.events.responses import EventsHandler
from moto.iam.access_control import IAMPolicy, IAMPolicyStatement, PermissionResult, create_access_key
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


def _may_put(self: EventsHandler, source: str) -> bool:
    """Whether the caller's policies allow PutEvents on the bus for an entry of ``source``: a
    statement whose ``events:source`` condition this source fails does not apply; deny wins."""
    if ActionAuthenticatorMixin.request_count < settings.INITIAL_NO_AUTH_ACTION_COUNT:
        return True  # still setting up: nothing is enforced yet
    key_id = self.headers["Authorization"].split("Credential=", 1)[1].split("/", 1)[0]
    caller = create_access_key(self.current_account, "aws", key_id, self.headers)
    context = {"events:source": source}
    allowed = False
    for policy in caller.collect_policies():
        document: Any = IAMPolicy(policy)._policy_json
        statements = document["Statement"] if isinstance(document["Statement"], list) else [document["Statement"]]
        for raw in statements:
            statement = IAMPolicyStatement(raw)
            if not statement._check_conditions(context):
                continue
            verdict = statement.is_action_permitted("events:PutEvents", _bus(self), None, context)
            if verdict == PermissionResult.DENIED:
                return False
            allowed = allowed or verdict == PermissionResult.PERMITTED
    return allowed


def _put_events(self: EventsHandler) -> str:
    entries = self._get_param("Entries") or []
    permitted = [_may_put(self, str(entry.get("Source"))) for entry in entries]
    put = iter(self.events_backend.put_events([e for e, ok in zip(entries, permitted, strict=True) if ok]))
    refused = {
        "ErrorCode": "NotAuthorizedForSourceException",
        "ErrorMessage": "Not authorized to put events with this source onto this event bus.",
    }
    results = [next(put) if ok else dict(refused) for ok in permitted]
    return json.dumps({"FailedEntryCount": sum("ErrorCode" in r for r in results), "Entries": results})


SecretsManagerResponse._determine_resource = _secret  # type: ignore[attr-defined]
DynamoHandler._determine_resource = _table  # type: ignore[attr-defined]
EventsHandler._determine_resource = _bus  # type: ignore[attr-defined]
EventsHandler.put_events = _put_events  # type: ignore[method-assign]


def main() -> None:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=int(sys.argv[1]), verbose=False)
    server.start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
