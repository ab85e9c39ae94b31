"""The webhook's HTTPS server: our own accept loop around uvicorn's HTTP/1.1 protocol.

Accepting connections ourselves lets every limit apply from the first byte: a connection cap that
counts TLS handshakes too (at the cap the longest-idle connection makes room), a handshake timeout,
header and body timeouts, and each new connection takes the current (possibly rotated) certificate.
Uses only public asyncio APIs (sock_accept, connect_accepted_socket) and uvicorn 0.54's H11Protocol.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import signal
import socket
import ssl
import threading
from dataclasses import dataclass

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from kubegpu.errors import InputError
from kubegpu.webhook.app import ReviewPool, create_app
from kubegpu.webhook.limits import Limits
from kubegpu.webhook.metrics import Metrics
from kubegpu.webhook.review import WebhookConfig
from kubegpu.webhook.tls import CertificateReloader

log = logging.getLogger("kubegpu.webhook")
GRACE_SECONDS = 10.0  # how long a stop waits for requests in progress
TRANSIENT_ACCEPT_ERRORS = frozenset(
    {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM, errno.ECONNABORTED, errno.EPROTO}
)


@dataclass(eq=False)
class _Slot:
    """One accepted connection, from accept to close (mutable bookkeeping, not a domain object)."""

    sock: socket.socket
    client: str
    task: asyncio.Task[None] | None = None
    protocol: GuardedProtocol | None = None

    def idle(self) -> bool:
        """In its TLS handshake, or between requests with no request bytes received yet."""
        return self.protocol is None or self.protocol.idle()


class GuardedProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline on each phase of reading a request.

    The request head must arrive within `header_timeout` of the connection (or of its first byte
    after a response), the body within `body_timeout` of the head; between requests uvicorn's
    keep-alive timeout applies. A connection past its deadline is aborted.
    """

    def __init__(self, config: uvicorn.Config, server_state: ServerState, server: WebhookServer, slot: _Slot) -> None:
        super().__init__(config=config, server_state=server_state, app_state={})
        self._server = server
        self._slot = slot
        self._deadline: asyncio.TimerHandle | None = None
        self._phase = ""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._slot.protocol = self
        self._arm("header_timeout", self._server.limits.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)
        self._server.release(self._slot)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._track()

    def idle(self) -> bool:
        """No request in progress and no bytes of the next one."""
        return (
            (self.cycle is None or self.cycle.response_complete)
            and self.conn.their_state is h11.IDLE
            and not self.conn.trailing_data[0]
        )

    def _track(self) -> None:
        if self.transport.is_closing():
            self._disarm()
            return
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            self._arm("body_timeout", self._server.limits.body_timeout)
        elif state is h11.IDLE and self.conn.trailing_data[0]:
            self._arm("header_timeout", self._server.limits.header_timeout)
        elif state is not h11.IDLE:
            self._disarm()  # the request is complete: the app's time is not the client's

    def _arm(self, phase: str, seconds: float) -> None:
        if self._phase == phase:
            return  # the deadline runs from the start of the phase, not from the latest byte
        self._disarm()
        self._phase = phase
        self._deadline = self.loop.call_later(seconds, self._expire, phase)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._phase = ""

    def _expire(self, phase: str) -> None:
        self._deadline = None
        self._phase = ""
        if not self.transport.is_closing():
            self._server.metrics.closed.labels(phase).inc()
            self.transport.abort()


class WebhookServer:
    """Serve the webhook app over HTTPS until `stop()` (or SIGTERM/SIGINT when run in main)."""

    def __init__(
        self,
        config: WebhookConfig,
        tls: CertificateReloader,
        host: str = "0.0.0.0",
        port: int = 8443,
        limits: Limits | None = None,
        metrics: Metrics | None = None,
        log_level: str = "warning",
    ) -> None:
        self.limits = limits or Limits()
        self.metrics = metrics or Metrics()
        self.tls = tls
        self.host = host
        self.port = port
        self.pool = ReviewPool(
            self.limits.review_workers, self.limits.review_queue, self.metrics, self.limits.queue_wait_seconds
        )
        app = create_app(config, self.metrics, self.limits, self.pool)
        self._uvicorn = uvicorn.Config(
            app,
            host=host,
            port=port,
            lifespan="off",
            access_log=False,
            log_level=log_level,
            ws="none",
            proxy_headers=False,
            server_header=False,
            timeout_keep_alive=max(1, round(self.limits.keep_alive_timeout)),
        )
        self._uvicorn.load()
        self._state = ServerState()
        nofile, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.connection_cap = self.limits.connection_cap(nofile if nofile != resource.RLIM_INFINITY else 1 << 20)
        self.client_cap = max(1, self.connection_cap * self.limits.client_share_percent // 100)
        self._slots: dict[_Slot, None] = {}  # insertion order: oldest first
        self._per_client: dict[str, int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self.started = threading.Event()

    # -- lifecycle -----------------------------------------------------------------------------

    def run(self) -> None:
        """Run until stopped; handles SIGTERM and SIGINT when called from the main thread."""
        asyncio.run(self.serve())

    def stop(self) -> None:
        """Ask the server to stop (safe from any thread): finish requests in progress, then return."""
        loop, event = self._loop, self._stop
        if loop is not None and event is not None:
            loop.call_soon_threadsafe(event.set)

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        self._loop, self._stop = loop, asyncio.Event()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self._stop.set)
        listener = self._listen()
        accept = loop.create_task(self._accept_loop(listener))
        reload = loop.create_task(self._reload_loop())
        self.started.set()
        try:
            await self._stop.wait()
        finally:
            accept.cancel()
            reload.cancel()
            listener.close()
            await self._drain()
            self.pool.close()

    def _listen(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP,
        # and without it the first answer on a new connection waited 40 ms for a delayed ACK
        listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((self.host, self.port))
        except OSError as err:
            listener.close()
            raise InputError(f"cannot listen on {self.host}:{self.port}: {err.strerror}") from err
        listener.listen(1024)  # queued connections hold no file until accepted
        listener.setblocking(False)
        return listener

    async def _drain(self) -> None:
        for slot in list(self._slots):
            if slot.protocol is None:
                self._close(slot, None)
            else:
                try:
                    slot.protocol.shutdown()  # idle ones close now, busy ones after their answer
                except h11.LocalProtocolError:  # half a request received: nothing to finish
                    self._close(slot, None)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GRACE_SECONDS
        while self._slots and loop.time() < deadline:
            await asyncio.sleep(0.05)
        for slot in list(self._slots):
            self._close(slot, None)

    # -- connections ---------------------------------------------------------------------------

    async def _accept_loop(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, _ = await loop.sock_accept(listener)
            except OSError as err:
                if err.errno not in TRANSIENT_ACCEPT_ERRORS:
                    raise
                log.warning("accept failed: %s", err.strerror)
                await asyncio.sleep(0.05)
                continue
            self._admit(sock)

    def _admit(self, sock: socket.socket) -> None:
        """Take a new connection within the caps: per client address, then in all.

        A client at its own cap is refused. At the overall cap, the longest-idle connection of the
        client holding the most makes room, so one client flooding idle connections can never
        crowd out another (the API server, the kubelet's probes).
        """
        try:
            client = str(sock.getpeername()[0])
        except OSError:  # already gone
            sock.close()
            return
        if self._per_client.get(client, 0) >= self.client_cap:
            sock.close()
            self.metrics.closed.labels("refused").inc()
            return
        if len(self._slots) >= self.connection_cap:
            top = max(self._per_client, key=lambda c: self._per_client[c])
            victim = next((s for s in self._slots if s.client == top and s.idle()), None)
            if victim is None:  # every connection of that client is busy with a request
                sock.close()
                self.metrics.closed.labels("refused").inc()
                return
            self._close(victim, "evicted")
        slot = _Slot(sock, client)
        self._slots[slot] = None
        self._per_client[client] = self._per_client.get(client, 0) + 1
        self.metrics.connections.set(len(self._slots))
        slot.task = asyncio.get_running_loop().create_task(self._handshake(slot))

    async def _handshake(self, slot: _Slot) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        try:
            await loop.connect_accepted_socket(
                lambda: GuardedProtocol(self._uvicorn, self._state, self, slot),
                slot.sock,
                ssl=self.tls.context,
                ssl_handshake_timeout=self.limits.handshake_timeout,
                ssl_shutdown_timeout=self.limits.handshake_timeout,
            )
        except asyncio.CancelledError:
            slot.sock.close()
            self.release(slot)
        except (OSError, ssl.SSLError, ValueError):
            timed_out = loop.time() - start >= self.limits.handshake_timeout
            self.metrics.closed.labels("handshake_timeout" if timed_out else "handshake_failed").inc()
            slot.sock.close()
            self.release(slot)

    def _close(self, slot: _Slot, reason: str | None) -> None:
        if reason is not None:
            self.metrics.closed.labels(reason).inc()
        if slot.protocol is not None:
            slot.protocol.transport.abort()
        elif slot.task is not None:
            slot.task.cancel()  # a task cancelled before it ran never closes its socket: close it here
            slot.task.add_done_callback(lambda task: slot.sock.close() if task.cancelled() else None)
        self.release(slot)

    def release(self, slot: _Slot) -> None:
        """Forget a connection (idempotent): its protocol lost the connection or it was closed."""
        if self._slots.pop(slot, 0) is None:
            left = self._per_client[slot.client] - 1
            if left:
                self._per_client[slot.client] = left
            else:
                del self._per_client[slot.client]
            self.metrics.connections.set(len(self._slots))

    def open_connections(self) -> int:
        return len(self._slots)

    # -- certificate rotation ------------------------------------------------------------------

    async def _reload_loop(self) -> None:
        while True:
            await asyncio.sleep(self.limits.reload_interval)
            try:
                result = self.tls.poll()
            except Exception as err:  # a reload problem must never stop the server
                log.warning("could not check the serving certificate: %s", err)
                continue
            if result is True:
                self.metrics.reloads.labels("success").inc()
                log.warning("loaded the rotated serving certificate %s", self.tls.cert)
            elif result is False:
                self.metrics.reloads.labels("failure").inc()
                log.warning(
                    "rotated certificate %s and key %s do not load together yet; still serving the previous pair",
                    self.tls.cert,
                    self.tls.key,
                )
