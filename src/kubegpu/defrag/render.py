"""A plan as text for people, as JSON, and as the policy/v1 Eviction objects to review (YAML, one document per
pod, each with its pod's uid as a precondition so that it evicts the pod that was planned and no successor)."""

from __future__ import annotations

import json
from typing import Any

from kubegpu.defrag.plan import Eviction, Plan
from kubegpu.generate.output import YamlDoc, render_documents


def _v(text: str) -> str:
    """A name from the snapshot on one line: a character that is not printable (a newline would start a line of
    its own, or end a YAML comment) as a visible escape."""
    return text if text.isprintable() else "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def _line(e: Eviction) -> str:
    to = f"-> {_v(e.to)}" if e.to else "-> left waiting (priority below the waiting pods')"
    extras = [f"{e.gpus} GPU{'s' if e.gpus != 1 else ''}" if e.gpus else "no GPU"]
    if e.budget:
        extras.append(f"budget {_v(e.budget)}")
    if e.group:
        extras.append(_v(e.group))
    return f"  evict {_v(e.pod)}  on {_v(e.node)}  {to}  ({', '.join(extras)})"


def _quality(plan: Plan) -> str:
    if plan.optimal:
        return f"the fewest possible (proved by the {plan.method})"
    gap = plan.gap
    return f"{plan.method}: at most {gap} more than the fewest (no plan takes fewer than {plan.lower_bound})"


def render_text(plan: Plan) -> str:
    """The plan as a reviewer reads it: what to evict and where each pod goes, then why other pods stay."""
    lines = [f"defrag: make room for {_v(plan.target.what)}, {plan.target.gpus} GPUs in all"]
    if not plan.possible:
        lines.append("no plan: even evicting every pod that may leave, the waiting pods do not fit")
    elif not plan.found:
        fewest = "" if plan.lower_bound is None else f" (no plan takes fewer than {plan.lower_bound} evictions)"
        lines.append(f"no plan found in {plan.seconds:.1f} s{fewest}")
    elif not plan.evictions:
        lines.append("no eviction needed: the waiting pods fit as the cluster is")
    else:
        count = len(plan.evictions)
        lines.append(f"plan: evict {count} pod{'s' if count != 1 else ''}, {_quality(plan)}")
        lines += [_line(e) for e in plan.evictions]
    if plan.found:
        lines.append("then the waiting pods run on:")
        lines += [f"  {_v(pod)}  on {_v(node)}" for pod, node in plan.placements]
        checked = "replayed through the scheduler model (NodeResourcesFit, taints, selectors and node affinity)"
        if plan.kubelet_nodes:
            checked += f" and the kubelet model on {_v(', '.join(plan.kubelet_nodes))}"
        lines.append(checked)
    lines.append(f"searched {plan.nodes} nodes, {plan.movable} pods that may move, in {plan.seconds:.2f} s")
    if plan.kept_summary:
        total = sum(count for _, count in plan.kept_summary)
        lines.append(f"{total} running pods stay where they are:")
        lines += [f"  {count}  {_v(kind)}" for kind, count in plan.kept_summary]
    lines += [f"note: {_v(note)}" for note in plan.notes]
    return "\n".join(lines) + "\n"


def to_dict(plan: Plan) -> dict[str, Any]:
    """The plan as JSON-ready data."""
    return {
        "target": {"what": plan.target.what, "pods": [p.name for p in plan.target.pods], "gpus": plan.target.gpus},
        "possible": plan.possible,
        "found": plan.found,
        "evictions": [
            {
                "pod": e.pod,
                "node": e.node,
                "placed_on": e.to,
                "gpus": e.gpus,
                "budget": e.budget or None,
                "pod_group": e.group or None,
                "priority": e.priority,
            }
            for e in plan.evictions
        ],
        "placements": [{"pod": pod, "node": node} for pod, node in plan.placements],
        "lower_bound": plan.lower_bound,
        "optimal": plan.optimal,
        "gap": plan.gap,
        "method": plan.method,
        "seconds": round(plan.seconds, 3),
        "nodes": plan.nodes,
        "movable_pods": plan.movable,
        "kept": [{"pod": k.pod, "node": k.node, "reason": k.reason} for k in plan.kept],
        "kubelet_checked_nodes": list(plan.kubelet_nodes),
        "notes": list(plan.notes),
    }


def render_json(plan: Plan) -> str:
    return json.dumps(to_dict(plan), indent=2) + "\n"


def eviction_object(e: Eviction, uid: str) -> dict[str, Any]:
    """A policy/v1 Eviction for the pod (its uid as a precondition when the snapshot has it)."""
    namespace, _, name = e.pod.partition("/")
    obj: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    }
    if uid:
        obj["deleteOptions"] = {"preconditions": {"uid": uid}}
    return obj


def eviction_documents(plan: Plan, uids: dict[str, str]) -> list[YamlDoc]:
    """One Eviction per evicted pod, each with a comment saying where the pod goes again."""
    docs = []
    for e in plan.evictions:
        where = f"placed again on {e.to}" if e.to else "left waiting (priority below the waiting pods')"
        header = [f"{e.pod} on {e.node}: {where}"]
        if e.budget:
            header.append(f"draws on PodDisruptionBudget {e.budget}")
        docs.append(YamlDoc(eviction_object(e, uids.get(e.pod, "")), tuple(_v(h) for h in header)))
    return docs


def render_yaml(docs: list[YamlDoc]) -> str:
    """The Eviction objects; an empty plan is a comment only."""
    if not docs:
        return "# no eviction\n"
    return render_documents(docs)
