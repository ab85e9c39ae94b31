"""An httpx transport whose every socket operation ends by the request's deadline, however the server trickles.

httpx's timeouts bound each read, so a server that sends one byte every few seconds keeps a request alive
for ever; here each connect, TLS handshake, read and write waits at most until the deadline of the request
the current thread is making (`bounded`), so the whole request ends by it. Built from the public APIs of
httpx2 2.16 (BaseTransport) and httpcore2 2.16 (ConnectionPool with a NetworkBackend).
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore2
import httpx2

from kubegpu.deadline import Deadline

# httpcore2's errors as httpx2's, most specific first (what callers of an httpx2 client catch)
_ERRORS: tuple[tuple[type[Exception], type[httpx2.TransportError]], ...] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout),
    (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.TimeoutException, httpx2.TimeoutException),
    (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError),
    (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.NetworkError),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.ProtocolError, httpx2.ProtocolError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
)


@contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as err:
        for theirs, ours in _ERRORS:
            if isinstance(err, theirs):
                raise ours(str(err) or type(err).__name__) from err
        raise


class DeadlineTransport(httpx2.BaseTransport):
    """HTTP/1.1 over a connection pool whose sockets never wait past the current request's deadline."""

    def __init__(self, ssl_context: ssl.SSLContext, max_connections: int) -> None:
        self._local = threading.local()
        self._pool = httpcore2.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=5.0,
            network_backend=_BoundedBackend(self),
        )

    @contextmanager
    def bounded(self, deadline: Deadline) -> Iterator[None]:
        """Requests this thread makes inside the block, their bodies included, end by `deadline`."""
        previous = self.deadline()
        self._local.deadline = deadline
        try:
            yield
        finally:
            self._local.deadline = previous

    def deadline(self) -> Deadline | None:
        found: Deadline | None = getattr(self._local, "deadline", None)
        return found

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(request.stream, httpx2.SyncByteStream)
        core = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            answer = self._pool.handle_request(core)
        assert isinstance(answer.stream, Iterable)
        return httpx2.Response(
            status_code=answer.status, headers=answer.headers, stream=_Body(answer.stream), extensions=answer.extensions
        )

    def close(self) -> None:
        self._pool.close()


class _Body(httpx2.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx_errors():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


def _clamped(transport: DeadlineTransport, timeout: float | None, error: type[Exception]) -> float | None:
    """`timeout` cut to the time left before the current request's deadline; `error` once none is left."""
    deadline = transport.deadline()
    if deadline is None:
        return timeout
    left = deadline.remaining()
    if left <= 0:
        raise error(f"no answer within the request's {deadline.seconds:g} s")
    return left if timeout is None else min(timeout, left)


class _BoundedStream(httpcore2.NetworkStream):
    """A connection whose every blocking operation waits at most until the current request's deadline."""

    def __init__(self, stream: httpcore2.NetworkStream, transport: DeadlineTransport) -> None:
        self._stream = stream
        self._transport = transport

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _clamped(self._transport, timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _clamped(self._transport, timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        limit = _clamped(self._transport, timeout, httpcore2.ConnectTimeout)
        return _BoundedStream(self._stream.start_tls(ssl_context, server_hostname, limit), self._transport)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _BoundedBackend(httpcore2.NetworkBackend):
    def __init__(self, transport: DeadlineTransport) -> None:
        self._backend = httpcore2.SyncBackend()
        self._transport = transport

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        limit = _clamped(self._transport, timeout, httpcore2.ConnectTimeout)
        return _BoundedStream(
            self._backend.connect_tcp(host, port, limit, local_address, socket_options), self._transport
        )

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        limit = _clamped(self._transport, timeout, httpcore2.ConnectTimeout)
        return _BoundedStream(self._backend.connect_unix_socket(path, limit, socket_options), self._transport)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)
