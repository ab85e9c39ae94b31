"""Image sizes from an OCI image layout on disk or from a registry, for the cold-start model.

Follows the OCI image-spec v1.1 (image layout: `index.json`, `blobs/<alg>/<hex>`; manifests and indexes with
`layers`, `manifests`, `size`, `annotations`, `org.opencontainers.image.ref.name`) and distribution-spec v1.1
(`GET /v2/<name>/manifests/<reference>` with Accept headers; on 401 the Bearer challenge of the Docker token
protocol: `WWW-Authenticate: Bearer realm=...,service=...,scope=...`, anonymous). The pull size is what travels:
the config and layer blobs' sizes as the manifest states them, for the linux/amd64 (or first) platform.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kubegpu.errors import InputError
from kubegpu.manifests.image import ImageRef, parse_image
from kubegpu.serving.coldstart import ImageFacts, lazy_from_manifest

INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")
MANIFEST_TYPES = ("application/vnd.oci.image.manifest.v1+json", "application/vnd.docker.distribution.manifest.v2+json")
REF_NAME = "org.opencontainers.image.ref.name"
_DIGEST = re.compile(r"^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$")
_MAX_DOCUMENT = 4 << 20
Fetch = Callable[[str], Mapping[str, Any]]  # digest -> manifest or index


def _platform_choice(index: Mapping[str, Any], platform: tuple[str, str]) -> Mapping[str, Any] | None:
    entries = [m for m in index.get("manifests") or [] if isinstance(m, Mapping)]
    runnable = [
        m
        for m in entries
        if (m.get("annotations") or {}).get("vnd.docker.reference.type") is None
        and not str(m.get("artifactType") or "").startswith("application/vnd.amazon.soci")
    ]
    for entry in runnable:
        p = entry.get("platform")
        if isinstance(p, Mapping) and (p.get("os"), p.get("architecture")) == platform:
            return entry
    return runnable[0] if runnable else None


def image_size(
    document: Mapping[str, Any], fetch: Fetch, platform: tuple[str, str] = ("linux", "amd64"), depth: int = 0
) -> ImageFacts:
    """Bytes to pull for a manifest (config + layers) or an index (its platform's manifest), and lazy format."""
    if depth > 4:
        raise InputError("image index nesting is deeper than 4 levels")
    if "manifests" in document:
        entry = _platform_choice(document, platform)
        if entry is None:
            raise InputError("the image index lists no image manifest")
        inner = image_size(fetch(str(entry.get("digest"))), fetch, platform, depth + 1)
        return ImageFacts(
            inner.bytes, lazy_from_manifest(document) or lazy_from_manifest(entry) or inner.lazy, inner.source
        )
    layers = document.get("layers")
    if not isinstance(layers, list):
        raise InputError("not an image manifest: it has no layers")
    total = sum(int(layer.get("size") or 0) for layer in layers if isinstance(layer, Mapping))
    config = document.get("config")
    if isinstance(config, Mapping):
        total += int(config.get("size") or 0)
    return ImageFacts(total, lazy_from_manifest(document))


# --- OCI image layout on disk --------------------------------------------------------------------------------


def _blob(root: Path, digest: str) -> Mapping[str, Any]:
    if not _DIGEST.match(digest):
        raise InputError(f"not a digest: {digest!r}", file=str(root))
    algorithm, hexpart = digest.split(":", 1)
    path = root / "blobs" / algorithm / hexpart
    try:
        data = json.loads(path.read_bytes()[:_MAX_DOCUMENT])
    except OSError as err:
        raise InputError(f"cannot read blob {digest}: {err.strerror or err}", file=str(root)) from err
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"blob {digest} is not JSON: {err}", file=str(path)) from err
    if not isinstance(data, Mapping):
        raise InputError(f"blob {digest} is not a JSON object", file=str(path))
    return data


def layout_images(root: Path) -> dict[str, ImageFacts]:
    """Every image an OCI layout's index.json names (by `org.opencontainers.image.ref.name`; '' when unnamed)."""
    index_path = root / "index.json"
    try:
        index = json.loads(index_path.read_text())
    except OSError as err:
        raise InputError(f"not an OCI image layout: {err.strerror or err}", file=str(index_path)) from err
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"index.json is not JSON: {err}", file=str(index_path)) from err
    entries = index.get("manifests") if isinstance(index, Mapping) else None
    if not isinstance(entries, list) or not entries:
        raise InputError("index.json lists no manifests", file=str(index_path))
    out: dict[str, ImageFacts] = {}
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        name = str((entry.get("annotations") or {}).get(REF_NAME, ""))
        facts = image_size(_blob(root, str(entry.get("digest"))), lambda d: _blob(root, d))
        out[name] = ImageFacts(facts.bytes, facts.lazy or lazy_from_manifest(entry), f"OCI layout {root}")
    return out


def match_layout(images: list[str], layout: Mapping[str, ImageFacts]) -> dict[str, ImageFacts]:
    """Pod images the layout's ref names match (full reference or tag), or the one image of a one-image pod."""
    out: dict[str, ImageFacts] = {}
    for image in images:
        ref = parse_image(image)
        tag = ref.tag if ref is not None and ref.tag else None
        for name, facts in layout.items():
            if name and (name == image or (tag is not None and name == tag)):
                out[image] = facts
    if not out and len(images) == 1 and len(layout) == 1:
        out[images[0]] = next(iter(layout.values()))
    return out


# --- a registry ----------------------------------------------------------------------------------------------


def parse_reference(image: str) -> ImageRef:
    """The image reference as the container runtimes read it (kubegpu.manifests.image); InputError for a text
    that is none (a placeholder, upper case), which no registry could be asked for."""
    ref = parse_image(image)
    if ref is None:
        raise InputError(f"{image!r} is not an image reference")
    return ref


def _challenge(header: str) -> dict[str, str]:
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


class Registry:
    """Anonymous reads of manifests from one registry over HTTPS (HTTP for localhost and `insecure`)."""

    def __init__(self, registry: str, insecure: bool = False, timeout: float = 10.0) -> None:
        host = "registry-1.docker.io" if registry == "docker.io" else registry
        local = host.split(":")[0] in ("localhost", "127.0.0.1", "::1")
        self.base = f"{'http' if insecure or local else 'https'}://{host}"
        self.timeout = timeout
        self.token: str | None = None

    def _get(self, url: str, accept: str) -> Mapping[str, Any]:
        headers = {"Accept": accept}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(url, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                data = json.loads(response.read(_MAX_DOCUMENT))
        except urllib.error.HTTPError as err:
            if (
                err.code == 401
                and self.token is None
                and "bearer" in (err.headers.get("WWW-Authenticate") or "").lower()
            ):
                self._login(err.headers["WWW-Authenticate"])
                return self._get(url, accept)
            raise InputError(f"{url}: HTTP {err.code} {err.reason}") from err
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise InputError(f"{url}: {getattr(err, 'reason', err)}") from err
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise InputError(f"{url}: not JSON ({err})") from err
        if not isinstance(data, Mapping):
            raise InputError(f"{url}: not a JSON object")
        return data

    def _login(self, header: str) -> None:
        fields = _challenge(header)
        realm = fields.pop("realm", None)
        if not realm:
            raise InputError(f"{self.base}: a Bearer challenge without a realm")
        url = realm + "?" + urllib.parse.urlencode(fields)
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as response:
                body = json.loads(response.read(_MAX_DOCUMENT))
        except (urllib.error.URLError, TimeoutError, OSError, json.JSONDecodeError) as err:
            raise InputError(f"{realm}: cannot get an anonymous token ({err})") from err
        token = body.get("token") or body.get("access_token") if isinstance(body, Mapping) else None
        if not isinstance(token, str):
            raise InputError(f"{realm}: the token response has no token")
        self.token = token

    def manifest(self, repository: str, reference: str) -> Mapping[str, Any]:
        accept = ", ".join((*INDEX_TYPES, *MANIFEST_TYPES))
        return self._get(f"{self.base}/v2/{repository}/manifests/{reference}", accept)


def registry_image(image: str, insecure: bool = False, timeout: float = 10.0) -> ImageFacts:
    """The pull size of an image as its registry describes it (no layer is downloaded)."""
    ref = parse_reference(image)
    client = Registry(ref.domain, insecure, timeout)
    facts = image_size(client.manifest(ref.path, ref.reference), lambda digest: client.manifest(ref.path, digest))
    return ImageFacts(facts.bytes, facts.lazy, f"registry {ref.domain}")
