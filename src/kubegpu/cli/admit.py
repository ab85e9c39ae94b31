"""`kubegpu admit`: would the kubelet admit these pods on this node, and why (or why not)?

Reads pods (any workload's pod template) and a node preset/profile, runs kubegpu.kubelet.NodeState.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated

import typer

from kubegpu.cli.common import EXIT_FINDINGS, EXIT_USAGE, fail
from kubegpu.errors import KubegpuError
from kubegpu.kubelet import Admission, KubeletConfig, KubeletStartupError, NodeState, PodRequest
from kubegpu.kubelet.config import read_kubelet_config
from kubegpu.kubelet.features import SUPPORTED_VERSIONS
from kubegpu.kubelet.pod import input_pods
from kubegpu.kubelet.remedy import remedy
from kubegpu.manifests import Document
from kubegpu.manifests.reader import read_inputs
from kubegpu.topology.cpulist import format_cpulist
from kubegpu.topology.presets import load_node

_PODS_HELP = "Pod manifests (a Pod or any workload with a pod template); '-' reads stdin."
_NODE_HELP = "Node preset name (see `kubegpu nodes`) or node profile file (JSON/YAML)."
_CONFIG_HELP = (
    "KubeletConfiguration file (YAML or JSON); default: the kubelet's defaults (no CPU, memory or topology "
    "manager: nothing is pinned or aligned), with a warning."
)
_EXISTING_HELP = "Pods already running on the node, admitted first (repeatable)."
_EXPLAIN_HELP = "Print every hint provider's hints and the Topology Manager merge."
_VERSION_HELP = f"Kubelet release modelled ({', '.join(SUPPORTED_VERSIONS)})."
_SAME_NODE_HELP = (
    "Place every pod on one node, one after the other (default: each pod template on a fresh node "
    "holding only the --existing pods)."
)


class Output(StrEnum):
    text = "text"
    json = "json"


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    del gen_app
    app.command("admit")(admit)


def admit(
    pods: Annotated[list[str], typer.Argument(help=_PODS_HELP)],
    node: Annotated[str, typer.Option("--node", help=_NODE_HELP)],
    kubelet_config: Annotated[str | None, typer.Option("--kubelet-config", help=_CONFIG_HELP)] = None,
    existing: Annotated[list[str] | None, typer.Option("--existing", help=_EXISTING_HELP)] = None,
    explain: Annotated[bool, typer.Option("--explain", help=_EXPLAIN_HELP)] = False,
    output: Annotated[Output, typer.Option("--output", "-o", help="text or json.")] = Output.text,
    kubernetes_version: Annotated[str, typer.Option("--kubernetes-version", help=_VERSION_HELP)] = "1.35",
    same_node: Annotated[bool, typer.Option("--same-node", help=_SAME_NODE_HELP)] = False,
) -> None:
    """Predict, pod by pod, whether the kubelet admits each pod (exit 1 on a rejection)."""
    try:
        topology = load_node(node)
        try:
            config = (
                read_kubelet_config(kubelet_config, kubernetes_version)
                if kubelet_config
                else KubeletConfig.default_for(version=kubernetes_version)
            )
            state = NodeState(topology, config)
        except KubeletStartupError as err:
            where = f"{err.file}: " if err.file else ""
            typer.echo(
                f"kubegpu: error: {where}the kubelet would not start ({err.component}): {err.message}",
                err=True,
            )
            raise typer.Exit(EXIT_USAGE) from err
        before = _load_pods(existing or [])
        wanted = _load_pods(pods)
    except KubegpuError as err:
        raise fail(err) from err
    if not kubelet_config:  # after the inputs: a bad input is one line
        typer.echo(_defaults_warning(node), err=True)
    for pod in before:
        result = state.admit(pod)
        if not result.admitted:
            typer.echo(
                f"kubegpu: warning: existing pod {pod.name} was not admitted: {result.reason}",
                err=True,
            )
    results: list[Admission] = []
    remedies: list[str | None] = []
    placed: list[PodRequest] = []  # pods admitted on the shared node (--same-node)
    for pod in wanted:
        if same_node:
            result = state.admit(pod)
        else:  # a fresh node per pod template: another template's CPUs do not make this one fail
            fresh = NodeState(topology, config)
            for other in before:
                fresh.admit(other)
            result = fresh.admit(pod)
        results.append(result)
        if result.admitted:
            placed.append(pod)
            remedies.append(None)
        else:
            remedies.append(remedy(topology, config, [*before, *placed] if same_node else before, pod))
    if output is Output.json:
        typer.echo(
            json.dumps(
                [{**r.to_dict(), **({"remedy": m} if m else {})} for r, m in zip(results, remedies, strict=True)],
                indent=2,
            )
        )
    else:
        typer.echo(_header(topology.name, config, state))
        for result, line in zip(results, remedies, strict=True):
            typer.echo("\n".join(_render(result, explain)))
            if line:
                typer.echo(f"  {line}")
    if not all(r.admitted for r in results):
        raise typer.Exit(EXIT_FINDINGS)


def _load_pods(names: list[str]) -> list[PodRequest]:
    """The pods of every file, as lint sees them: objects embedded in Argo steps, TrainJobs with their runtime.

    A partial object (a patch fragment, `workloads.partial`) is named in a notice and skipped, as lint counts it
    and does not lint it; so is a runtime that an object of the input uses (its pods are that object's). A file
    of such objects only is no error."""
    inputs = read_inputs(names)  # files, folders and `-`, as lint reads them
    for notice in inputs.notices:
        typer.echo(f"kubegpu: notice: {notice}", err=True)
    per_file: list[tuple[str, Sequence[Document]]] = [(file.name, file.documents) for file in inputs.files]
    found = input_pods(per_file, frozenset(file.name for file in inputs.files if file.walked))
    for notice in found.notices:
        typer.echo(f"kubegpu: notice: {notice}", err=True)
    return list(found.pods)


def _defaults_warning(node: str) -> str:
    """Without --kubelet-config the model is a kubelet with no configuration, which admits every pod: say so."""
    return (
        "kubegpu: warning: no --kubelet-config: modelling the kubelet's defaults (cpuManagerPolicy none, "
        "memoryManagerPolicy None, topologyManagerPolicy none): no CPU is pinned, nothing is NUMA-aligned and only "
        "a lack of resources refuses a pod; give the node's KubeletConfiguration, or write the one kubegpu recommends "
        f"for this node with `kubegpu gen kubelet --node {node} -o kubelet.yaml` and pass --kubelet-config "
        "kubelet.yaml"
    )


def _header(name: str, config: KubeletConfig, state: NodeState) -> str:
    reserved = format_cpulist(state.reserved_cpus) if state.reserved_cpus else "none"
    return (
        f"node {name}: cpuManagerPolicy {config.cpu_manager_policy}, memoryManagerPolicy "
        f"{config.memory_manager_policy}, topologyManagerPolicy {config.topology_manager_policy} "
        f"(scope {config.topology_manager_scope}); reserved CPUs {reserved}"
        + ("  [the kubelet's defaults: no --kubelet-config given]" if config.is_defaults else "")
    )


def _bytes(value: int) -> str:
    for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if value >= size and value % size == 0:
            return f"{value // size}{unit}"
    return str(value)


def _render(result: Admission, explain: bool) -> list[str]:
    if result.admitted:
        lines = [f"pod {result.pod}: admitted ({result.qos})"]
    else:
        lines = [f"pod {result.pod}: REJECTED {result.reason}: {result.message} ({result.qos})"]
    for c in result.containers:
        cpus = (
            f"cpus {format_cpulist(c.exclusive_cpus)} ({len(c.exclusive_cpus)} exclusive)"
            if c.exclusive_cpus
            else "cpus shared pool"
        )
        numa = "any" if c.numa_affinity is None else ",".join(str(n) for n in c.numa_affinity)
        parts = [f"  {c.kind} {c.name}: {cpus}; NUMA hint {numa}"]
        for resource, ids in c.devices.items():
            parts.append(f"{resource} {','.join(ids)}")
        for resource, per in c.memory.items():
            spread = ", ".join(f"{_bytes(b)} on NUMA {n}" for n, b in per.items())
            parts.append(f"{resource} {spread}")
        lines.append("; ".join(parts))
    if explain:
        lines.extend("    " + line for line in result.explain())
    return lines
