"""The engine process: llama.cpp's HTTP server from the prebuilt ``xllamacpp`` wheel, serving one model.

``python -P …/openagent_local/_engine.py --model PATH --alias NAME [--ctx-size N] [--threads N]
[--chat-template FILE] [--idle-exit SECONDS]`` (run by path: the package is not imported, only the standard
library and ``xllamacpp``) loads the model, listens on a free loopback port chosen by the server itself, and
writes one line to stdout, ``listening http://127.0.0.1:<port>``, once it is ready. It then serves until
SIGTERM, SIGINT or SIGHUP, or, with ``--idle-exit``, until no request has come for that long, and shuts the
server down cleanly (llama.cpp's own log goes to stderr).

It runs as a process of its own, not inside the agent's: other processes reuse it, a crash of the engine is
a typed error for the agent rather than the end of it, and loading a model never blocks an event loop.
"""

from __future__ import annotations

import argparse
import http.client
import json
import signal
import sys
import threading
import time
from pathlib import Path

__all__ = ["READY", "engine_version", "main"]

READY = "listening "
"""The start of the line the engine writes when it is ready, followed by its root URL."""
HOST = "127.0.0.1"
MAX_TOKENS = 1024
"""Tokens an answer may take when the request sets no limit: a small model can otherwise repeat itself until
its context is full (minutes on a CPU)."""


def engine_version() -> str | None:
    """The installed ``xllamacpp`` version, or ``None`` when it is missing."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("xllamacpp")
    except PackageNotFoundError:
        return None


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m openagent_local._engine")
    parser.add_argument("--model", required=True, type=Path)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--ctx-size", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--chat-template", type=Path, default=None)
    parser.add_argument("--idle-exit", type=float, default=0.0, help="seconds without a request, then exit")
    return parser.parse_args(argv)


def _activity(port: int) -> tuple[object, bool]:
    """What the server's slots are doing: a value that changes with every request, and whether one runs."""
    connection = http.client.HTTPConnection(HOST, port, timeout=5)
    try:
        connection.request("GET", "/slots")
        slots = json.loads(connection.getresponse().read())
    finally:
        connection.close()
    return tuple((s.get("id"), s.get("id_task")) for s in slots), any(s.get("is_processing") for s in slots)


def _exit_when_idle(port: int, seconds: float, stop: threading.Event) -> None:
    """Set ``stop`` once no request has started or run for ``seconds``."""
    last, since = None, time.monotonic()
    while not stop.wait(min(5.0, max(seconds / 4, 0.1))):
        try:
            seen, busy = _activity(port)
        except (OSError, ValueError, http.client.HTTPException):
            continue  # a busy server may be slow to answer: that is not idleness
        if seen != last or busy:
            last, since = seen, time.monotonic()
        elif time.monotonic() - since >= seconds:
            stop.set()


def main(argv: list[str] | None = None) -> int:
    """Serve until told to stop; 1 with the reason on stderr when the model cannot be served."""
    args = _arguments(argv)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())
    try:
        import xllamacpp
    except ImportError as exc:
        print(f"the local engine needs xllamacpp: pip install 'openagent[local]' ({exc})", file=sys.stderr)
        return 1
    params = xllamacpp.CommonParams()
    params.model.path = str(args.model)
    params.model_alias = {args.alias}
    params.n_ctx = args.ctx_size
    params.n_predict = MAX_TOKENS
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.hostnames = [HOST]
    params.port = 0  # the server binds a free port itself: no race between choosing and binding
    params.use_jinja = True
    params.ui = False
    if args.chat_template is not None:
        params.chat_template = args.chat_template.read_text()
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # the wheel raises RuntimeError subclasses for a bad model or file
        print(f"llama.cpp could not serve {args.model}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"{READY}{server.listening_address}", flush=True)
    if args.idle_exit > 0:
        port = int(str(server.listening_address).rpartition(":")[2])
        threading.Thread(target=_exit_when_idle, args=(port, args.idle_exit, stop), daemon=True).start()
    stop.wait()
    del server  # the destructor stops the HTTP server and its worker threads
    return 0


if __name__ == "__main__":
    sys.exit(main())
