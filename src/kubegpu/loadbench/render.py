"""A loadbench result as text (a table per cache state) and as a bar plot (matplotlib Agg, imported on demand)."""

from __future__ import annotations

from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.loadbench.run import Result


def render_text(result: Result) -> str:
    storage = result.storage
    how = "O_DIRECT" if storage.direct else "buffered, cache dropped"
    lines = [
        f"{len(result.files)} file(s), {result.total_bytes / 1e9:.2f} GB, {result.tensors} tensors",
        f"storage limit: {storage.gbps:.2f} GB/s ({storage.threads} threads × {storage.block >> 20} MiB reads, "
        f"{how})" + (f"; {storage.note}" if storage.note else ""),
        "",
        f"{'method':<22}{'threads':>8}{'cache':>7}{'GB/s':>9}{'of limit':>10}{'faults':>10}",
    ]
    for run in sorted(result.runs, key=lambda r: (r.cache, r.method, r.threads)):
        mark = " (partial: budget)" if run.partial else ""
        lines.append(
            f"{run.method:<22}{run.threads:>8}{run.cache:>7}{run.gbps:>9.2f}{result.fraction(run):>10.0%}"
            f"{run.faults:>10}{mark}"
        )
    for skip in result.skipped:
        where = "" if skip.threads is None else f" ×{skip.threads} {skip.cache}"
        lines.append(f"skipped {skip.method}{where}: {skip.reason}")
    gpu = result.gpu
    if gpu.skipped:
        lines.append(f"host-to-device stage skipped: {gpu.skipped}")
    else:
        lines.append(
            f"host-to-device ({gpu.device}): pinned {gpu.pinned_gbps:.1f} GB/s, pageable {gpu.pageable_gbps:.1f} GB/s"
        )
    lines.extend(f"note: {note}" for note in result.notes)
    lines.append("")
    lines.append(f"recommendation: {result.recommendation()}")
    return "\n".join(lines)


def plot(result: Result, path: Path) -> None:
    """Grouped bars: GB/s per method and thread count, cold and warm, with the storage limit as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = sorted({(r.method, r.threads) for r in result.runs}, key=lambda k: (k[0], k[1]))
    rate = {(r.method, r.threads, r.cache): r.gbps for r in result.runs}
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(labels) + 2), 4.5))
    width = 0.4
    for offset, kind in ((-width / 2, "cold"), (width / 2, "warm")):
        xs = [i + offset for i in range(len(labels))]
        ax.bar(xs, [rate.get((m, t, kind), 0.0) for m, t in labels], width, label=kind)
    ax.axhline(result.storage.gbps, color="black", linestyle="--", linewidth=1, label="storage limit")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([f"{m}\n×{t}" for m, t in labels], fontsize=7)
    ax.set_ylabel("GB/s")
    ax.set_title(f"Weight loading, {result.total_bytes / 1e9:.2f} GB in {len(result.files)} file(s)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    try:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    except OSError as err:
        raise InputError(f"cannot write the plot: {err.strerror}", file=str(path)) from None
    finally:
        plt.close(fig)
