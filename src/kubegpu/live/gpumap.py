"""A map of a cluster's GPUs, node by node: used, free, stranded (free, but no waiting or running pod shape fits
the CPU, memory or pod slots left, or the node takes no pods) and, after a plan, those the waiting pods take;
nodes grouped by their topology block and rack. Drawn with matplotlib (Agg, imported on demand: the `sim` extra).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.live.audit import AuditReport

MAX_NODES = 5000  # a wider map is unreadable, and its image too large
NO_GPU, USED, FREE, STRANDED, ARRIVING = range(5)
COLOURS = ("#ffffff", "#4c72b0", "#55a868", "#dd8452", "#8172b3")
LABELS = ("", "used", "free", "stranded (CPU, memory, pod slots or a node that takes no pods)", "the waiting pods")


@dataclass(frozen=True)
class NodeColumn:
    """One node's GPUs as the map draws them, bottom up: arriving, used, stranded, free."""

    name: str
    group: str
    used: int
    free: int
    stranded: int
    arriving: int = 0

    @property
    def cells(self) -> list[int]:
        return [ARRIVING] * self.arriving + [USED] * self.used + [STRANDED] * self.stranded + [FREE] * self.free


def columns(report: AuditReport, arriving: Mapping[str, int] | None = None) -> list[NodeColumn]:
    """The audit's GPU nodes as map columns, grouped by their domains (block, then rack) and then by name.
    `arriving`: GPUs the waiting pods take per node (drawn apart from the used ones)."""
    out: list[NodeColumn] = []
    for node in report.nodes:
        if node.allocatable <= 0:
            continue
        group = " / ".join(value for _, value in node.domains) or "no topology label"
        incoming = min(node.used, (arriving or {}).get(node.name, 0))
        out.append(
            NodeColumn(node.name, group, node.used - incoming, node.free - node.stranded, node.stranded, incoming)
        )
    return sorted(out, key=lambda c: (c.group, c.name))


def plot_map(panels: Sequence[tuple[str, Sequence[NodeColumn]]], path: Path, title: str = "") -> None:
    """One panel per (title, columns), stacked; InputError when the file cannot be written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    widest = max((len(cols) for _, cols in panels), default=0)
    if widest == 0:
        raise InputError("no node with GPUs to draw", file=str(path))
    if widest > MAX_NODES:
        raise InputError(f"{widest} GPU nodes: the map draws at most {MAX_NODES}", file=str(path))
    height = max(max((len(c.cells) for c in cols), default=1) for _, cols in panels)
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(min(40.0, max(7.0, 2.0 + widest * 0.22)), 1.2 + 1.6 * len(panels) + 0.12 * height * len(panels)),
    )
    axes_list = list(np.atleast_1d(axes))
    cmap = ListedColormap(list(COLOURS))
    for ax, (name, cols) in zip(axes_list, panels, strict=True):
        grid = np.zeros((height, len(cols)), dtype=np.int64)
        for x, col in enumerate(cols):
            cells = col.cells
            grid[: len(cells), x] = cells
        ax.imshow(grid, cmap=cmap, vmin=0, vmax=len(COLOURS) - 1, origin="lower", aspect="auto", interpolation="none")
        if len(cols) < 200:  # a white line between nodes and between GPUs while they are wide enough to see
            for x in range(1, len(cols)):
                ax.axvline(x - 0.5, color="white", linewidth=0.8)
            for y in range(1, height):
                ax.axhline(y - 0.5, color="white", linewidth=0.4)
        starts: list[tuple[int, str]] = []
        for x, col in enumerate(cols):
            if not starts or starts[-1][1] != col.group:
                starts.append((x, col.group))
        for x, _ in starts[1:]:
            ax.axvline(x - 0.5, color="black", linewidth=1.2)
        ends = [x for x, _ in starts[1:]] + [len(cols)]
        if len(starts) <= 60:
            ax.set_xticks([(x + end - 1) / 2 for (x, _), end in zip(starts, ends, strict=True)])
            ax.set_xticklabels([group for _, group in starts], rotation=30 if len(starts) > 6 else 0, fontsize=8)
        else:
            ax.set_xticks([])
        ax.set_yticks([])
        ax.set_ylabel("GPUs")
        ax.set_title(name, fontsize=10)
    used = sorted({cell for _, cols in panels for c in cols for cell in c.cells})
    handles = [Patch(color=COLOURS[i], label=LABELS[i]) for i in used if i != NO_GPU]
    axes_list[0].legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.12), ncol=len(handles), fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110)
    except OSError as err:
        raise InputError(f"cannot write the map: {err.strerror}", file=str(path)) from None
    finally:
        plt.close(fig)
