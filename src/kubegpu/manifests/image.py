"""An image reference as the kubelet and the container runtimes parse it: registry domain, repository path, tag
and digest. Every command that reads an image (lint's image and Dockerfile rules, coldstart's registry and OCI
layout look-ups) reads it here.

Follows distribution/reference v0.6 (reference/regexp.go for the grammar; normalize.go ParseNormalizedNamed and
splitDockerDomain: a first component without '.', ':' or upper case, and not `localhost`, is a path on docker.io;
index.docker.io is docker.io; an official image is `library/NAME`). Kubernetes v1.35 SetDefaults_Container reads
a reference without tag or digest as `latest`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

DEFAULT_DOMAIN = "docker.io"
LEGACY_DEFAULT_DOMAIN = "index.docker.io"
OFFICIAL_REPOSITORY_PREFIX = "library/"

# distribution/reference grammar (reference/regexp.go), anchored.
_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE = re.compile(
    rf"^(?P<name>(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)(?::(?P<tag>{_TAG}))?(?:@(?P<digest>{_DIGEST}))?$"
)
_IDENTIFIER = re.compile(r"^[a-f0-9]{64}$")


@dataclass(frozen=True)
class ImageRef:
    """A parsed image reference: registry domain, repository path, tag and digest (either may be empty)."""

    raw: str
    domain: str
    path: str
    tag: str
    digest: str

    @property
    def name(self) -> str:
        """The normalised repository name, e.g. `docker.io/nvidia/cuda`."""
        return f"{self.domain}/{self.path}"

    @property
    def kube_tag(self) -> str:
        """The tag Kubernetes defaulting sees: `latest` when neither a tag nor a digest is given."""
        return self.tag or ("" if self.digest else "latest")

    @property
    def reference(self) -> str:
        """What a registry is asked for: the digest, else the tag (`latest` when neither is given)."""
        return self.digest or self.kube_tag

    def with_tag(self, tag: str) -> str:
        """The original reference text with another tag (the digest dropped: it belonged to the old tag)."""
        base = self.raw.split("@", 1)[0]
        if self.tag:
            base = base[: -len(self.tag) - 1]
        return f"{base}:{tag}"


@lru_cache(maxsize=4096)  # a repository names a few dozen images thousands of times; ImageRef is immutable
def parse_image(text: str) -> ImageRef | None:
    """Parse an image reference the way the kubelet does; None for what it cannot parse (placeholders, uppercase)."""
    if not text or len(text) > 512 or _IDENTIFIER.match(text):
        return None
    match = _REFERENCE.match(text)
    if match is None:
        return None
    name = match.group("name")
    if len(name) > 255:
        return None
    first, slash, rest = name.partition("/")
    if not slash or ("." not in first and ":" not in first and first != "localhost" and first.lower() == first):
        domain, path = DEFAULT_DOMAIN, name
    else:
        domain, path = first, rest
    if domain == LEGACY_DEFAULT_DOMAIN:
        domain = DEFAULT_DOMAIN
    if domain == DEFAULT_DOMAIN and "/" not in path:
        path = OFFICIAL_REPOSITORY_PREFIX + path
    return ImageRef(text, domain, path, match.group("tag") or "", match.group("digest") or "")
