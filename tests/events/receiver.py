"""A real webhook receiver on 127.0.0.1 (http.server in a thread), and an independent
implementation of the Standard Webhooks verification (written from the spec, sharing no code
with memadmin.events.signing)."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import threading
import time
from http.server import ThreadingHTTPServer
from typing import Any

from tests.lib.recorder import QuietHandler, serve_in_thread


@dataclasses.dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def verify(secret: str, received: Received, *, tolerance: int = 300) -> bool:
    """Standard Webhooks: HMAC-SHA256 over ``id.timestamp.body`` with the base64-decoded part
    of ``whsec_...``; the header lists ``v1,<base64>`` signatures; the timestamp is recent."""
    msg_id = received.headers["webhook-id"]
    timestamp = received.headers["webhook-timestamp"]
    if abs(time.time() - int(timestamp)) > tolerance:
        return False
    key = base64.b64decode(secret.split("_", 1)[1])
    expected = base64.b64encode(hmac.new(
        key, msg_id.encode() + b"." + timestamp.encode() + b"." + received.body,
        hashlib.sha256).digest()).decode()
    for part in received.headers["webhook-signature"].split(" "):
        version, _, signature = part.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False


class Receiver:
    """Answers each POST with the next status of ``statuses`` (the last one repeats), after
    ``delay`` seconds; records every request."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.statuses: list[int] = [200]
        self.delay = 0.0
        self._release = threading.Event()
        receiver = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                receiver.received.append(Received(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if receiver.delay:
                    receiver._release.wait(receiver.delay)
                status = (receiver.statuses.pop(0) if len(receiver.statuses) > 1
                          else receiver.statuses[0])
                self.send_response(status)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hooks/memadmin"
        self._thread = serve_in_thread(self.server)

    def stop(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
