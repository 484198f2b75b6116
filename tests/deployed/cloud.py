"""The deployed shape, offline: the synthesized template's resources stood up on local stand-ins
(moto in server mode with IAM enforcement, osmem-server behind a recording proxy), and each of the
template's functions run as Lambda runs it — a process whose import path is its own asset, the
layer built from the lock and the runtime's boto3; exactly the environment the template declares
(references resolved to the stand-ins); and credentials of a role holding exactly the template's
policies for that function.

Deliberate differences from AWS, each because the real thing is not reachable here:
- roles trust the suite's own user, which assumes them as Lambda would;
- the OpenSearch endpoint speaks plain HTTP (the template's ``https://`` becomes ``http://``);
- Cohere, Anthropic and OpenAI are unreachable: their SDKs' base URLs point at a closed local
  port (``CO_API_URL``, ``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``), so provider calls fail fast,
  as in an outage; a test that needs Cohere points ``CO_API_URL`` at ``CohereStandIn``, which
  answers its embed API and counts what it was asked to embed;
- EventBridge authorizes ``events:source`` conditions per entry (``moto_server.py``), as AWS does.
The workspace routes of webhook events are stack configuration: the template is synthesized with
``ROUTES`` as its ``ingest_routes`` context, as ``cdk deploy -c ingest_routes=...`` would.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
from neural_memory.providers.embeddings.cohere import DIMENSIONS

ROOT = Path(__file__).resolve().parents[2]
ACCOUNT = "123456789012"
REGION = "us-east-1"
FUNCTIONS_DIR = ROOT / "functions"
RUNNER = Path(__file__).with_name("runner.py")
PSEUDO = {"AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com"}
ROUTES = {"github:acme/console": "acme", "vercel:team_3Qp9kZ2mW8xV1nB4": "acme", "neural-memory:acme": "acme"}
SUITE_USER = f"arn:aws:iam::{ACCOUNT}:user/suite"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# ----------------------------------------------------------------------------- the template


class Resolver:
    """CloudFormation's intrinsic functions over the values the stand-ins gave each resource."""

    def __init__(self) -> None:
        self.refs: dict[str, str] = dict(PSEUDO)
        self.attributes: dict[tuple[str, str], str] = {}

    def __call__(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self(item) for item in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                if arg not in self.refs:
                    raise KeyError(f"the suite has no stand-in for Ref {arg}: add one to tests/deployed/cloud.py")
                return self.refs[arg]
            if key == "Fn::GetAtt":
                if (arg[0], arg[1]) not in self.attributes:
                    raise KeyError(f"the suite has no stand-in for GetAtt {arg}: add one to tests/deployed/cloud.py")
                return self.attributes[(arg[0], arg[1])]
            if key == "Fn::Join":
                return str(self(arg[0])).join(str(self(part)) for part in arg[1])
            if key == "Fn::Select":
                return self(arg[1])[int(self(arg[0]))]
            if key == "Fn::Split":
                return str(self(arg[1])).split(str(self(arg[0])))
        return {key: self(item) for key, item in value.items()}


@dataclass
class Function:
    """One function of the template: its name (its folder under functions/), asset and role."""

    name: str
    logical_id: str
    properties: dict[str, Any]
    asset: Path
    role: str


def functions_of(template: dict[str, Any], outdir: Path) -> dict[str, Function]:
    """Every Lambda function of the template, by the name of the folder its code comes from."""
    names = sorted(p.name for p in FUNCTIONS_DIR.iterdir() if (p / "app.py").exists())
    found = {}
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Lambda::Function":
            continue
        name = next((n for n in names if f"{n.title()}Function" in logical_id), None)
        if name is None:
            raise AssertionError(f"{logical_id} is a function the deployed-shape suite has no driver for")
        # The code asset, as staged in the cloud assembly: asset.<hash>/, the hash named by the S3 key.
        asset = outdir / f"asset.{str(resource['Properties']['Code']['S3Key']).removesuffix('.zip')}"
        role = resource["Properties"]["Role"]["Fn::GetAtt"][0]
        found[name] = Function(name, logical_id, resource["Properties"], asset, role)
    return found


# ----------------------------------------------------------------------------- stand-ins


class MotoServer:
    """moto in its own process (``tests/deployed/moto_server.py``): AWS for the suite."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.deployed.moto_server", str(self.port)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self._process.stdout is not None and self._process.stdout.readline().strip() == "ready"

    def client(self, service: str, credentials: dict[str, str] | None = None) -> Any:
        keys = credentials or {"aws_access_key_id": "setup", "aws_secret_access_key": "setup"}
        return boto3.client(service, region_name=REGION, endpoint_url=self.url, **keys)

    def enforce_iam(self) -> None:
        """From now on every call must be signed by a known key and allowed by its policies."""
        request = urllib.request.Request(
            f"{self.url}/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"}
        )
        with urllib.request.urlopen(request, timeout=10):
            pass

    def close(self) -> None:
        self._process.terminate()
        self._process.wait(timeout=10)


class Recorder(ThreadingHTTPServer):
    """A threaded HTTP server that records what reaches it."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.seen: list[dict[str, Any]] = []
        self.address = f"127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()


class OpenSearchProxy(Recorder):
    """In front of osmem-server: forwards every request, and records its method, path and the
    access key that signed it (SigV4), to check them against the signer's grants."""

    def __init__(self, upstream: str) -> None:
        proxy = self

        class Forward(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                signed = self.headers.get("Authorization", "")
                key = signed.split("Credential=", 1)[1].split("/", 1)[0] if "Credential=" in signed else None
                proxy.seen.append({"method": self.command, "path": self.path.split("?", 1)[0], "key": key})
                headers = {k: v for k, v in self.headers.items() if k.lower() in {"content-type", "accept"}}
                request = urllib.request.Request(upstream + self.path, data=body, method=self.command, headers=headers)
                try:
                    with urllib.request.urlopen(request, timeout=30) as reply:
                        status, payload, kind = reply.status, reply.read(), reply.headers.get("Content-Type")
                except urllib.error.HTTPError as error:
                    status, payload, kind = error.code, error.read(), error.headers.get("Content-Type")
                self.send_response(status)
                self.send_header("Content-Type", kind or "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

            def log_message(self, format: str, *args: object) -> None:
                pass

        super().__init__(Forward)


class CohereStandIn(Recorder):
    """Cohere's v2 embed API on a local port, for the Cohere SDK of the functions (``CO_API_URL``):
    a unit vector per text (its words hashed into the model's dimension, so texts sharing words
    are near), and in ``seen`` each request's input type and texts: the provider calls a function
    really made. Any other path is a 404, as an unknown route is."""

    def __init__(self) -> None:
        stand_in = self

        class Embed(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if self.path.split("?", 1)[0] != "/v2/embed":
                    self._reply(404, {"message": f"no route {self.path}"})
                    return
                texts = list(body.get("texts") or [])
                stand_in.seen.append({"input_type": body.get("input_type"), "texts": texts})
                vectors = [_word_vector(text, DIMENSIONS[body["model"]]) for text in texts]
                reply = {"id": secrets.token_hex(8), "embeddings": {"float": vectors}, "texts": texts,
                         "meta": {"api_version": {"version": "2"}}, "response_type": "embeddings_by_type"}  # fmt: skip
                self._reply(200, reply)

            def _reply(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        super().__init__(Embed)
        self.url = f"http://{self.address}"

    def documents(self) -> list[str]:
        """Every text the functions sent to be embedded as a document, in order."""
        return [text for call in self.seen if call["input_type"] == "search_document" for text in call["texts"]]

    def close(self) -> None:
        self.shutdown()
        self.server_close()


def _word_vector(text: str, dimension: int) -> list[float]:
    vector = [0.0] * dimension
    for word in text.lower().split():
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % dimension] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class CloudFormationResponses(Recorder):
    """Stands in for the pre-signed S3 URL a custom resource answers CloudFormation at."""

    def __init__(self) -> None:
        recorder = self

        class Put(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                recorder.seen.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        super().__init__(Put)


class XRayDaemon:
    """A UDP socket where the functions' X-Ray SDK sends its segments, as to the Lambda daemon."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self._socket.getsockname()[1]}"
        self.segments: list[str] = []
        threading.Thread(target=self._receive, daemon=True).start()

    def _receive(self) -> None:
        while True:
            data = self._socket.recv(65535)
            self.segments.append(data.decode(errors="replace"))


# ----------------------------------------------------------------------------- functions as Lambda runs them


@dataclass
class Container:
    """A warm Lambda container of one function (``runner.py`` in a fresh interpreter)."""

    function: Function
    environment: dict[str, str]
    paths: list[str]
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", str(RUNNER), json.dumps(self.paths)],
            cwd=self.function.asset,
            env=self.environment,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        threading.Thread(target=self._drain, daemon=True).start()
        ready = json.loads(self._read())
        if not ready.get("ready"):
            time.sleep(0.2)
            raise AssertionError(f"{self.function.name} failed to start: {ready}\n" + "\n".join(self.log[-30:]))

    def _drain(self) -> None:
        assert self._process.stderr is not None
        for line in self._process.stderr:
            self.log.append(line.rstrip())

    def _read(self) -> str:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            time.sleep(0.2)
            raise AssertionError(f"{self.function.name} exited:\n" + "\n".join(self.log[-30:]))
        return line

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        """Lambda's reply: ``result``, or ``errorType`` and ``errorMessage``."""
        assert self._process.stdin is not None
        trace = f"Root=1-{int(time.time()):08x}-{secrets.token_hex(12)};Parent={secrets.token_hex(8)};Sampled=1"
        request = {"event": event, "request_id": secrets.token_hex(16), "trace_id": trace}
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        reply: dict[str, Any] = json.loads(self._read())
        return reply

    def close(self) -> None:
        self._process.kill()
        self._process.wait(timeout=10)


@dataclass
class Driven:
    """One invocation the suite made, for the summary."""

    function: str
    event: str
    outcome: str


class DeployedStack:
    """The template's resources on the stand-ins, and a container per function."""

    def __init__(self, template: dict[str, Any], outdir: Path, layer: Path, runtime: Path, opensearch: str) -> None:
        self.template = template
        self.resources: dict[str, Any] = template["Resources"]
        self.functions = functions_of(template, outdir)
        self.resolve = Resolver()
        self.moto = MotoServer()
        self.opensearch = OpenSearchProxy(opensearch)
        self.opensearch_upstream = opensearch  # osmem itself: the suite's own reads, never recorded
        self.cloudformation = CloudFormationResponses()
        self.xray = XRayDaemon()
        self.driven: list[Driven] = []
        self.credentials: dict[str, dict[str, str]] = {}  # role logical id -> keys
        self._layer, self._runtime = layer, runtime
        self._containers: dict[str, Container] = {}
        self._provision()

    # ------------------------------------------------------------------ the resources
    def _provision(self) -> None:
        refs, attributes = self.resolve.refs, self.resolve.attributes
        arn = f"arn:aws:{{}}:{REGION}:{ACCOUNT}:{{}}"
        for logical_id, resource in self.resources.items():
            props, kind = resource.get("Properties", {}), resource["Type"]
            refs.setdefault(logical_id, logical_id)
            if kind == "AWS::IAM::Role":
                attributes[(logical_id, "Arn")] = f"arn:aws:iam::{ACCOUNT}:role/{logical_id[:64]}"
                refs[logical_id] = logical_id[:64]
            elif kind == "AWS::IAM::ManagedPolicy":
                refs[logical_id] = f"arn:aws:iam::{ACCOUNT}:policy/{logical_id[:128]}"
            elif kind == "AWS::SecretsManager::Secret":
                refs[logical_id] = arn.format("secretsmanager", f"secret:{logical_id}")
            elif kind == "AWS::DynamoDB::Table":
                attributes[(logical_id, "Arn")] = arn.format("dynamodb", f"table/{logical_id}")
            elif kind == "AWS::SQS::Queue":
                attributes[(logical_id, "Arn")] = arn.format("sqs", logical_id)
                attributes[(logical_id, "QueueName")] = logical_id
            elif kind == "AWS::Events::EventBus":
                refs[logical_id] = props["Name"]
                attributes[(logical_id, "Arn")] = arn.format("events", f"event-bus/{props['Name']}")
                attributes[(logical_id, "Name")] = props["Name"]
            elif kind == "AWS::OpenSearchService::Domain":
                refs[logical_id] = props["DomainName"]
                domain_arn = arn.format("es", f"domain/{props['DomainName']}")
                attributes[(logical_id, "Arn")] = attributes[(logical_id, "DomainArn")] = domain_arn
                attributes[(logical_id, "DomainEndpoint")] = self.opensearch.address
            elif kind == "AWS::Lambda::Function":
                attributes[(logical_id, "Arn")] = arn.format("lambda", f"function:{logical_id}")
            elif kind == "AWS::Logs::LogGroup":
                attributes[(logical_id, "Arn")] = arn.format("logs", f"log-group:{logical_id}:*")
        self._create()

    def _create(self) -> None:
        """Create the resources in moto (IAM not yet enforced), assume each function's role, then
        turn enforcement on."""
        iam = self.moto.client("iam")
        iam.create_user(UserName="suite")
        everything = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        iam.put_user_policy(UserName="suite", PolicyName="everything", PolicyDocument=json.dumps(everything))
        key = iam.create_access_key(UserName="suite")["AccessKey"]
        self.admin = {"aws_access_key_id": key["AccessKeyId"], "aws_secret_access_key": key["SecretAccessKey"]}
        for logical_id, resource in self.resources.items():
            self._create_one(logical_id, resource)
        queues = [(k, v) for k, v in self.resources.items() if v["Type"] == "AWS::SQS::Queue"]
        for logical_id, resource in sorted(queues, key=lambda q: "RedrivePolicy" in q[1]["Properties"]):
            self._queue(logical_id, resource)  # dead-letter queues first: the others name them
        for logical_id, resource in self.resources.items():
            self._attach(logical_id, resource)
        sts = self.moto.client("sts")
        for function in self.functions.values():
            role_arn = self.resolve.attributes[(function.role, "Arn")]
            keys = sts.assume_role(RoleArn=role_arn, RoleSessionName=function.name)["Credentials"]
            self.credentials[function.role] = {
                "aws_access_key_id": keys["AccessKeyId"],
                "aws_secret_access_key": keys["SecretAccessKey"],
                "aws_session_token": keys["SessionToken"],
            }
        self.moto.enforce_iam()

    def _create_one(self, logical_id: str, resource: dict[str, Any]) -> None:
        kind, props = resource["Type"], resource.get("Properties", {})
        if kind == "AWS::IAM::Role":
            statement = {"Effect": "Allow", "Principal": {"AWS": SUITE_USER}, "Action": "sts:AssumeRole"}
            trust = {"Version": "2012-10-17", "Statement": [statement]}
            self.moto.client("iam").create_role(RoleName=logical_id[:64], AssumeRolePolicyDocument=json.dumps(trust))
        elif kind == "AWS::SecretsManager::Secret":
            client = self.moto.client("secretsmanager")
            self.resolve.refs[logical_id] = client.create_secret(Name=logical_id, SecretString=secrets.token_hex(20))[
                "ARN"
            ]
        elif kind == "AWS::DynamoDB::Table":
            self.moto.client("dynamodb").create_table(
                TableName=logical_id,
                KeySchema=props["KeySchema"],
                AttributeDefinitions=props["AttributeDefinitions"],
                BillingMode="PAY_PER_REQUEST",
            )
        elif kind == "AWS::Events::EventBus":
            self.moto.client("events").create_event_bus(Name=props["Name"])
        elif kind == "AWS::IAM::ManagedPolicy":
            self.moto.client("iam").create_policy(
                PolicyName=logical_id[:128], PolicyDocument=json.dumps(self.resolve(props["PolicyDocument"]))
            )

    def _attach(self, logical_id: str, resource: dict[str, Any]) -> None:
        """Role policies, exactly the template's (inline, and the template's own managed policies;
        AWS-managed ones grant the functions nothing the suite drives), and event rules with their
        queue targets."""
        kind, props = resource["Type"], resource.get("Properties", {})
        if kind == "AWS::IAM::Role":
            own = f"arn:aws:iam::{ACCOUNT}:policy/"
            for arn in self.resolve(props.get("ManagedPolicyArns", [])):
                if str(arn).startswith(own):
                    self.moto.client("iam").attach_role_policy(RoleName=self.resolve.refs[logical_id], PolicyArn=arn)
        if kind == "AWS::IAM::Policy":
            document = json.dumps(self.resolve(props["PolicyDocument"]))
            for role in props["Roles"]:
                self.moto.client("iam").put_role_policy(
                    RoleName=self.resolve(role), PolicyName=logical_id, PolicyDocument=document
                )
        elif kind == "AWS::Events::Rule" and "EventPattern" in props:
            events = self.moto.client("events")
            bus = self.resolve(props["EventBusName"])
            events.put_rule(Name=logical_id, EventBusName=bus, EventPattern=json.dumps(props["EventPattern"]))
            targets = [{"Id": t["Id"], "Arn": self.resolve(t["Arn"])} for t in props["Targets"]]
            events.put_targets(Rule=logical_id, EventBusName=bus, Targets=targets)

    def _queue(self, logical_id: str, resource: dict[str, Any]) -> None:
        props = self.resolve(resource["Properties"])
        attributes = {"VisibilityTimeout": str(props.get("VisibilityTimeout", 30))}
        if "RedrivePolicy" in props:
            attributes["RedrivePolicy"] = json.dumps(props["RedrivePolicy"])
        url = self.moto.client("sqs").create_queue(QueueName=logical_id, Attributes=attributes)["QueueUrl"]
        self.resolve.refs[logical_id] = url

    # ------------------------------------------------------------------ the functions
    def environment(self, function: Function, credentials: dict[str, str]) -> dict[str, str]:
        """What Lambda gives the process: the template's variables (resolved) and its own."""
        declared = {k: str(v) for k, v in self.resolve(function.properties["Environment"]["Variables"]).items()}
        if "NM_OPENSEARCH_URL" in declared:
            declared["NM_OPENSEARCH_URL"] = declared["NM_OPENSEARCH_URL"].replace("https://", "http://")
        closed = f"http://127.0.0.1:{free_port()}"
        return {
            **declared,
            "PATH": os.environ.get("PATH", ""),
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_LAMBDA_FUNCTION_NAME": function.logical_id,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(function.properties.get("MemorySize", 128)),
            # Not a Lambda variable: the runner's context counts the remaining time down from it
            "TEST_FUNCTION_TIMEOUT_S": str(function.properties.get("Timeout", 3)),
            "LAMBDA_TASK_ROOT": str(function.asset),
            "_HANDLER": function.properties["Handler"],
            "AWS_ACCESS_KEY_ID": credentials["aws_access_key_id"],
            "AWS_SECRET_ACCESS_KEY": credentials["aws_secret_access_key"],
            "AWS_SESSION_TOKEN": credentials["aws_session_token"],
            "AWS_ENDPOINT_URL": self.moto.url,
            "AWS_XRAY_DAEMON_ADDRESS": self.xray.address,
            "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
            "CO_API_URL": closed,
            "ANTHROPIC_BASE_URL": closed,
            "OPENAI_BASE_URL": closed,
        }

    def container(
        self, name: str, credentials: dict[str, str] | None = None, variables: dict[str, str] | None = None
    ) -> Container:
        """The function's warm container (started on first use); other credentials or environment
        variables (a configuration change a deploy would make) start a fresh one."""
        function = self.functions[name]
        if credentials is not None or variables:
            keys = credentials or self.credentials[function.role]
            return Container(function, self.environment(function, keys) | (variables or {}), self._paths(function))
        if name not in self._containers:
            keys = self.credentials[function.role]
            self._containers[name] = Container(function, self.environment(function, keys), self._paths(function))
        return self._containers[name]

    def _paths(self, function: Function) -> list[str]:
        return [str(function.asset), str(self._layer / "python"), str(self._runtime)]

    def invoke(
        self, name: str, label: str, event: dict[str, Any], variables: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Invoke function ``name`` with ``event`` (in a fresh container if ``variables`` change its
        environment); recorded for the summary as ``label``."""
        container = self.container(name, variables=variables)
        try:
            reply = container.invoke(event)
        finally:
            if variables:
                container.close()
        outcome = f"{reply['errorType']}: {reply['errorMessage']}" if "errorType" in reply else _outcome(reply)
        self.driven.append(Driven(name, label, outcome))
        return reply

    def access_key_of(self, name: str) -> str:
        return self.credentials[self.functions[name].role]["aws_access_key_id"]

    def close(self) -> None:
        for container in self._containers.values():
            container.close()
        for server in (self.opensearch, self.cloudformation):
            server.shutdown()
        self.moto.close()


def _outcome(reply: dict[str, Any]) -> str:
    result = reply.get("result")
    if isinstance(result, dict) and "statusCode" in result:
        return f"HTTP {result['statusCode']}"
    if isinstance(result, dict) and "batchItemFailures" in result:
        return f"{len(result['batchItemFailures'])} batch item failures"
    if isinstance(result, dict) and "policyDocument" in result:
        return f"{result['policyDocument']['Statement'][0]['Effect']} ({result.get('principalId')})"
    if isinstance(result, dict) and "Status" in result:
        return f"CloudFormation {result['Status']}"
    return json.dumps(result)[:60]


# ----------------------------------------------------------------------------- IAM for OpenSearch


def allowed(statements: list[dict[str, Any]], action: str, resource: str, principal: str | None = None) -> bool | None:
    """True if a statement allows, False if one denies (deny wins), None if none speaks."""
    verdict: bool | None = None
    for statement in statements:
        if not any(fnmatch.fnmatchcase(action, a) for a in _list(statement.get("Action"))):
            continue
        if not any(fnmatch.fnmatchcase(resource, r) for r in _list(statement.get("Resource"))):
            continue
        if principal is not None and "Principal" in statement:
            named = _list(statement["Principal"].get("AWS") if isinstance(statement["Principal"], dict) else "*")
            if "*" not in named and principal not in named:
                continue
        condition = statement.get("Condition", {}).get("ArnNotEquals", {}).get("aws:PrincipalArn")
        if condition is not None and principal in _list(condition):
            continue
        if statement["Effect"] == "Deny":
            return False
        verdict = True
    return verdict


def _list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]
