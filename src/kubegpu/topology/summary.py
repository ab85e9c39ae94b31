"""Plain-text views of a NodeTopology: one summary row per node and a readable `nodes show` page.

Kept beside the model so that `kubegpu nodes` and `kubegpu probe -o text` print the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.topology.cpulist import format_cpulist
from kubegpu.topology.model import NodeTopology


@dataclass(frozen=True)
class NodeSummary:
    """The figures `kubegpu nodes` lists for one profile."""

    name: str
    cpus: int
    cores: int
    sockets: int
    numa_nodes: int
    gpus: int
    gpu_model: str

    def as_dict(self) -> dict[str, str | int]:
        return {
            "name": self.name,
            "cpus": self.cpus,
            "cores": self.cores,
            "sockets": self.sockets,
            "numa_nodes": self.numa_nodes,
            "gpus": self.gpus,
            "gpu_model": self.gpu_model,
        }


def summarize(topo: NodeTopology) -> NodeSummary:
    models = sorted({g.model for g in topo.gpus})
    return NodeSummary(
        name=topo.name,
        cpus=topo.num_cpus,
        cores=topo.num_cores,
        sockets=topo.num_sockets,
        numa_nodes=len(topo.numa_ids),
        gpus=len(topo.gpus),
        gpu_model=", ".join(models) if models else "-",
    )


def summary_table(rows: list[NodeSummary]) -> str:
    """Aligned columns: name, CPUs, cores, sockets, NUMA, GPUs, model."""
    header = ("NAME", "CPUS", "CORES", "SOCKETS", "NUMA", "GPUS", "MODEL")
    cells = [header] + [
        (
            r.name,
            str(r.cpus),
            str(r.cores),
            str(r.sockets),
            str(r.numa_nodes),
            str(r.gpus),
            r.gpu_model,
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header) - 1)]
    lines = []
    for row in cells:
        left = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1]))
        lines.append(f"{left}  {row[-1]}".rstrip())
    return "\n".join(lines)


def render_text(topo: NodeTopology) -> str:
    """A readable page: totals, NUMA nodes with CPUs, memory and distances, GPUs, sources."""
    s = summarize(topo)
    out = [f"{topo.name}"]
    if topo.description:
        out.append(f"  {topo.description}")
    out.append(
        f"  {s.cpus} CPUs, {s.cores} cores ({topo.threads_per_core} threads/core), "
        f"{s.sockets} sockets, {s.numa_nodes} NUMA nodes, {s.gpus} GPUs"
    )
    out.append("")
    out.append("NUMA nodes:")
    for node_id in topo.numa_ids:
        node = next((n for n in topo.numa_nodes if n.id == node_id), None)
        cpus = topo.cpus_in_numa(node_id)
        sockets = sorted({topo.cpu_by_id[c].socket for c in cpus})
        mem = "memory unknown" if node is None else _bytes(node.memory_bytes)
        pages = (
            ""
            if node is None or not node.hugepages_bytes
            else " hugepages " + ", ".join(f"{k}: {_bytes(v)}" for k, v in sorted(node.hugepages_bytes.items()))
        )
        if cpus:
            where = f"cpus {format_cpulist(cpus)} (socket {','.join(map(str, sockets))})"
        else:
            where = "memory only, no CPUs"
        out.append(f"  node {node_id}: {where}; {mem}{pages}")
    if len(topo.numa_ids) > 1:
        out.append(
            "  distances: "
            + "; ".join(f"{a}->" + ",".join(str(topo.distance(a, b)) for b in topo.numa_ids) for a in topo.numa_ids)
        )
    out.append("")
    out.append("GPUs:" if topo.gpus else "GPUs: none")
    for g in topo.gpus:
        numa = "none" if g.numa_node is None else str(g.numa_node)
        extra = [] if g.memory_bytes is None else [_bytes(g.memory_bytes)]
        if g.memory_numa_node is not None:
            extra.append(f"memory on NUMA {g.memory_numa_node}")
        if g.nvlink_domain:
            extra.append(f"link domain {g.nvlink_domain}")
        tail = f" ({', '.join(extra)})" if extra else ""
        out.append(f"  {g.index}: {g.model} {g.pci_bus_id} NUMA {numa} [{g.resource_name}]{tail}")
    if topo.sources:
        out.append("")
        out.append("Sources:")
        out.extend(f"  - {src}" for src in topo.sources)
    if topo.estimates:
        out.append("Estimates (no source confirms these):")
        out.extend(f"  - {est}" for est in topo.estimates)
    return "\n".join(out)


def _bytes(value: int) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size:
            shown = value / size
            return f"{shown:.0f} {unit}" if shown == int(shown) else f"{shown:.1f} {unit}"
    return f"{value} B"
