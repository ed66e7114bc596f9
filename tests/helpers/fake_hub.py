"""A local stand-in for the Hugging Face Hub: an http.server thread serving the endpoints
huggingface_hub calls for `hf_hub_download` and `HfApi.model_info`, so the real library
runs end to end against it (`HF_ENDPOINT` points at it) and never the real network.

Served: HEAD/GET `/{repo}/resolve/{revision}/{file}` (headers X-Repo-Commit, ETag,
X-Linked-Etag, X-Linked-Size, Content-Length) and GET `/api/models/{repo}/revision/{rev}`
(the commit, and each file's size and Git LFS sha256). Unknown repo, revision or file:
404 with the Hub's X-Error-Code, which huggingface_hub turns into its own exceptions.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

COMMIT = "0123456789abcdef0123456789abcdef01234567"
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
# `model_info` asks `/api/models/{repo}` for the main branch, `.../revision/{rev}` else.
_API = re.compile(r"^/api/models/(?P<repo>[^/?]+/[^/?]+)(/revision/(?P<rev>[^/?]+))?(\?|$)")


@dataclass
class FakeHub:
    """Files by (repo, path); the revisions `main`, `v1` and COMMIT all name COMMIT."""

    files: dict[tuple[str, str], bytes] = field(default_factory=dict)
    card: dict[str, Any] = field(default_factory=dict)
    # Like the real Hub for LFS files: `resolve` answers 302 to an absolute CDN URL, the
    # metadata headers on the 302 itself; the CDN serves the bytes without them.
    cdn: bool = False
    requests: list[str] = field(default_factory=list)
    url: str = ""

    def commit_of(self, repo: str, rev: str) -> str | None:
        return COMMIT if rev in ("main", "v1", COMMIT) else None

    def repos(self) -> set[str]:
        return {repo for repo, _ in self.files}


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet test output
            pass

        def do_HEAD(self) -> None:
            self._serve(body=False)

        def do_GET(self) -> None:
            self._serve(body=True)

        def _error(self, code: str, commit: str | None = None) -> None:
            self.send_response(404)
            self.send_header("X-Error-Code", code)
            self.send_header("X-Error-Message", code)
            if commit:
                self.send_header("X-Repo-Commit", commit)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _serve(self, *, body: bool) -> None:
            hub.requests.append(f"{self.command} {self.path}")
            if self.path.startswith("/cdn/"):
                blobs = {hashlib.sha256(d).hexdigest(): d for d in hub.files.values()}
                data = blobs.get(self.path[len("/cdn/") :])
                if data is None:
                    return self._error("NotFound")
                return self._send(data, "application/octet-stream", body)
            api, resolve = _API.match(self.path), _RESOLVE.match(self.path.split("?")[0])
            match = api or resolve
            if match is None:
                return self._error("NotFound")
            repo, rev = match["repo"], match["rev"] or "main"
            if repo not in hub.repos():
                return self._error("RepoNotFound")
            commit = hub.commit_of(repo, rev)
            if commit is None:
                return self._error("RevisionNotFound")
            if api is not None:
                return self._send(_model_info(hub, repo, commit), "application/json", body)
            data = hub.files.get((repo, match["file"]))
            if data is None:
                return self._error("EntryNotFound", commit)
            self._send(data, "application/octet-stream", body, commit=commit)

        def _send(self, data: bytes, kind: str, body: bool, commit: str = "") -> None:
            redirect = bool(commit) and hub.cdn
            self.send_response(302 if redirect else 200)
            if redirect:
                self.send_header("Location", f"{hub.url}/cdn/{hashlib.sha256(data).hexdigest()}")
                body = False
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", "0" if redirect else str(len(data)))
            if commit:
                digest = hashlib.sha256(data).hexdigest()
                self.send_header("X-Repo-Commit", commit)
                self.send_header("ETag", f'"{digest}"')
                self.send_header("X-Linked-Etag", f'"{digest}"')
                self.send_header("X-Linked-Size", str(len(data)))
            self.end_headers()
            if body:
                self.wfile.write(data)

    return Handler


def _model_info(hub: FakeHub, repo: str, commit: str) -> bytes:
    siblings = [
        {
            "rfilename": path,
            "size": len(data),
            "blobId": hashlib.sha1(data).hexdigest(),
            "lfs": {
                "sha256": hashlib.sha256(data).hexdigest(),
                "size": len(data),
                "pointerSize": 134,
            },
        }
        for (r, path), data in hub.files.items()
        if r == repo
    ]
    info = {"id": repo, "modelId": repo, "sha": commit, "siblings": siblings}
    if hub.card:
        info["cardData"] = hub.card
    return json.dumps(info).encode()


@contextmanager
def serve(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """Serve `hub` on a free loopback port with HF_ENDPOINT pointing at it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def refused_endpoint() -> str:
    """A loopback URL where nothing listens: connecting is refused at once (offline)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Like the `no_network` fixture, but a connection to 127.0.0.1 (the fake hub) is
    allowed; any other address or name lookup is recorded and refused."""
    calls: list[str] = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple) and address[0] in ("127.0.0.1", "localhost"):
            return connect(self, address)
        calls.append(repr(address))
        raise OSError("network used in a test")

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host in ("127.0.0.1", "localhost", None):
            return getaddrinfo(host, *args, **kwargs)
        calls.append(repr(host))
        raise OSError("network used in a test")

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    return calls


@dataclass
class Attempts:
    """What a call did to reach a refused endpoint: each connection it opened there and
    each pause it took."""

    connects: list[Any] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)


def record_attempts(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> Attempts:
    """Record (and still make) every connection to `endpoint`'s port and every
    time.sleep: an offline call that fails at once connects there once and never
    waits; a retry would connect again or sleep first (huggingface_hub's, 23 s in 0.36)."""
    attempts = Attempts()
    port = int(endpoint.rsplit(":", 1)[1])
    connect, sleep = socket.socket.connect, time.sleep

    def counted_connect(self: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple) and address[1] == port:
            attempts.connects.append(address)
        return connect(self, address)

    def counted_sleep(seconds: float) -> None:
        attempts.sleeps.append(seconds)
        sleep(seconds)

    monkeypatch.setattr(socket.socket, "connect", counted_connect)
    monkeypatch.setattr(time, "sleep", counted_sleep)
    return attempts
