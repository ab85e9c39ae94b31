"""The webhook under bounded attacks on loopback: slow and idle clients, 1,000 idle connections, and
50 concurrent reviewers. Every loop is bounded and stops by itself.

1. Idle and slow clients (silent TCP, idle TLS, trickled head, trickled body): seconds until the
   server closes each (limits: handshake 5 s, header 5 s, body 10 s).
2. 1,000 idle connections held open (each re-opened 1 s after the server closes it) by a separate
   process from another loopback address (127.0.0.2: another pod), while a prober opens a new TLS
   connection for each GET /healthz, as the kubelet does: /healthz p50/p99 and the server's peak
   RSS against the memory limit `gen webhook` writes. Baseline: /healthz without the idle
   connections, same prober, same run.
3. 50 concurrent clients, each a keep-alive connection sending POST /mutate every 0.25 s (200
   reviews/s in all, open loop: latency from the scheduled send time): p50/p99 and errors (any
   answer but 200, any transport error).
4. The largest reviews at once: as many clients as workers + queue each send a GPU pod of
   thousands of small env entries just under the body limit (the shape that costs the most memory
   per byte): the server's peak RSS against the generated memory limit, and errors.
5. The slowest pod to review: a pod of 4,800 GPU containers (437 KiB, under the body limit) sent to
   /mutate and to /validate: seconds until the answer, its status, what it said and its size. The
   API server gives up at the webhook's timeoutSeconds (5 s by default). Then the same against
   servers whose container limit is lifted (`--max-containers 100000`): with the default review
   deadline (4 s), with `--timeout-seconds 1` (deadline 0.5 s, shorter than the review), and with
   that and `--failure-policy Fail`.
6. Reviews that keep the workers busy: six such pods at once on /mutate, and 0.2 s later one normal
   GPU pod: seconds until the normal pod is answered, and how; on the default server, then on the
   first two servers with the container limit lifted (queue wait 2 s and 0.25 s from arrival).

`--scenarios 5,6` runs only those (1-6; default all).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_webhook import (
    REVIEWS,
    Connection,
    free_port,
    make_cert,
    percentile,
    request_head,
    start_server,
)
from kubegpu.webhook.limits import MIB, Limits, memory_limit_quantity

LIMITS = Limits()
HEALTHZ_P99_MS = 50.0
CONCURRENT_P99_MS = 100.0


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


async def _until_closed(reader: asyncio.StreamReader, limit: float) -> None:
    async def drain() -> None:
        while await reader.read(4096):
            pass

    with contextlib.suppress(ConnectionError, ssl.SSLError):
        await asyncio.wait_for(drain(), limit)


async def closed_after(port: int, context: ssl.SSLContext, kind: str, limit: float) -> float:
    """Seconds until the server closes a client of this kind (`limit` if it never does)."""
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=None if kind == "silent TCP" else context)
    trickle: bytes = b""
    if kind == "trickled head":
        trickle = b"POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000
    elif kind == "trickled body":
        writer.write(b"POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n")
        trickle = b"{" + b" " * 1000

    async def send_slowly() -> None:
        for byte in trickle:  # one byte every 0.5 s
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.5)

    sender = asyncio.create_task(send_slowly())
    try:
        await _until_closed(reader, limit)
    except TimeoutError:
        return limit
    finally:
        sender.cancel()
        writer.close()
    return time.perf_counter() - start


async def slow_clients(port: int, context: ssl.SSLContext, each: int) -> None:
    print(f"1. idle and slow clients ({each} of each at once), seconds until closed by the server:")
    for kind, allowed in (
        ("silent TCP", LIMITS.handshake_timeout),
        ("idle TLS", LIMITS.header_timeout),
        ("trickled head", LIMITS.header_timeout),
        ("trickled body", LIMITS.header_timeout + LIMITS.body_timeout),
    ):
        times = await asyncio.gather(*(closed_after(port, context, kind, 60) for _ in range(each)))
        verdict = "ok" if max(times) <= allowed + 2 else "NOT closed in time"
        print(
            f"   {kind:14} median {percentile(times, 0.5):5.2f} s  max {max(times):5.2f} s  "
            f"(limit {allowed:g} s): {verdict}"
        )


async def probe_healthz(port: int, context: ssl.SSLContext, n: int, rate: float) -> tuple[list[float], int]:
    """n GET /healthz at `rate`/s, each on a new TLS connection; latency includes the handshake."""
    head = request_head("GET", "/healthz", b"")
    latencies: list[float] = []
    errors = 0
    for _ in range(n):
        start = time.perf_counter()
        try:
            conn = await asyncio.wait_for(Connection.open(port, context), 5)
            status = await asyncio.wait_for(conn.request(head, b""), 5)
            conn.close()
            errors += status != 200
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ssl.SSLError):
            errors += 1
        latencies.append((time.perf_counter() - start) * 1000)
        await asyncio.sleep(max(0.0, 1 / rate - (time.perf_counter() - start)))
    return latencies, errors


async def hold_idle(port: int, n: int, seconds: float) -> None:
    """Keep n silent TCP connections open for `seconds`, re-opening each 1 s after it is closed."""
    deadline = time.monotonic() + seconds

    async def one() -> None:
        while time.monotonic() < deadline:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=("127.0.0.2", 0))
            except OSError:
                await asyncio.sleep(1)
                continue
            with contextlib.suppress(TimeoutError, OSError):
                await asyncio.wait_for(reader.read(1), max(0.01, deadline - time.monotonic()))
            writer.close()
            await asyncio.sleep(1)

    await asyncio.gather(*(one() for _ in range(n)))


def idle_flood(port: int, context: ssl.SSLContext, pid: int, idle: int, probes: int) -> bool:
    base_lat, base_err = asyncio.run(probe_healthz(port, context, probes, 20))
    base_rss = rss_bytes(pid)
    seconds = probes / 20 + 6
    attacker = subprocess.Popen(
        [sys.executable, __file__, "--hold-idle", str(idle), "--port", str(port), "--seconds", str(seconds)]
    )
    peak = 0
    try:
        time.sleep(3)  # let the connections pile up to the cap first

        async def probe_and_sample() -> tuple[list[float], int]:
            nonlocal peak
            task = asyncio.create_task(probe_healthz(port, context, probes, 20))
            while not task.done():
                peak = max(peak, rss_bytes(pid))
                await asyncio.sleep(0.1)
            return await task

        lat, err = asyncio.run(probe_and_sample())
    finally:
        attacker.wait(timeout=seconds + 30)
    limit = int(memory_limit_quantity(LIMITS).removesuffix("Mi")) * MIB
    p99 = percentile(lat, 0.99)
    print(
        f"2. {idle} idle connections held open (server cap {LIMITS.max_connections}, "
        f"{LIMITS.client_share_percent} % per client address), "
        f"{probes} probes at 20/s, each on a new TLS connection:"
    )
    print(
        f"   baseline /healthz (no idle connections): p50 {percentile(base_lat, 0.5):.2f} ms  "
        f"p99 {percentile(base_lat, 0.99):.2f} ms  errors {base_err}"
    )
    print(
        f"   under the idle flood:                    p50 {percentile(lat, 0.5):.2f} ms  "
        f"p99 {p99:.2f} ms  errors {err}  ratio p99 {p99 / percentile(base_lat, 0.99):.2f}x"
    )
    print(
        f"   server RSS: {base_rss / MIB:.0f} MiB idle, peak {peak / MIB:.0f} MiB under the flood; "
        f"generated memory limit {limit / MIB:.0f} MiB"
    )
    ok = p99 < HEALTHZ_P99_MS and err == 0 and peak < limit
    print(f"   target p99 < {HEALTHZ_P99_MS:g} ms, no errors, RSS under the limit: {'met' if ok else 'NOT met'}")
    return ok


async def concurrent(
    port: int, context: ssl.SSLContext, clients: int, each: int, interval: float, path: str
) -> tuple[list[float], int]:
    bodies = [p.read_bytes() for p in sorted(REVIEWS.glob("*.json"))] if path == "/mutate" else [b""]
    heads = [request_head("POST" if bodies[0] else "GET", path, body) for body in bodies]
    conns = [await Connection.open(port, context) for _ in range(clients)]
    latencies: list[float] = []
    errors = 0
    t0 = time.perf_counter() + 0.1

    async def client(index: int, conn: Connection) -> None:
        nonlocal errors
        for i in range(each):
            k = (index + i) % len(bodies)
            start = t0 + (i + index / clients) * interval  # clients spread over the interval
            await asyncio.sleep(max(0.0, start - time.perf_counter()))
            try:
                errors += await conn.request(heads[k], bodies[k]) != 200
            except (OSError, asyncio.IncompleteReadError, ValueError):
                errors += 1
                conn = await Connection.open(port, context)
            latencies.append((time.perf_counter() - start) * 1000)

    await asyncio.gather(*(client(i, c) for i, c in enumerate(conns)))
    for conn in conns:
        conn.close()
    return latencies, errors


def dense_review(limit: int) -> bytes:
    """A recorded GPU pod review padded with env entries to just under `limit` bytes."""
    review = json.loads((REVIEWS / "gpu-request-no-limit.json").read_text())
    container = review["request"]["object"]["spec"]["containers"][0]
    container["env"] = []
    body = json.dumps(review, separators=(",", ":")).encode()
    entry = len(json.dumps({"name": "VAR_00000", "value": "v"}, separators=(",", ":"))) + 1
    container["env"] = [{"name": f"VAR_{i:05d}", "value": "v"} for i in range((limit - len(body) - 64) // entry)]
    return json.dumps(review, separators=(",", ":")).encode()


async def largest(port: int, context: ssl.SSLContext, pid: int, clients: int) -> tuple[int, int, int, int]:
    body = dense_review(LIMITS.max_body_bytes)
    head = request_head("POST", "/mutate", body)
    conns = [await Connection.open(port, context) for _ in range(clients)]
    peak = rss_bytes(pid)
    errors = 0
    shed = [0]

    async def client(conn: Connection) -> None:
        nonlocal errors
        try:  # 200, or 503 for a review that waited past the queue timeout (counted apart)
            status = await conn.request(head, body)
            errors += status not in (200, 503)
            shed[0] += status == 503
        except (OSError, asyncio.IncompleteReadError, ValueError):
            errors += 1

    task = asyncio.gather(*(client(c) for c in conns))
    while not task.done():
        peak = max(peak, rss_bytes(pid))
        await asyncio.sleep(0.02)
    await task
    for conn in conns:
        conn.close()
    return len(body), peak, errors, shed[0]


def many_containers_review(containers: int = 4800) -> bytes:
    """A recorded GPU pod review whose pod has `containers` small GPU containers (433 KiB for 4,800)."""
    review = json.loads((REVIEWS / "gpu-request-no-limit.json").read_text())
    review["request"]["object"]["spec"]["containers"] = [
        {
            "name": f"c{i:05d}",
            "image": "nvidia/cuda:12.4",
            "resources": {"requests": {"nvidia.com/gpu": "1"}},
        }
        for i in range(containers)
    ]
    return json.dumps(review, separators=(",", ":")).encode()


async def answer(port: int, context: ssl.SSLContext, path: str, body: bytes) -> tuple[float, int, bytes]:
    """Seconds until the whole answer, its status and its body (one new connection)."""
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    try:
        writer.write(request_head("POST", path, body) + body)
        await writer.drain()
        header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 120)
        lines = header.split(b"\r\n")
        length = next(
            (
                int(v.strip())
                for n, _, v in (x.partition(b":") for x in lines[1:])
                if n.strip().lower() == b"content-length"
            ),
            0,
        )
        data = await reader.readexactly(length)
        return time.perf_counter() - start, int(lines[0].split(b" ", 2)[1]), data
    finally:
        writer.close()


def _said(status: int, data: bytes) -> str:
    if status != 200:
        return f"{status} {data[:80].decode(errors='replace')!r}"
    response = json.loads(data)["response"]
    warnings = response.get("warnings") or []
    message = response.get("status", {}).get("message", "")
    verdict = "allowed" if response["allowed"] else "denied"
    patched = " with a patch" if "patch" in response else ""
    first = (message or (warnings[0] if warnings else ""))[:90]
    return f"200 {verdict}{patched}, {len(warnings)} warning(s): {first!r}"


async def slowest_pod(port: int, context: ssl.SSLContext, server: str) -> None:
    body = many_containers_review()
    print(f"5. one pod of 4,800 GPU containers ({len(body) / 1024:.0f} KiB), {server}:")
    for path in ("/mutate", "/validate"):
        seconds, status, data = await answer(port, context, path, body)
        print(f"   {path:9} answered in {seconds:5.2f} s, {len(data) / 1024:.0f} KiB: {_said(status, data)}")


async def busy_workers(port: int, context: ssl.SSLContext, heavy: int, server: str) -> None:
    body = many_containers_review()
    normal = (REVIEWS / "gpu-request-no-limit.json").read_bytes()
    tasks = [asyncio.create_task(answer(port, context, "/mutate", body)) for _ in range(heavy)]
    await asyncio.sleep(0.2)
    seconds, status, data = await answer(port, context, "/mutate", normal)
    done = await asyncio.gather(*tasks)
    print(f"6. {heavy} pods of 4,800 containers at once on /mutate, then one normal GPU pod, {server}:")
    print(f"   normal pod answered in {seconds:5.2f} s: {_said(status, data)}")
    statuses = sorted({s for _, s, _ in done})
    print(
        f"   the {heavy} large ones: {min(t for t, _, _ in done):.2f}-{max(t for t, _, _ in done):.2f} s, "
        f"status {statuses}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--each", type=int, default=40)
    parser.add_argument("--scenarios", default="1,2,3,4,5,6", help="which scenarios to run (comma-separated)")
    parser.add_argument("--heavy", type=int, default=6, help="large reviews sent at once in scenario 6")
    parser.add_argument("--hold-idle", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.hold_idle:  # the attacker process of scenario 2
        asyncio.run(hold_idle(args.port, args.hold_idle, args.seconds))
        return 0
    ok = True
    run = {int(n) for n in args.scenarios.split(",")}
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = make_cert(Path(tmp))
        port = free_port()
        server = start_server(cert, key, port)
        context = ssl.create_default_context(cafile=str(cert))
        try:
            if 1 in run:
                asyncio.run(slow_clients(port, context, 20))
            if 2 in run:
                ok &= idle_flood(port, context, server.pid, args.idle, args.probes)
            if 3 in run or 4 in run:
                ok &= concurrent_and_largest(port, context, server.pid, args.clients, args.each)
            if 5 in run:
                asyncio.run(slowest_pod(port, context, "default server"))
            if 6 in run:
                asyncio.run(busy_workers(port, context, args.heavy, "default server"))
        finally:
            stop(server)
        if 5 in run or 6 in run:
            lifted = ("--max-containers", "100000")
            short = (*lifted, "--timeout-seconds", "1")  # review deadline 0.5 s, queue wait 0.25 s
            for extra in (lifted, short, (*short, "--failure-policy", "Fail")):
                port = free_port()
                server = start_server(cert, key, port, *extra)
                try:
                    if 5 in run:
                        asyncio.run(slowest_pod(port, context, " ".join(extra)))
                    if 6 in run and "Fail" not in extra:
                        asyncio.run(busy_workers(port, context, args.heavy, " ".join(extra)))
                finally:
                    stop(server)
    print(
        f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} "
        "(client, attacker and server share them)"
    )
    return 0 if ok else 1


def stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()


def concurrent_and_largest(port: int, context: ssl.SSLContext, pid: int, clients: int, each: int) -> bool:
    """Scenarios 3 and 4; True when no request failed and the RSS stayed under the limit."""
    base, _ = asyncio.run(concurrent(port, context, clients, each, 0.25, "/healthz"))
    lat, errors = asyncio.run(concurrent(port, context, clients, each, 0.25, "/mutate"))
    p99 = percentile(lat, 0.99)
    print(f"3. {clients} concurrent clients x {each} requests, each client every 0.25 s (keep-alive):")
    print(f"   baseline GET /healthz: p50 {percentile(base, 0.5):.2f} ms  p99 {percentile(base, 0.99):.2f} ms")
    print(
        f"   POST /mutate:          p50 {percentile(lat, 0.5):.2f} ms  p99 {p99:.2f} ms  "
        f"errors {errors}  ratio p99 {p99 / percentile(base, 0.99):.2f}x"
    )
    met = p99 < CONCURRENT_P99_MS and errors == 0
    print(f"   target p99 < {CONCURRENT_P99_MS:g} ms and no errors: {'met' if met else 'NOT met'}")
    ok = errors == 0
    at_once = LIMITS.review_workers + LIMITS.review_queue
    size, peak, errors, shed = asyncio.run(largest(port, context, pid, at_once))
    limit = int(memory_limit_quantity(LIMITS).removesuffix("Mi")) * MIB
    print(
        f"4. {at_once} clients at once, each one review of {size / 1024:.0f} KiB "
        f"(thousands of env entries): server peak RSS {peak / MIB:.0f} MiB, generated "
        f"limit {limit / MIB:.0f} MiB, {shed} answered 503 after waiting "
        f"{LIMITS.queue_wait_seconds:g} s, errors {errors}: "
        f"{'met' if peak < limit and not errors else 'NOT met'}"
    )
    return ok and peak < limit and errors == 0


if __name__ == "__main__":
    sys.exit(main())
