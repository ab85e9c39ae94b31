"""`kubegpu gen <what>`: parse options, call kubegpu.generate, print or write the result.

Every command prints YAML (or TOML) to stdout, or writes `-o FILE` (several files: `-o DIR`);
`--validate` checks each object against its schema before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from kubegpu.cli.common import fail, node_target
from kubegpu.errors import InputError, KubegpuError
from kubegpu.generate import (
    computedomain,
    fixes,
    kai,
    kubelet,
    kueue,
    lazypull,
    mirror,
    modelcache,
    prepull,
    scheduler,
    volcano,
)
from kubegpu.generate.output import Generated, write_generated
from kubegpu.generate.validate import SchemaViolation, validate_object, validate_workload
from kubegpu.generate.workload import load_workloads, one_workload

Output = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write here instead of stdout (a folder for several files)."),
]
Validate = Annotated[bool, typer.Option("--validate", help="Check every object against its schema first.")]
For = Annotated[str, typer.Option("--for", help="The workload manifest to patch.")]
Name = Annotated[str | None, typer.Option("--name", help="Which workload, when the file holds several.")]


def _emit(result: Generated, output: Path | None, validate: bool) -> None:
    if validate:
        try:
            for obj in result.objects():
                validate_object(obj)
            for obj in result.patched:
                validate_workload(obj)
        except SchemaViolation as err:
            raise fail(f"generated object failed validation: {err}") from err
        except KubegpuError as err:  # kubernetes-validate missing: which extra to install
            raise fail(err) from err
    if output is None:
        typer.echo(result.render(), nl=False)
        return
    for path in write_generated(result, output):
        typer.echo(f"wrote {path}", err=True)


def _out_dir(output: Path | None) -> Path | None:
    """The folder a kustomization's resource paths are relative to (bundles go to a folder)."""
    return output


def _run(make: Callable[[], Generated]) -> Generated:
    try:
        return make()
    except KubegpuError as err:
        raise fail(err) from err


def gen_scheduler(
    strategy: Annotated[str, typer.Option(help="MostAllocated or RequestedToCapacityRatio.")] = "MostAllocated",
    gpu_weight: Annotated[int, typer.Option(help="Weight of the GPU resource (1..100).")] = 10,
    cpu_weight: Annotated[int, typer.Option(help="Weight of CPU (1..100).")] = 1,
    memory_weight: Annotated[int, typer.Option(help="Weight of memory (1..100).")] = 1,
    scheduler_name: Annotated[str, typer.Option(help="Name of the profile.")] = "gpu-binpack",
    gpu_resource: Annotated[str, typer.Option(help="GPU resource name.")] = "nvidia.com/gpu",
    configmap: Annotated[bool, typer.Option("--configmap", help="Wrap it in a ConfigMap.")] = False,
    namespace: Annotated[str, typer.Option(help="ConfigMap namespace.")] = "kube-system",
    output: Output = None,
    validate: Validate = False,
) -> None:
    """A KubeSchedulerConfiguration with a GPU bin-packing profile beside the default one."""
    options = scheduler.SchedulerOptions(
        strategy=strategy,
        gpu_weight=gpu_weight,
        cpu_weight=cpu_weight,
        memory_weight=memory_weight,
        scheduler_name=scheduler_name,
        gpu_resource=gpu_resource,
        configmap=configmap,
        namespace=namespace,
    )
    _emit(_run(lambda: scheduler.generate(options)), output, validate)


def gen_kueue(
    nodes: Annotated[int, typer.Option(help="How many GPU nodes the queue covers.")],
    node: Annotated[
        str | None,
        typer.Option(help="Node preset or profile: per-node sizes from its gen kubelet config."),
    ] = None,
    gpus_per_node: Annotated[int | None, typer.Option(help="GPUs on each node.")] = None,
    cpus_per_node: Annotated[
        str | None, typer.Option(help="Allocatable CPUs per node GPU pods may use, e.g. 200.")
    ] = None,
    memory_per_node: Annotated[
        str | None, typer.Option(help="Allocatable memory per node for GPU pods, e.g. 1800Gi.")
    ] = None,
    topology: Annotated[str | None, typer.Option(help="gke, eks, aks, nvl72 or comma-separated node labels.")] = None,
    gpu_resource: Annotated[str, typer.Option(help="GPU resource name.")] = "nvidia.com/gpu",
    flavor: Annotated[str, typer.Option(help="ResourceFlavor name.")] = "gpu",
    cluster_queue: Annotated[str, typer.Option(help="ClusterQueue name.")] = "gpu-cluster-queue",
    local_queue: Annotated[str, typer.Option(help="LocalQueue name.")] = "gpu-queue",
    namespace: Annotated[str, typer.Option(help="LocalQueue namespace.")] = "default",
    node_label: Annotated[
        list[str] | None,
        typer.Option(help="key=value the GPU nodes carry (repeat); default nvidia.com/gpu.present=true."),
    ] = None,
    gpu_taint: Annotated[
        str, typer.Option(help="Taint key on GPU nodes to tolerate ('' for none).")
    ] = "nvidia.com/gpu",
    output: Output = None,
    validate: Validate = False,
) -> None:
    """ResourceFlavor, ClusterQueue with GPU quota, LocalQueue, and a TAS Topology."""
    labels = {"nvidia.com/gpu.present": "true"}
    if node_label:
        labels = {}
        for item in node_label:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise fail(InputError(f"--node-label must be key=value, not {item!r}"))
            labels[key] = value
    if node is not None:
        from kubegpu.topology.presets import load_node

        try:
            sizes = kueue.sizes_from_node(load_node(node))
        except KubegpuError as err:
            raise fail(err) from err
        gpus_per_node = gpus_per_node or sizes[0]
        cpus_per_node = cpus_per_node or sizes[1]
        memory_per_node = memory_per_node or sizes[2]
    if gpus_per_node is None or cpus_per_node is None or memory_per_node is None:
        raise fail(
            InputError(
                "give --node PRESET, or --gpus-per-node, --cpus-per-node and --memory-per-node "
                "(a ClusterQueue must cover every resource its workloads request)"
            )
        )
    options = kueue.KueueOptions(
        gpus_per_node=gpus_per_node,
        nodes=nodes,
        cpus_per_node=cpus_per_node,
        memory_per_node=memory_per_node,
        topology=topology,
        gpu_resource=gpu_resource,
        flavor=flavor,
        cluster_queue=cluster_queue,
        local_queue=local_queue,
        namespace=namespace,
        node_labels=labels,
        gpu_taint=gpu_taint or None,
    )
    _emit(_run(lambda: kueue.generate(options)), output, validate)


def gen_volcano(
    queue: Annotated[str, typer.Option(help="Queue name.")] = "gpu",
    gpus: Annotated[int | None, typer.Option(help="GPU capability of the queue.")] = None,
    for_: Annotated[str | None, typer.Option("--for", help="A job manifest: add its PodGroup and patch.")] = None,
    name: Name = None,
    gpu_weight: Annotated[int, typer.Option(help="binpack weight of the GPU resource.")] = 10,
    binpack_weight: Annotated[int, typer.Option(help="binpack.weight of the plugin.")] = 10,
    gpu_resource: Annotated[str, typer.Option(help="GPU resource name.")] = "nvidia.com/gpu",
    output: Output = None,
    validate: Validate = False,
) -> None:
    """Volcano Queue, a PodGroup for a job (minMember = its pods) and a GPU-weighted binpack."""
    options = volcano.VolcanoOptions(
        queue=queue,
        gpus=gpus,
        gpu_resource=gpu_resource,
        gpu_weight=gpu_weight,
        binpack_weight=binpack_weight,
    )
    _emit(
        _run(lambda: volcano.generate(options, one_workload(for_, name) if for_ else None, _out_dir(output))),
        output,
        validate,
    )


def gen_kai(
    gpus: Annotated[int, typer.Option(help="GPU quota of the team queue.")],
    queue: Annotated[str, typer.Option(help="Team queue name.")] = "gpu-team",
    parent: Annotated[str, typer.Option(help="Parent queue name.")] = "default",
    gpu_limit: Annotated[int | None, typer.Option(help="Hard cap including borrowing (default none).")] = None,
    strategy: Annotated[str, typer.Option(help="binpack or spread.")] = "binpack",
    for_: Annotated[str | None, typer.Option("--for", help="A workload manifest to send to this queue.")] = None,
    name: Name = None,
    output: Output = None,
    validate: Validate = False,
) -> None:
    """KAI Scheduler queues and the bin-packing placement strategy."""
    options = kai.KaiOptions(gpus=gpus, queue=queue, parent=parent, gpu_limit=gpu_limit, strategy=strategy)
    _emit(
        _run(lambda: kai.generate(options, one_workload(for_, name) if for_ else None, _out_dir(output))),
        output,
        validate,
    )


def gen_computedomain(
    for_: For,
    name: Name = None,
    domain_name: Annotated[str | None, typer.Option(help="ComputeDomain name.")] = None,
    wait_for_all_nodes: Annotated[
        bool,
        typer.Option(help="numNodes = the job's pods (driver with IMEXDaemonsWithDNSNames=false)."),
    ] = False,
    gpus_per_domain: Annotated[int, typer.Option(help="GPUs in one NVLink domain.")] = 72,
    output: Output = None,
    validate: Validate = False,
) -> None:
    """A DRA ComputeDomain and the claim that keep a multi-node job in one NVLink domain."""
    options = computedomain.ComputeDomainOptions(
        name=domain_name, wait_for_all_nodes=wait_for_all_nodes, gpus_per_domain=gpus_per_domain
    )
    _emit(
        _run(lambda: computedomain.generate(one_workload(for_, name), options, _out_dir(output))),
        output,
        validate,
    )


def gen_prepull(
    from_: Annotated[list[str], typer.Option("--from", help="Manifests whose GPU images to pre-pull (repeat).")],
    name: Annotated[str, typer.Option("--name", help="DaemonSet name.")] = "gpu-image-prepull",
    namespace: Annotated[str | None, typer.Option(help="DaemonSet namespace.")] = None,
    gpu_node_label: Annotated[
        str, typer.Option(help="key=value that marks GPU nodes.")
    ] = "nvidia.com/gpu.present=true",
    noop: Annotated[str, typer.Option(help="No-op command run in each image (shell words).")] = "sh -c true",
    output: Output = None,
    validate: Validate = False,
) -> None:
    """A DaemonSet that pre-pulls every GPU image onto every (tainted) GPU node."""
    key, sep, value = gpu_node_label.partition("=")
    if not sep or not key:
        raise fail(InputError("--gpu-node-label must be key=value"))
    words = tuple(noop.split())
    if not words:
        raise fail(InputError("--noop must name a command"))
    options = prepull.PrepullOptions(name=name, namespace=namespace, gpu_node_label=(key, value), noop_command=words)
    _emit(_run(lambda: prepull.generate(load_workloads(from_), options)), output, validate)


def gen_mirror(
    mirror_url: Annotated[str, typer.Option("--mirror", help="The mirror's URL.")],
    registry: Annotated[
        list[str] | None,
        typer.Option(help="Registry to mirror (repeat; _default = all others)."),
    ] = None,
    public: Annotated[bool, typer.Option("--public", help="An untrusted mirror: pull only, no resolve.")] = False,
    skip_upstream: Annotated[
        bool, typer.Option("--skip-upstream", help="Never fall back to the registry itself.")
    ] = False,
    ca: Annotated[str | None, typer.Option(help="CA file for the mirror's certificate.")] = None,
    dial_timeout: Annotated[
        str | None, typer.Option(help="Give up on the mirror after this (containerd 2.1+).")
    ] = None,
    output: Output = None,
) -> None:
    """containerd hosts.toml files for a pull-through registry mirror."""
    options = mirror.MirrorOptions(
        mirror=mirror_url,
        registries=tuple(registry) if registry else mirror.DEFAULT_REGISTRIES,
        trusted=not public,
        skip_upstream=skip_upstream,
        ca=ca,
        dial_timeout=dial_timeout,
    )
    _emit(_run(lambda: mirror.generate(options)), output, False)


def gen_lazy_pull(
    snapshotter: Annotated[str, typer.Option(help="stargz, soci or nydus.")],
    containerd: Annotated[int, typer.Option(help="containerd major version (1 or 2).")] = 2,
    output: Output = None,
) -> None:
    """The containerd and snapshotter configuration for lazy image loading."""
    _emit(_run(lambda: lazypull.generate(snapshotter, containerd)), output, False)


def gen_model_cache(
    model: Annotated[str, typer.Option(help="Short name of the model (a DNS label).")],
    source: Annotated[str, typer.Option(help="hf://org/model[@rev] or s3://bucket/prefix.")],
    size: Annotated[str, typer.Option(help="Disk the weights need, e.g. 40Gi.")],
    mode: Annotated[str, typer.Option(help="node-local or shared.")] = "node-local",
    for_: Annotated[str | None, typer.Option("--for", help="An inference workload to mount the cache into.")] = None,
    name: Name = None,
    mount_path: Annotated[str, typer.Option(help="Where the weights appear.")] = "/models",
    storage_class: Annotated[str | None, typer.Option(help="StorageClass of the shared claim.")] = None,
    namespace: Annotated[str, typer.Option(help="Namespace of the cache objects.")] = "default",
    min_replicas: Annotated[int, typer.Option(help="Warm minimum of replicas.")] = 1,
    hf_token_secret: Annotated[str | None, typer.Option(help="Secret with key 'token' for gated models.")] = None,
    output: Output = None,
    validate: Validate = False,
) -> None:
    """Stage model weights on the nodes (or a shared volume) and mount them read-only."""
    options = modelcache.ModelCacheOptions(
        model=model,
        source=source,
        size=size,
        mode=mode,
        mount_path=mount_path,
        storage_class=storage_class,
        namespace=namespace,
        min_replicas=min_replicas,
        hf_token_secret=hf_token_secret,
    )
    _emit(
        _run(lambda: modelcache.generate(options, one_workload(for_, name) if for_ else None, _out_dir(output))),
        output,
        validate,
    )


Config = Annotated[Path | None, typer.Option("--config", help="kubegpu.toml or pyproject.toml, as in `kubegpu fix`.")]
Smt = Annotated[int | None, typer.Option(help="Threads per core of the target nodes, as in `kubegpu fix`.")]
Node = Annotated[
    str | None, typer.Option("--node", help="Node preset (`kubegpu nodes`) or profile file, as in `kubegpu fix`.")
]


def _fix_options(
    for_: str, config_file: Path | None, node: str | None, smt: int | None, size: str | None, scheduler_name: str
) -> fixes.FixOptions:
    """The lint configuration and node facts `kubegpu fix` would use for `for_` (its config file is found the same
    way), with the explicit /dev/shm size checked first."""
    from kubegpu.lint import LintConfig, all_rules, find_config, load_config

    if size is not None:
        fixes.check_shm_size(size)
    found = config_file or find_config(Path(for_) if for_ != "-" else Path.cwd())
    config = load_config(found, all_rules()) if found else LintConfig()
    return fixes.FixOptions(size, scheduler_name, config, node_target(node, None, smt))


def _fix_bundle(
    for_: str, name: str | None, names: list[str], options: fixes.FixOptions, output: Path | None
) -> Generated:
    result = fixes.generate(one_workload(for_, name), names, options, _out_dir(output))
    for line in result.not_fixed:
        typer.echo(f"kubegpu: not fixed: {line}", err=True)
    return result.generated


def gen_dshm(
    for_: For,
    name: Name = None,
    size: Annotated[
        str | None, typer.Option(help="sizeLimit, above 64Mi (default: half the pod's memory limit).")
    ] = None,
    config_file: Config = None,
    node: Node = None,
    smt: Smt = None,
    output: Output = None,
    validate: Validate = False,
) -> None:
    """A kustomize patch with the /dev/shm fixes of `kubegpu fix`: a memory-backed, sized /dev/shm."""
    _emit(
        _run(
            lambda: _fix_bundle(
                for_, name, ["dshm"], _fix_options(for_, config_file, node, smt, size, "gpu-binpack"), output
            )
        ),
        output,
        validate,
    )


def gen_fixes(
    for_: For,
    name: Name = None,
    only: Annotated[
        str, typer.Option(help="Comma-separated: dshm, qos, pull-policy, scheduler.")
    ] = "dshm,qos,pull-policy",
    size: Annotated[str | None, typer.Option(help="/dev/shm sizeLimit, above 64Mi.")] = None,
    scheduler_name: Annotated[str, typer.Option(help="Profile for the scheduler fix.")] = "gpu-binpack",
    config_file: Config = None,
    node: Node = None,
    smt: Smt = None,
    output: Output = None,
    validate: Validate = False,
) -> None:
    """The fixes of `kubegpu fix --unsafe-fixes` for one workload (/dev/shm, Guaranteed QoS, pull policy,
    scheduler) as a kustomize bundle (files untouched)."""
    names = [n.strip() for n in only.split(",") if n.strip()]
    _emit(
        _run(
            lambda: _fix_bundle(
                for_, name, names, _fix_options(for_, config_file, node, smt, size, scheduler_name), output
            )
        ),
        output,
        validate,
    )


def gen_kubelet(
    node: Annotated[str, typer.Option("--node", help="Node preset name or profile file.")],
    largest_gpu_pod: Annotated[
        str | None,
        typer.Option(help="GPUs (N), N:CPUS:MEMORY, gpus=N,cpu=C,memory=M, or a manifest."),
    ] = None,
    reserve_cores: Annotated[int, typer.Option(help="Whole cores reserved for the system and kubelet.")] = 2,
    kube_reserved_memory: Annotated[str, typer.Option(help="kubeReserved memory.")] = "2Gi",
    system_reserved_memory: Annotated[str, typer.Option(help="systemReserved memory.")] = "2Gi",
    output: Output = None,
    validate: Validate = False,
) -> None:
    """A KubeletConfiguration the kubelet model starts with and that admits the largest GPU pod."""
    from kubegpu.topology.presets import load_node

    options = kubelet.KubeletOptions(
        reserve_cores=reserve_cores,
        kube_reserved_memory=kube_reserved_memory,
        system_reserved_memory=system_reserved_memory,
        largest_gpu_pod=largest_gpu_pod,
    )
    _emit(_run(lambda: kubelet.generate(load_node(node), options)[0]), output, validate)


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    """Add the generators to `kubegpu gen`."""
    for name, command in (
        ("kubelet", gen_kubelet),
        ("scheduler", gen_scheduler),
        ("kueue", gen_kueue),
        ("volcano", gen_volcano),
        ("kai", gen_kai),
        ("computedomain", gen_computedomain),
        ("prepull", gen_prepull),
        ("mirror", gen_mirror),
        ("lazy-pull", gen_lazy_pull),
        ("model-cache", gen_model_cache),
        ("dshm", gen_dshm),
        ("fixes", gen_fixes),
    ):
        gen_app.command(name)(command)
