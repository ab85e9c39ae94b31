"""Section 13.3 manifest rules: the YAML case table, image-reference parsing and the version heuristic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.lint import LintConfig, lint_text
from kubegpu.manifests import format_path
from kubegpu.rules.images import is_devel_image, parse_image, runtime_variant, tag_is_version

TABLE = yaml.safe_load((Path(__file__).parent / "cases" / "images.yaml").read_text())


def _expected(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [] if case["expect"] == "none" else list(case["expect"])


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["name"] for c in TABLE["cases"]])
def test_case(case: dict[str, Any]) -> None:
    config = LintConfig(select=tuple(case.get("select", TABLE["select"])))
    result = lint_text(f"{case['name']}.yaml", case["manifest"], config)
    got = sorted((f.name, f.location.line, f.location.dotted_path) for f in result.findings)
    want = sorted((e["rule"], e["line"], e["path"]) for e in _expected(case))
    assert got == want, [f.message for f in result.findings]
    for entry in _expected(case):
        key = (entry["rule"], entry["line"], entry["path"])
        finding = next(f for f in result.findings if (f.name, f.location.line, f.location.dotted_path) == key)
        if "severity" in entry:
            assert finding.severity.value == entry["severity"], finding.message
        if "message" in entry:
            fragments = entry["message"] if isinstance(entry["message"], list) else [entry["message"]]
            for fragment in fragments:
                assert fragment in finding.message, finding.message
        for fragment in entry.get("absent", []):
            assert fragment not in finding.message, finding.message
        if "fix" not in entry:
            continue
        if entry["fix"] is None:
            assert finding.fix is None
            continue
        assert finding.fix is not None
        assert finding.fix.safety.value == entry["fix"]["safety"]
        edits = [[e.op, format_path(e.path), e.value] for e in finding.fix.edits]
        assert edits == entry["fix"]["edits"]


@pytest.mark.parametrize(
    ("text", "domain", "path", "tag", "digest"),
    [
        ("ubuntu", "docker.io", "library/ubuntu", "", ""),
        ("nvidia/cuda:12.4.1-runtime-ubuntu22.04", "docker.io", "nvidia/cuda", "12.4.1-runtime-ubuntu22.04", ""),
        ("myreg:5000/img", "myreg:5000", "img", "", ""),
        ("myreg:5000/team/img:v1.2", "myreg:5000", "team/img", "v1.2", ""),
        ("localhost/img:1.0", "localhost", "img", "1.0", ""),
        ("nvcr.io/nvidia/pytorch:24.05-py3", "nvcr.io", "nvidia/pytorch", "24.05-py3", ""),
        ("img@sha256:" + "a" * 64, "docker.io", "library/img", "", "sha256:" + "a" * 64),
        ("[::1]:5000/img:2.0", "[::1]:5000", "img", "2.0", ""),
        ("UPPER/img", "UPPER", "img", "", ""),  # an upper-case first component can only be a registry host
        # distribution/reference splitDockerDomain: index.docker.io is docker.io, official images under library/
        (
            "index.docker.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
            "docker.io",
            "nvidia/cuda",
            "12.4.1-base-ubuntu22.04",
            "",
        ),
        ("index.docker.io/busybox", "docker.io", "library/busybox", "", ""),
        ("docker.io/busybox:1.36", "docker.io", "library/busybox", "1.36", ""),
    ],
)
def test_parse_image(text: str, domain: str, path: str, tag: str, digest: str) -> None:
    ref = parse_image(text)
    assert ref is not None
    assert (ref.domain, ref.path, ref.tag, ref.digest) == (domain, path, tag, digest)


@pytest.mark.parametrize(
    "text",
    [
        "IMAGE_NAME",
        "gcr.io/PROJECT_ID/x",
        "${IMAGE}",
        "<a>/<b>:<c>",
        "",
        "a" * 64,
        "img:",
        "img@sha256:short",
        "library/UPPER",
    ],
)
def test_unparseable_images(text: str) -> None:
    assert parse_image(text) is None


@pytest.mark.parametrize(
    ("tag", "version"),
    [
        ("24.05-py3", True),
        ("v0.6.3", True),
        ("2.3.1-cuda12.1-cudnn8-runtime", True),
        ("12.4.1-runtime-ubuntu22.04", True),
        ("20240501", True),
        ("nightly-2024-05-01", True),
        ("sha-1a2b3c4", True),
        ("14", True),
        ("latest", False),
        ("main", False),
        ("stable", False),
        ("nightly", False),
        ("gpu", False),
        ("main-latest", False),
        ("1.2-latest", False),
        ("ubuntu22.04", False),
        ("v1beta1", False),
        ("devel", False),
        ("deadbeef", False),
    ],
)
def test_tag_is_version(tag: str, version: bool) -> None:
    assert tag_is_version(tag) is version


def test_extra_immutable_tag_patterns() -> None:
    assert not tag_is_version("build-1234")
    assert tag_is_version("build-1234", [r"build-\d+"])
    assert not tag_is_version("latest", [r".*"])


def test_immutable_tags_option_is_read_from_the_config() -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - {name: a, image: 'myorg/a:build-17', resources: {limits: {nvidia.com/gpu: 1}}}\n"
    )
    plain = lint_text("p.yaml", text, LintConfig(select=("image-tag-mutable",)))
    assert [f.name for f in plain.findings] == ["image-tag-mutable"]
    configured = LintConfig(
        select=("image-tag-mutable",), options={"image-tag-mutable": {"immutable-tags": [r"build-\d+"]}}
    )
    assert lint_text("p.yaml", text, configured).findings == []


def test_runtime_variant_needs_a_documented_family() -> None:
    for image, variant in [
        ("nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04", "12.4.1-cudnn-runtime-ubuntu22.04"),
        ("pytorch/pytorch:2.3.0-cuda12.1-cudnn8-devel", "2.3.0-cuda12.1-cudnn8-runtime"),
        ("nvcr.io/nvidia/cuda-dl-base:25.01-cuda12.8-devel-ubuntu24.04", None),
        ("pytorch/pytorch:nightly-devel", None),
    ]:
        ref = parse_image(image)
        assert ref is not None and is_devel_image(ref)
        assert runtime_variant(ref) == variant


_component = st.from_regex(r"[a-z0-9]{1,8}(?:[._-][a-z0-9]{1,8}){0,2}", fullmatch=True)
_tag = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}", fullmatch=True)


@given(
    domain=st.sampled_from(["", "nvcr.io/", "myreg:5000/", "localhost:5000/"]),
    parts=st.lists(_component, min_size=1, max_size=3),
    tag=st.one_of(st.just(""), _tag),
    digest=st.one_of(st.just(""), st.from_regex(r"[0-9a-f]{64}", fullmatch=True)),
)
def test_parse_round_trip(domain: str, parts: list[str], tag: str, digest: str) -> None:
    text = domain + "/".join(parts) + (f":{tag}" if tag else "") + (f"@sha256:{digest}" if digest else "")
    if not domain and len(parts) == 1 and not tag and not digest and len(parts[0]) == 64:
        return
    ref = parse_image(text)
    assert ref is not None
    assert ref.tag == tag
    assert ref.digest == (f"sha256:{digest}" if digest else "")
    assert ref.kube_tag == (tag or ("" if digest else "latest"))
    assert ref.with_tag("x").endswith(":x") and "@" not in ref.with_tag("x")


@given(st.text(max_size=60))
def test_tag_is_version_never_crashes_and_latest_never_passes(tag: str) -> None:
    result = tag_is_version(tag)
    if "latest" in tag.lower().replace("_", "-").replace("+", "-").split("-"):
        assert result is False
