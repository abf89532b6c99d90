"""A scripted stand-in for ``llama-server``: a real process on loopback that answers ``/health``.

Server management (start, reuse, stale state, stop at exit) is tested against it; the real server and model
are exercised in tests/integration.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from openagent_local import LLAMA_CPP_VERSION, ServerBuild

SCRIPT = '''#!{python}
"""Stand-in llama-server: --port N; exits at once when the model file holds FAIL or BIND."""
import http.server, json, sys, time
args = sys.argv[1:]
port = int(args[args.index("--port") + 1])
model = open(args[args.index("-m") + 1]).read()
if "BIND" in model:
    print("couldn't bind HTTP server socket", flush=True); sys.exit(1)
if "FAIL" in model:
    print("error loading model: not a gguf file", flush=True); sys.exit(1)

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):  # /v1/chat/completions, streamed; a prompt saying "slowly" trickles 600 chunks
        slow = b"slowly" in self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        def send(data):
            raw = ("data: " + data + "\\n\\n").encode()
            self.wfile.write(b"%x\\r\\n%s\\r\\n" % (len(raw), raw))
            self.wfile.flush()
        for text in ["Hel", "lo", " there"] * (200 if slow else 1):
            send(json.dumps({{"choices": [{{"index": 0, "delta": {{"content": text}}}}]}}))
            time.sleep(0.05 if slow else 0)
        send(json.dumps({{"choices": [{{"index": 0, "delta": {{}}, "finish_reason": "stop"}}]}}))
        send(json.dumps({{"choices": [], "usage": {{"prompt_tokens": 5, "completion_tokens": 3}}}}))
        send("[DONE]")
        self.wfile.write(b"0\\r\\n\\r\\n")

    def do_GET(self):
        body = json.dumps({{"status": "ok", "args": args}}).encode()
        self.send_response(200 if self.path in ("/health", "/args") else 404)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
'''


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A cache folder holding a complete "build" whose binary is the stand-in script."""
    folder = tmp_path / "xdg" / "openagent" / "llama-server" / LLAMA_CPP_VERSION
    (folder / "templates").mkdir(parents=True)
    binary = folder / "llama-server"
    binary.write_text(SCRIPT.format(python=sys.executable))
    binary.chmod(0o755)
    (folder / "templates" / "tool_use.jinja").write_text("{{ messages }}")
    (folder / "BUILD-INFO.json").write_text(json.dumps({"version": LLAMA_CPP_VERSION}))
    return tmp_path / "xdg" / "openagent"


@pytest.fixture
def build(root: Path) -> ServerBuild:
    folder = root / "llama-server" / LLAMA_CPP_VERSION
    return ServerBuild(
        binary=folder / "llama-server", templates=folder / "templates", version=LLAMA_CPP_VERSION
    )


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_text("GGUF")
    return path
