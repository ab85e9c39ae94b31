"""Print an AuditReport as text (rich tables), markdown or JSON.

The JSON form is `AuditReport.to_dict`; text and markdown show the same figures for people.
"""

from __future__ import annotations

import json
from io import StringIO

from rich.console import Console
from rich.table import Table

from kubegpu.live.audit import AuditReport


def render_json(report: AuditReport) -> str:
    return json.dumps(report.to_dict(), indent=2)


def _summary(report: AuditReport) -> list[str]:
    largest, where = report.largest_placeable
    lines = [
        f"free GPUs: {report.free_gpus}",
        f"stranded GPUs: {report.stranded_gpus}",
        f"largest placeable pod: {largest} GPU(s)" + (f" on {where}" if where else ""),
        f"pending GPU demand: {report.pending_gpus} GPU(s)"
        f" ({len(report.pending_pods)} pending pod(s) plus pending Kueue workloads)",
    ]
    bound = report.packing
    if bound is not None and bound.gpus:
        lines.append(
            f"packing bound: any repacking of the running pods could hold at most {bound.most_allocated} of the "
            f"{bound.gpus} schedulable GPUs allocated ({bound.allocated} now, "
            f"{bound.most_allocated - bound.allocated} below the bound): at most {bound.placeable_pending} of the "
            f"{bound.pending} pending GPU(s) could be placed"
        )
    frag = report.fragmentation
    if frag is not None:
        lines.append(
            f"FGD fragmentation: {frag.milli / 1000:.2f} GPUs "
            f"({frag.ratio:.1%} of idle GPUs unusable by the typical workload)"
        )
    return lines


def render_text(report: AuditReport, width: int = 110) -> str:
    out = StringIO()
    console = Console(file=out, width=width, force_terminal=False, color_system=None)
    console.print(
        f"kubegpu audit of {report.source}" if report.source else "kubegpu audit", markup=False, highlight=False
    )
    for line in _summary(report):
        console.print(f"  {line}", markup=False, highlight=False)
    nodes = Table(title="GPU nodes")
    for column in ("node", "product", "alloc", "used", "free", "stranded", "why", "frag"):
        nodes.add_column(column)
    for n in report.nodes:
        nodes.add_row(
            n.name + ("" if n.schedulable else " (unschedulable)"),
            n.product or n.resource,
            str(n.allocatable),
            str(n.used),
            str(n.free),
            str(n.stranded),
            n.reason,
            f"{n.fragmentation_milli / 1000:.2f}",
        )
    console.print(nodes)
    if report.domains:
        domains = Table(title="Topology domains (largest gang = pods of N GPUs placeable at once)")
        for column in ("label", "domain", "free", "schedulable", "stranded", "largest gang"):
            domains.add_column(column)
        for d in report.domains:
            gangs = (
                ", ".join(
                    f"{g.pods}×{g.gpus_per_pod}" + (f" {g.product}" if g.product else "") for g in d.gangs if g.pods
                )
                or "none"
            )
            domains.add_row(d.label, d.value, str(d.free), str(d.schedulable_free), str(d.stranded), gangs)
        console.print(domains)
    if report.queues:
        queues = Table(title="Kueue ClusterQueues (accelerator quota)")
        for column in ("queue", "cohort", "resource", "nominal", "reserved", "unreserved", "pending workloads"):
            queues.add_column(column)
        for q in report.queues:
            queues.add_row(
                q.name,
                q.cohort,
                q.resource,
                str(q.nominal),
                str(q.reserved),
                str(q.unreserved),
                str(q.pending_workloads),
            )
        console.print(queues)
    for section, items in (
        ("NUMA misplacement (NodeResourceTopology)", [f"{f.node}: {f.message}" for f in report.numa]),
        ("GPU pods breaking lint rules", [f"{i.target}: {i.rule} [{i.severity}] {i.message}" for i in report.lint]),
        (
            "Kubelet configs breaking kubelet rules",
            [f"{i.target}: {i.rule} [{i.severity}] {i.message}" for i in report.kubelet],
        ),
        ("Notes", list(report.notes) + list(report.checks_skipped)),
    ):
        if items:
            console.print(f"{section}:")
            for item in items:
                console.print(f"  - {item}", markup=False, highlight=False)
    return out.getvalue()


def render_markdown(report: AuditReport) -> str:
    lines = [f"# kubegpu audit{f' of {report.source}' if report.source else ''}", ""]
    lines += [f"- {line}" for line in _summary(report)]
    lines += [
        "",
        "## GPU nodes",
        "",
        "| node | product | allocatable | used | free | stranded | why | FGD frag (GPUs) |",
        "|---|---|---:|---:|---:|---:|---|---:|",
    ]
    for n in report.nodes:
        name = n.name + ("" if n.schedulable else " (unschedulable)")
        lines.append(
            f"| {name} | {n.product or n.resource} | {n.allocatable} | {n.used} | "
            f"{n.free} | {n.stranded} | {n.reason} | {n.fragmentation_milli / 1000:.2f} |"
        )
    if report.domains:
        lines += [
            "",
            "## Topology domains",
            "",
            "| label | domain | free | schedulable free | stranded | largest gang |",
            "|---|---|---:|---:|---:|---|",
        ]
        for d in report.domains:
            gangs = ", ".join(f"{g.pods}×{g.gpus_per_pod} {g.product}" for g in d.gangs if g.pods) or "none"
            lines.append(f"| {d.label} | {d.value} | {d.free} | {d.schedulable_free} | {d.stranded} | {gangs} |")
    if report.queues:
        lines += [
            "",
            "## Kueue ClusterQueues",
            "",
            "| queue | cohort | resource | nominal | reserved | unreserved | pending |",
            "|---|---|---|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {q.name} | {q.cohort} | {q.resource} | {q.nominal} | {q.reserved} | "
            f"{q.unreserved} | {q.pending_workloads} |"
            for q in report.queues
        ]
    for title, items in (
        ("NUMA misplacement", [f"{f.node}: {f.message}" for f in report.numa]),
        ("Lint findings on GPU pods", [f"`{i.target}` {i.rule} ({i.severity}): {i.message}" for i in report.lint]),
        ("Kubelet config findings", [f"`{i.target}` {i.rule} ({i.severity}): {i.message}" for i in report.kubelet]),
        ("Notes", list(report.notes) + list(report.checks_skipped)),
    ):
        if items:
            lines += ["", f"## {title}", ""] + [f"- {item}" for item in items]
    return "\n".join(lines) + "\n"
