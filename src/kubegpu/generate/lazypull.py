"""`gen lazy-pull`: the containerd and snapshotter configuration stargz, soci and nydus document.

From the projects' own install guides: containerd/stargz-snapshotter docs/INSTALL.md and
overview.md, awslabs/soci-snapshotter docs/kubernetes.md, containerd/nydus-snapshotter README.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.errors import InputError
from kubegpu.generate.output import Generated, OutFile


@dataclass(frozen=True)
class Snapshotter:
    """One remote snapshotter: its socket, state directory, config file and image format."""

    name: str
    socket: str
    root: str | None
    config_path: str
    config: str
    images: str
    keychain: bool


SNAPSHOTTERS = {
    "stargz": Snapshotter(
        "stargz",
        "/run/containerd-stargz-grpc/containerd-stargz-grpc.sock",
        None,
        "/etc/containerd-stargz-grpc/config.toml",
        "# Proxy the CRI image service so the snapshotter sees the pull secrets the kubelet\n"
        "# sends (private registries); the kubelet then talks to the snapshotter's socket.\n"
        "[cri_keychain]\n"
        "enable_keychain = true\n"
        'image_service_path = "/run/containerd/containerd.sock"\n',
        "eStargz images (convert with ctr-remote image optimize or nerdctl image convert "
        "--estargz); plain images still work, pulled in full",
        True,
    ),
    "soci": Snapshotter(
        "soci",
        "/run/soci-snapshotter-grpc/soci-snapshotter-grpc.sock",
        "/var/lib/soci-snapshotter-grpc",
        "/etc/soci-snapshotter-grpc/config.toml",
        "# Proxy the CRI image service so the snapshotter sees the pull secrets the kubelet\n"
        "# sends (ECR and other private registries).\n"
        "[cri_keychain]\n"
        "enable_keychain = true\n"
        'image_service_path = "/run/containerd/containerd.sock"\n',
        "unchanged images plus a SOCI index pushed beside them (soci create / soci push); "
        "AWS reports gains for images over ~250 MB",
        True,
    ),
    "nydus": Snapshotter(
        "nydus",
        "/run/containerd-nydus/containerd-nydus-grpc.sock",
        None,
        "/etc/nydus/config.toml",
        "version = 1\n"
        'root = "/var/lib/containerd-nydus"\n'
        'address = "/run/containerd-nydus/containerd-nydus-grpc.sock"\n'
        "\n"
        "[daemon]\n"
        "# fusedev: nydusd serves RAFS over FUSE (fscache needs the in-kernel EROFS path)\n"
        'fs_driver = "fusedev"\n'
        'nydusd_config = "/etc/nydus/nydusd-config.fusedev.json"\n',
        "Nydus (RAFS) images converted with nydusify; OCI images still run, pulled in full",
        False,
    ),
}


def containerd_snippet(s: Snapshotter, containerd_major: int) -> str:
    """The containerd config.toml fragment that plugs the snapshotter in for CRI."""
    cri = (
        '[plugins."io.containerd.cri.v1.images"]'
        if containerd_major >= 2
        else '[plugins."io.containerd.grpc.v1.cri".containerd]'
    )
    lines = [
        f"version = {3 if containerd_major >= 2 else 2}",
        "",
        "# The snapshotter runs as its own daemon; containerd talks to it over this socket.",
        "[proxy_plugins]",
        f"  [proxy_plugins.{s.name}]",
        '    type = "snapshot"',
        f'    address = "{s.socket}"',
    ]
    if s.root:
        lines += [
            "    # Lets the kubelet measure the snapshotter's disk use for image GC and limits.",
            f"    [proxy_plugins.{s.name}.exports]",
            f'      root = "{s.root}"',
        ]
    lines += [
        "",
        cri,
        "  # Every CRI pull goes through it (the pause image too: images pulled with another",
        "  # snapshotter are invisible to it, so set this before the node joins).",
        f'  snapshotter = "{s.name}"',
        "  # Pass the image layer annotations the snapshotter needs to mount layers lazily.",
        "  disable_snapshot_annotations = false",
    ]
    return "\n".join(lines) + "\n"


def generate(name: str, containerd_major: int = 2) -> Generated:
    snapshotter = SNAPSHOTTERS.get(name)
    if snapshotter is None:
        raise InputError(f"--snapshotter must be one of {', '.join(SNAPSHOTTERS)}, not {name!r}")
    if containerd_major not in (1, 2):
        raise InputError("--containerd must be 1 or 2")
    header = (
        f"Merge into /etc/containerd/config.toml (containerd {containerd_major}.x), then restart containerd.",
        f"Lazy loading needs {snapshotter.images}.",
        "Expect container start in seconds, but the first reads fetch over the network: end to end",
        "gains shrink to 1.5-3x once model loading and CUDA init are counted.",
    )
    files = [
        OutFile(
            "containerd-config.toml",
            text=containerd_snippet(snapshotter, containerd_major),
            header=header,
        )
    ]
    cfg_header = [f"{snapshotter.config_path}: the {name} snapshotter's own configuration."]
    if name == "nydus":
        cfg_header.append("nydusd's own JSON (registry backend, blob cache) goes in nydusd-config.fusedev.json:")
        cfg_header.append("see dragonflyoss/nydus docs/containerd-env-setup.md.")
    if snapshotter.keychain:
        cfg_header.append(
            f"With the keychain on, start the kubelet with --image-service-endpoint=unix://{snapshotter.socket}"
        )
    files.append(
        OutFile(
            snapshotter.config_path.lstrip("/").replace("etc/", "", 1),
            text=snapshotter.config,
            header=tuple(cfg_header),
        )
    )
    return Generated(tuple(files))
