"""`kubegpu audit --cluster` against a hostile API server over HTTPS on loopback, with its default limits.

1. A server that trickles its answer to `GET /api/v1/nodes`, one byte every `--trickle-interval`
   seconds (3 by default): seconds until the audit exits, its exit code and its message.
2. A server whose node list never ends: every page carries a new `continue` token, at once: list calls
   made and seconds until the audit exits.
Every loop is bounded: the trickle stops after `--trickle-bytes` bytes, and the audit is killed after
`--limit` seconds (reported as "still running").
Run it against another checkout with PYTHONPATH=that/src to compare (the numbers before a change).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench_webhook import make_cert

TOKEN = "bench-token"


class Hostile(BaseHTTPRequestHandler):
    """Answers every nodes request as the scenario says; counts them."""

    mode = "trickle"
    interval = 3.0
    limit_bytes = 60
    calls = 0
    stop = threading.Event()

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return

    def do_GET(self) -> None:  # http.server's name
        type(self).calls += 1
        if not self.path.startswith("/api/v1/nodes"):
            self.send_error(404)
            return
        if self.mode == "endless":
            page = json.dumps({"kind": "NodeList", "metadata": {"continue": f"t{self.calls}"}, "items": []}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.flush()
        for byte in (b'{"kind": "NodeList", "items": [' + b" " * self.limit_bytes)[: self.limit_bytes]:
            if self.stop.wait(self.interval):
                return
            try:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            except OSError:
                return


def serve(folder: Path) -> tuple[ThreadingHTTPServer, Path]:
    cert, key = make_cert(folder)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"https://127.0.0.1:{server.server_address[1]}"
    kubeconfig = folder / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: k\n  cluster:\n    server: {url}\n"
        f"    certificate-authority-data: {base64.b64encode(cert.read_bytes()).decode()}\n"
        f"users:\n- name: u\n  user:\n    token: {TOKEN}\n"
        "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
    )
    return server, kubeconfig


def audit(kubeconfig: Path, limit: float) -> tuple[float, str]:
    """Seconds until `kubegpu audit --cluster` exits (or is killed at `limit`), and how it ended."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubegpu.cli.main", "audit", "--cluster", "--kubeconfig", str(kubeconfig)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "KUBECONFIG": ""},
    )
    try:
        _, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return time.perf_counter() - start, f"still running after {limit:g} s (killed)"
    lines = err.strip().splitlines()
    last = lines[-1] if lines else ""
    return time.perf_counter() - start, f"exit {proc.returncode}, {len(lines)} line(s): {last[:150]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trickle-interval", type=float, default=3.0)
    parser.add_argument("--trickle-bytes", type=int, default=60)
    parser.add_argument("--limit", type=float, default=120.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server, kubeconfig = serve(Path(tmp))
        try:
            Hostile.interval, Hostile.limit_bytes = args.trickle_interval, args.trickle_bytes
            seconds, how = audit(kubeconfig, args.limit)
            print(f"1. nodes answer trickled one byte every {args.trickle_interval:g} s: {seconds:.1f} s, {how}")
            Hostile.stop.set()
            Hostile.mode, Hostile.calls = "endless", 0
            seconds, how = audit(kubeconfig, args.limit)
            print(f"2. node list that never ends: {Hostile.calls} list calls in {seconds:.1f} s, {how}")
        finally:
            server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
