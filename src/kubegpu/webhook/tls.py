"""The serving certificate: loaded once at start, reloaded when the files change (no restart).

Each new connection takes the current SSLContext; a changed pair is loaded into a fresh context and
replaces it only when the key matches the certificate, so a half-written rotation is never served.
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass
from pathlib import Path

from kubegpu.errors import InputError


@dataclass(frozen=True)
class FileStamp:
    """What identifies one version of the files: device, inode, size and change time of each."""

    parts: tuple[tuple[int, int, int, int], ...]


def _stamp(paths: tuple[Path, ...]) -> FileStamp | None:
    try:
        stats = [os.stat(p) for p in paths]  # follows the ..data symlinks of a Secret volume
    except OSError:
        return None
    return FileStamp(tuple((s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns) for s in stats))


def load_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server SSLContext holding the pair; ssl.SSLError or OSError when they do not load together."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(cert), str(key))  # OpenSSL checks that the key matches the cert
    return context


def check_tls(cert: Path, key: Path) -> ssl.SSLContext:
    """Load the pair, turning a wrong path or mismatched key into one clear InputError."""
    for path in (cert, key):
        if not path.is_file():
            raise InputError("TLS file does not exist", file=str(path))
    try:
        return load_context(cert, key)
    except ssl.SSLError as err:
        raise InputError(f"certificate and key do not load together: {err.reason or err}", file=str(cert)) from err
    except OSError as err:
        raise InputError(f"cannot read TLS file: {err.strerror}", file=str(cert)) from err


class CertificateReloader:
    """Holds the current context; `poll()` swaps in a rotated pair once it loads as a whole."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.cert = cert
        self.key = key
        self._stamp = _stamp((cert, key))
        self.context = check_tls(cert, key)
        self._failed: FileStamp | None = None

    def poll(self) -> bool | None:
        """Reload if the files changed: True when a new pair was loaded, False when the changed
        files do not (yet) load together, None when nothing changed."""
        stamp = _stamp((self.cert, self.key))
        if stamp is None or stamp == self._stamp:
            return None
        try:
            context = load_context(self.cert, self.key)
        except (ssl.SSLError, OSError, ValueError):
            first = stamp != self._failed
            self._failed = stamp
            return False if first else None  # count a broken version once, keep the old pair
        if _stamp((self.cert, self.key)) != stamp:
            return None  # written to while loading: load again at the next poll
        self.context = context
        self._stamp = stamp
        self._failed = None
        return True
