"""Image sizes from an OCI image layout written here and from a registry served on localhost (never the internet)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from kubegpu.errors import InputError
from kubegpu.live.registry import layout_images, match_layout, parse_reference, registry_image
from kubegpu.serving.coldstart import ImageFacts

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
STARGZ = "containerd.io/snapshot/stargz/toc.digest"


def _manifest(layer_sizes: list[int], config_size: int = 1500, lazy: bool = False) -> dict[str, Any]:
    layers = []
    for i, size in enumerate(layer_sizes):
        layer: dict[str, Any] = {
            "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
            "digest": "sha256:" + hashlib.sha256(str(i).encode()).hexdigest(),
            "size": size,
        }
        if lazy:
            layer["annotations"] = {STARGZ: "sha256:" + "ab" * 32}
        layers.append(layer)
    return {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": "sha256:" + "cd" * 32,
            "size": config_size,
        },
        "layers": layers,
    }


def _digest(doc: dict[str, Any]) -> tuple[str, bytes]:
    raw = json.dumps(doc).encode()
    return "sha256:" + hashlib.sha256(raw).hexdigest(), raw


def _index(entries: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[dict[str, Any], dict[str, bytes]]:
    blobs: dict[str, bytes] = {}
    manifests = []
    for manifest, extra in entries:
        digest, raw = _digest(manifest)
        blobs[digest] = raw
        manifests.append({"mediaType": OCI_MANIFEST, "digest": digest, "size": len(raw), **extra})
    return {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests}, blobs


def _layout(root: Path, index: dict[str, Any], blobs: dict[str, bytes]) -> Path:
    (root / "blobs" / "sha256").mkdir(parents=True)
    (root / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    (root / "index.json").write_text(json.dumps(index))
    for digest, raw in blobs.items():
        (root / "blobs" / "sha256" / digest.split(":")[1]).write_bytes(raw)
    return root


def test_layout_sizes_and_names(tmp_path: Path) -> None:
    index, blobs = _index(
        [
            (
                _manifest([4_000_000_000, 5_000_000_000]),
                {"annotations": {"org.opencontainers.image.ref.name": "v0.6.3"}},
            ),
            (_manifest([100], lazy=True), {"annotations": {"org.opencontainers.image.ref.name": "ghcr.io/a/b:1"}}),
        ]
    )
    images = layout_images(_layout(tmp_path / "layout", index, blobs))
    assert images["v0.6.3"].bytes == 9_000_001_500 and images["v0.6.3"].lazy is None
    assert images["ghcr.io/a/b:1"].bytes == 1600 and images["ghcr.io/a/b:1"].lazy == "eStargz"
    matched = match_layout(["vllm/vllm-openai:v0.6.3", "ghcr.io/a/b:1", "busybox:1.36"], images)
    assert set(matched) == {"vllm/vllm-openai:v0.6.3", "ghcr.io/a/b:1"}


def test_a_nested_platform_index_picks_linux_amd64(tmp_path: Path) -> None:
    arm, amd = _manifest([7]), _manifest([11])
    inner, blobs = _index(
        [
            (arm, {"platform": {"os": "linux", "architecture": "arm64"}}),
            (amd, {"platform": {"os": "linux", "architecture": "amd64"}}),
        ]
    )
    digest, raw = _digest(inner)
    blobs[digest] = raw
    index = {"schemaVersion": 2, "manifests": [{"mediaType": OCI_INDEX, "digest": digest, "size": len(raw)}]}
    [facts] = layout_images(_layout(tmp_path / "layout", index, blobs)).values()
    assert facts.bytes == 11 + 1500
    assert match_layout(["only/one:1"], {"": facts}) == {"only/one:1": facts}


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (lambda root: None, "not an OCI image layout"),
        (lambda root: (root / "index.json").write_text("{"), "not JSON"),
        (lambda root: (root / "index.json").write_text('{"manifests": []}'), "lists no manifests"),
        (
            lambda root: (root / "index.json").write_text('{"manifests": [{"digest": "sha256:' + "0" * 64 + '"}]}'),
            "cannot read blob",
        ),
        (
            lambda root: (root / "index.json").write_text('{"manifests": [{"digest": "../../etc/passwd"}]}'),
            "not a digest",
        ),
    ],
)
def test_broken_layouts(tmp_path: Path, write: Any, message: str) -> None:
    root = tmp_path / "layout"
    root.mkdir()
    write(root)
    with pytest.raises(InputError, match=message):
        layout_images(root)


@pytest.mark.parametrize(
    ("image", "parts"),
    [
        ("vllm/vllm-openai:v0.6.3", ("docker.io", "vllm/vllm-openai", "v0.6.3")),
        ("busybox", ("docker.io", "library/busybox", "latest")),
        ("nvcr.io/nvidia/pytorch:24.05-py3", ("nvcr.io", "nvidia/pytorch", "24.05-py3")),
        ("localhost:5000/m@sha256:" + "a" * 64, ("localhost:5000", "m", "sha256:" + "a" * 64)),
        # the one parser (kubegpu.manifests.image): index.docker.io is docker.io, as lint reads it
        ("index.docker.io/nvidia/cuda:12.4.1", ("docker.io", "nvidia/cuda", "12.4.1")),
    ],
)
def test_parse_reference(image: str, parts: tuple[str, str, str]) -> None:
    ref = parse_reference(image)
    assert (ref.domain, ref.path, ref.reference) == parts


@pytest.mark.parametrize("image", ["gcr.io/PROJECT_ID/server:1", "${IMAGE}", "img:"])
def test_a_text_that_is_no_image_reference_is_refused_before_any_request(image: str) -> None:
    with pytest.raises(InputError, match="is not an image reference"):
        parse_reference(image)


def test_a_digest_is_no_tag_when_matching_a_layout() -> None:
    facts = ImageFacts(1, None)
    digest = "sha256:" + "a" * 64
    assert match_layout([f"nvcr.io/nvidia/pytorch@{digest}", "x:1"], {"a" * 64: facts}) == {}
    assert match_layout(["nvcr.io/nvidia/pytorch:24.05-py3", "x:1"], {"24.05-py3": facts}) == {
        "nvcr.io/nvidia/pytorch:24.05-py3": facts
    }


def test_registry_with_anonymous_bearer_token(httpserver: HTTPServer) -> None:
    amd = _manifest([3_000_000_000, 2_000_000_000])
    index, blobs = _index(
        [
            (
                amd,
                {
                    "platform": {"os": "linux", "architecture": "amd64"},
                    "annotations": {"com.amazon.soci.index-digest": "sha256:" + "ef" * 32},
                },
            )
        ]
    )
    host = f"127.0.0.1:{httpserver.port}"
    challenge = f'Bearer realm="http://{host}/token",service="{host}",scope="repository:team/server:pull"'

    def manifests(request: Request) -> Response:
        if request.headers.get("Authorization") != "Bearer t0k":
            return Response("", status=401, headers={"WWW-Authenticate": challenge})
        assert OCI_INDEX in request.headers["Accept"] and OCI_MANIFEST in request.headers["Accept"]
        reference = request.path.rsplit("/", 1)[1]
        body = json.dumps(index).encode() if reference == "v1" else blobs[reference]
        return Response(body, content_type=OCI_MANIFEST)

    httpserver.expect_request(
        "/token", query_string={"service": host, "scope": "repository:team/server:pull"}
    ).respond_with_json({"token": "t0k"})
    httpserver.expect_request(re.compile(r"/v2/team/server/manifests/.*")).respond_with_handler(manifests)
    facts = registry_image(f"{host}/team/server:v1")
    assert facts.bytes == 5_000_001_500 and facts.lazy == "SOCI" and facts.source == f"registry {host}"


def test_registry_errors_are_one_line(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v2/team/gone/manifests/v1").respond_with_data("nope", status=404)
    with pytest.raises(InputError, match="HTTP 404"):
        registry_image(f"127.0.0.1:{httpserver.port}/team/gone:v1")
