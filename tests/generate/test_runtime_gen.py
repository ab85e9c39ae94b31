"""mirror, lazy-pull and model-cache: each option changes what it should, output parses."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kubegpu.errors import InputError
from kubegpu.generate import lazypull, mirror, modelcache, workload
from kubegpu.generate.validate import validate_object

DATA = Path(__file__).parent / "data"


def _toml(text: str) -> dict[str, object]:
    return tomllib.loads(text)


def test_mirror_defaults() -> None:
    result = mirror.generate(mirror.MirrorOptions(mirror="https://mirror.internal:5000"))
    names = [f.name for f in result.files]
    assert names == [f"certs.d/{r}/hosts.toml" for r in mirror.DEFAULT_REGISTRIES]
    docker = _toml(result.files[0].render())
    assert docker["server"] == "https://registry-1.docker.io"
    assert docker["host"] == {"https://mirror.internal:5000": {"capabilities": ["pull", "resolve"]}}
    nvcr = _toml(result.files[1].render())
    assert nvcr["server"] == "https://nvcr.io"


def test_mirror_options() -> None:
    options = mirror.MirrorOptions(
        mirror="http://10.0.0.5:5000/",
        registries=("_default", "myregistry.io:5000"),
        trusted=False,
        skip_upstream=True,
        ca="/etc/certs/mirror.pem",
        dial_timeout="2s",
    )
    result = mirror.generate(options)
    default = _toml(result.files[0].render())
    assert "server" not in default
    host = default["host"]["http://10.0.0.5:5000"]  # type: ignore[index]
    assert host == {"capabilities": ["pull"], "ca": "/etc/certs/mirror.pem", "dial_timeout": "2s"}
    ported = _toml(result.files[1].render())
    assert ported["server"] == "http://10.0.0.5:5000"  # --skip-upstream: the mirror is the server


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (mirror.MirrorOptions(mirror="ftp://x"), "http"),
        (mirror.MirrorOptions(mirror="https://m", registries=("bad host!",)), "registry"),
        (mirror.MirrorOptions(mirror="https://m", registries=()), "at least one"),
    ],
)
def test_mirror_errors(options: mirror.MirrorOptions, message: str) -> None:
    with pytest.raises(InputError, match=message):
        mirror.generate(options)


@pytest.mark.parametrize("name", sorted(lazypull.SNAPSHOTTERS))
@pytest.mark.parametrize("major", [1, 2])
def test_lazy_pull(name: str, major: int) -> None:
    result = lazypull.generate(name, major)
    config = _toml(result.files[0].render())
    snap = lazypull.SNAPSHOTTERS[name]
    assert config["version"] == (3 if major == 2 else 2)
    assert config["proxy_plugins"][name]["type"] == "snapshot"  # type: ignore[index]
    assert config["proxy_plugins"][name]["address"] == snap.socket  # type: ignore[index]
    plugins = config["plugins"]
    cri = (
        plugins["io.containerd.cri.v1.images"]  # type: ignore[index]
        if major == 2
        else plugins["io.containerd.grpc.v1.cri"]["containerd"]  # type: ignore[index]
    )
    assert cri == {"snapshotter": name, "disable_snapshot_annotations": False}
    own = _toml(result.files[1].render())
    if snap.keychain:
        assert own["cri_keychain"] == {
            "enable_keychain": True,
            "image_service_path": "/run/containerd/containerd.sock",
        }
        assert "--image-service-endpoint" in result.files[1].render()
    else:
        assert own["address"] == snap.socket


def test_lazy_pull_errors() -> None:
    with pytest.raises(InputError, match="snapshotter"):
        lazypull.generate("overlayfs")
    with pytest.raises(InputError, match="containerd"):
        lazypull.generate("soci", 3)


@pytest.mark.parametrize("mode", ["node-local", "shared"])
@pytest.mark.parametrize("source", ["hf://meta-llama/Llama-3.1-8B@v1", "s3://models-bucket/llama"])
def test_model_cache(mode: str, source: str) -> None:
    inference = workload.one_workload(str(DATA / "inference.yaml"))
    options = modelcache.ModelCacheOptions(
        model="llama", source=source, size="40Gi", mode=mode, min_replicas=3, storage_class="nfs"
    )
    result = modelcache.generate(options, inference)
    for obj in [*result.objects(), *result.patched]:
        validate_object(obj)
    kinds = [o["kind"] for o in result.objects()]
    spec = result.patched[0]["spec"]
    pod = spec["template"]["spec"]
    mount = pod["containers"][0]["volumeMounts"][0]
    assert mount["readOnly"] is True and mount["mountPath"] == "/models"
    assert pod["initContainers"][0]["name"] == "wait-for-weights"
    assert spec["replicas"] == 3
    assert "sidecar" not in [c["name"] for c in pod["containers"] if c.get("volumeMounts")]
    if mode == "node-local":
        assert "DaemonSet" in kinds
        assert pod["volumes"][0]["hostPath"] == {
            "path": "/var/lib/kubegpu/models/llama",
            "type": "Directory",
        }
    else:
        assert {"PersistentVolumeClaim", "Job"} <= set(kinds)
        pvc = next(o for o in result.objects() if o["kind"] == "PersistentVolumeClaim")
        assert pvc["spec"]["storageClassName"] == "nfs"
        assert pod["volumes"][0]["persistentVolumeClaim"]["readOnly"] is True
        assert mount["subPath"] == "llama"
    stage = next(
        c
        for o in result.objects()
        if o["kind"] in ("DaemonSet", "Job")
        for c in [
            *o["spec"]["template"]["spec"].get("initContainers", ()),
            *o["spec"]["template"]["spec"]["containers"],
        ]
        if c["name"] == "stage-weights"
    )
    script = stage["command"][2]
    assert (
        'repo_id="meta-llama/Llama-3.1-8B", revision="v1"' in script
        if source.startswith("hf")
        else "aws s3 sync" in script
    )
    assert script.endswith("touch /cache/llama/.kubegpu-complete")


def test_model_cache_keeps_enough_replicas() -> None:
    inference = workload.one_workload(str(DATA / "inference.yaml"))
    result = modelcache.generate(
        modelcache.ModelCacheOptions(model="m", source="hf://a/b", size="1Gi", min_replicas=1),
        inference,
    )
    ops = [c for f in result.files for d in f.documents if isinstance(d.obj, list) for c in d.obj]
    assert not any(op["path"] == "/spec/replicas" for op in ops)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"source": "gs://x/y"}, "--source"),
        ({"model": "Bad_Name"}, "--model"),
        ({"mode": "everywhere"}, "--mode"),
        ({"size": "0"}, "--size"),
        ({"mount_path": "models"}, "absolute"),
    ],
)
def test_model_cache_errors(changes: dict[str, str], message: str) -> None:
    base = {"model": "m", "source": "hf://a/b", "size": "1Gi"}
    options = modelcache.ModelCacheOptions(**{**base, **changes})  # type: ignore[arg-type]
    with pytest.raises(InputError, match=message):
        modelcache.generate(options)
