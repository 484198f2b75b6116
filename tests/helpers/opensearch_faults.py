"""A real HTTP hop in front of osmem-server that answers as an AWS domain does where osmem cannot
be told to: 413 for a request over the domain's size limit (before reading it on), a 400 for
each bulk item whose document carries a marker (the item is not written, the rest are), and, with
``mget_404``, a whole-request 404 for an mget naming a missing index (where osmem answers each id
with the error). The
store's client and code run unchanged; only the server's answers are shaped."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

POISON = "POISON-400"


class FaultyDomain(ThreadingHTTPServer):
    """``url`` forwards to ``upstream``; ``max_body`` bytes is the domain's request limit."""

    daemon_threads = True

    def __init__(self, upstream: str, max_body: int, *, mget_404: bool = False) -> None:
        domain = self
        self.requests_too_large = 0

        class Forward(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self, status: int, payload: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if length > max_body:
                    domain.requests_too_large += 1
                    message = {"Message": f"Request size exceeded {max_body} bytes"}
                    self._answer(413, json.dumps(message).encode())
                    return
                if body and self.path.split("?", 1)[0].endswith("/_bulk"):
                    self._answer(200, json.dumps(_bulk(upstream + self.path, body)).encode())
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() in {"content-type", "accept"}}
                request = urllib.request.Request(upstream + self.path, data=body, method=self.command, headers=headers)
                try:
                    with urllib.request.urlopen(request, timeout=30) as reply:
                        payload = reply.read()
                        docs = json.loads(payload).get("docs", []) if self.path.split("?")[0].endswith("/_mget") else []
                        missing = [d["error"] for d in docs if "index_not_found" in json.dumps(d.get("error"))]
                        if mget_404 and missing:
                            self._answer(404, json.dumps({"error": missing[0], "status": 404}).encode())
                            return
                        self._answer(reply.status, payload, reply.headers.get("Content-Type") or "application/json")
                except urllib.error.HTTPError as error:
                    self._answer(error.code, error.read(), error.headers.get("Content-Type") or "application/json")

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

            def log_message(self, format: str, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Forward)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()


def _bulk(url: str, body: bytes) -> dict[str, Any]:
    """Send the bulk request without the marked documents; their items answer 400 in place."""
    lines = [json.loads(line) for line in body.splitlines() if line.strip()]
    pairs = list(zip(lines[0::2], lines[1::2], strict=True))
    poisoned = [POISON in json.dumps(doc) for _, doc in pairs]
    sent = b"".join(
        json.dumps(line).encode() + b"\n"
        for (a, d), bad in zip(pairs, poisoned, strict=True)
        if not bad
        for line in (a, d)
    )
    items: list[dict[str, Any]] = []
    if sent:
        request = urllib.request.Request(
            url, data=sent, method="POST", headers={"Content-Type": "application/x-ndjson"}
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            items = json.loads(reply.read())["items"]
    merged, passed = [], iter(items)
    for (action, _), bad in zip(pairs, poisoned, strict=True):
        if not bad:
            merged.append(next(passed))
            continue
        op, meta = next(iter(action.items()))
        error = {"type": "mapper_parsing_exception", "reason": f"failed to parse document {meta['_id']}"}
        merged.append({op: {"_index": meta["_index"], "_id": meta["_id"], "status": 400, "error": error}})
    return {"took": 1, "errors": any(next(iter(i.values())).get("status", 200) >= 300 for i in merged), "items": merged}
