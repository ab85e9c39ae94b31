"""`gen mirror`: containerd hosts.toml files that send image pulls to a pull-through mirror.

Follows containerd's registry host configuration (docs/hosts.md, containerd 1.5+): one
`certs.d/<registry>/hosts.toml` per registry, mirrors tried in order, `server` as the fallback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from kubegpu.errors import InputError
from kubegpu.generate.output import Generated, OutFile

CERTS_DIR = "/etc/containerd/certs.d"
UPSTREAM = {"docker.io": "https://registry-1.docker.io"}
DEFAULT_REGISTRIES = ("docker.io", "nvcr.io", "ghcr.io", "registry.k8s.io", "quay.io")
_HOST_RE = re.compile(r"^(_default|[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?(:[0-9]{1,5})?)$")


@dataclass(frozen=True)
class MirrorOptions:
    """What `gen mirror` was asked for."""

    mirror: str
    registries: tuple[str, ...] = DEFAULT_REGISTRIES
    trusted: bool = True
    skip_upstream: bool = False
    ca: str | None = None
    dial_timeout: str | None = None


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"--mirror must be an http(s) URL such as https://mirror.example:5000, not {url!r}")
    return url.rstrip("/")


def hosts_toml(registry: str, options: MirrorOptions) -> str:
    """The hosts.toml text for one registry namespace."""
    mirror = _check_url(options.mirror)
    if not _HOST_RE.match(registry):
        raise InputError(f"--registry: {registry!r} is not a registry host[:port] or _default")
    capabilities = '["pull", "resolve"]' if options.trusted else '["pull"]'
    lines = []
    if registry != "_default":
        server = mirror if options.skip_upstream else UPSTREAM.get(registry, f"https://{registry}")
        lines.append(
            "# Fallback once every [host] below failed"
            + (" (the mirror itself: upstream is never contacted)." if options.skip_upstream else ".")
        )
        lines.append(f"server = {_toml_string(server)}")
        lines.append("")
    lines.append("# The pull-through mirror, tried first; containerd adds ?ns=<registry> to each request.")
    lines.append(f"[host.{_toml_string(mirror)}]")
    lines.append(
        "  # resolve (tag -> digest) only from a mirror you run; a public mirror gets pull only."
        if options.trusted
        else "  # pull only: this mirror is not trusted to resolve tags to digests."
    )
    lines.append(f"  capabilities = {capabilities}")
    if options.ca:
        lines.append(f"  ca = {_toml_string(options.ca)}")
    if options.dial_timeout:
        lines.append("  # Give up on an unreachable mirror quickly (containerd 2.1+; default 30s).")
        lines.append(f"  dial_timeout = {_toml_string(options.dial_timeout)}")
    return "\n".join(lines) + "\n"


def generate(options: MirrorOptions) -> Generated:
    if not options.registries:
        raise InputError("give at least one --registry")
    files = []
    for registry in dict.fromkeys(options.registries):
        header = (
            f"{CERTS_DIR}/{registry}/hosts.toml: pulls of "
            + ("images from registries without their own folder" if registry == "_default" else f"{registry} images")
            + " go to the mirror.",
            "containerd reads it without a restart once config_path is set:",
            f'  containerd 2.x: [plugins."io.containerd.cri.v1.images".registry] config_path = "{CERTS_DIR}"',
            f'  containerd 1.x: [plugins."io.containerd.grpc.v1.cri".registry] config_path = "{CERTS_DIR}"',
        )
        files.append(OutFile(f"certs.d/{registry}/hosts.toml", text=hosts_toml(registry, options), header=header))
    return Generated(tuple(files))
