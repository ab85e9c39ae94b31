"""Print why GPU work waits (`audit --why`, and the pods `simulate --snapshot` could not place) as text or JSON.

The JSON form is `Explanation.to_dict` (and `WhyReport.to_dict`); text shows kube-scheduler's line, then each
cause. Names and messages from the cluster are printed through report/escape.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from kubegpu.live.why import WhyReport
from kubegpu.report.escape import json_defused, printable
from kubegpu.scheduler.gpu.why import Explanation


def explanation_lines(e: Explanation, indent: str = "") -> list[str]:
    """One waiting pod, group or workload: its name and shape, kube-scheduler's line, then each cause."""
    shape = f"{e.pods} pod{'' if e.pods == 1 else 's'} × {e.gpus_per_pod} {e.resource}" if e.resource else ""
    lines = [f"{indent}{printable(e.subject)}: {printable(shape)}".rstrip()]
    if e.message:
        lines.append(f"{indent}  scheduler: {printable(e.message)}")
    lines.extend(f"{indent}  {cause.kind}: {printable(cause.message)}" for cause in e.causes)
    return lines


def why_text(report: WhyReport) -> str:
    """The report for people."""
    source = printable(report.source) or "snapshot"
    lines = [f"Why GPU work waits ({source}, {report.nodes} node{'' if report.nodes == 1 else 's'})", ""]
    if not report.explanations:
        lines += ["No GPU pod or Kueue workload is waiting.", ""]
    for e in report.explanations:
        lines += [*explanation_lines(e), ""]
    lines.extend(f"note: {printable(note)}" for note in report.notes)
    return "\n".join(lines).rstrip("\n") + "\n"


def why_json(report: WhyReport) -> str:
    """The report as JSON (WhyReport.to_dict)."""
    return json_defused(json.dumps(report.to_dict(), indent=2, ensure_ascii=True))


def explanations_text(explanations: Sequence[Explanation], indent: str = "  ") -> list[str]:
    """Lines for several explanations (the pods a simulation could not place)."""
    lines: list[str] = []
    for e in explanations:
        lines += explanation_lines(e, indent)
    return lines
