"""kubegpu's Python API: lint, fix, admit a pod on a node, and replay the openb trace (docs/api.md).

Everything a program needs is importable from here; the simulation needs the `sim` extra and loads
numpy only when `simulate_openb` is called, so the rest works with `pip install kubegpu` alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubegpu import DEFAULT_IMAGE, __version__
from kubegpu.errors import InputError, KubegpuError, MissingExtraError, ModelError
from kubegpu.fix import FileOutcome, FixOptions
from kubegpu.fix import fix_text as _fix_stream
from kubegpu.kubelet import Admission, KubeletConfig, KubeletStartupError, NodeState, PodRequest
from kubegpu.kubelet.pod import input_pods
from kubegpu.manifests import Document
from kubegpu.manifests.objects import objects_of_text
from kubegpu.rules import Finding, LintConfig, LintResult, Severity, load_config
from kubegpu.rules import lint_paths as _lint_paths
from kubegpu.rules import lint_text as _lint_text
from kubegpu.topology.model import NodeTopology
from kubegpu.topology.presets import load_node

if TYPE_CHECKING:
    from kubegpu.sim.experiment import RunResult

__all__ = [
    "DEFAULT_IMAGE",
    "Admission",
    "FileOutcome",
    "Finding",
    "FixOptions",
    "InputError",
    "KubegpuError",
    "KubeletConfig",
    "KubeletStartupError",
    "LintConfig",
    "LintResult",
    "MissingExtraError",
    "ModelError",
    "NodeTopology",
    "Severity",
    "__version__",
    "admit",
    "fix_text",
    "lint_paths",
    "lint_text",
    "load_config",
    "load_node",
    "simulate_openb",
]


def lint_text(text: str, name: str = "<text>", config: LintConfig | None = None) -> LintResult:
    """Lint one YAML/JSON stream (a manifest, a KubeletConfiguration…); `name` is the file name findings cite."""
    return _lint_text(name, text, config or LintConfig())


def lint_paths(paths: Iterable[str | Path], config: LintConfig | None = None, jobs: int = 1) -> LintResult:
    """Lint files and folders (manifests, Dockerfiles) as `kubegpu lint` does; `jobs=0` uses every CPU."""
    return _lint_paths([str(p) for p in paths], config or LintConfig(), jobs)


def fix_text(
    text: str, name: str = "<text>", config: LintConfig | None = None, options: FixOptions | None = None
) -> FileOutcome:
    """Apply the fixes of `config`'s rules to one YAML/JSON stream, keeping comments, key order and layout.

    The result has `.fixed` (the new text), `.applied` and `.remaining`; nothing is written anywhere.
    """
    lint_config = config or LintConfig()
    return _fix_stream(name, text, lambda n, t: _lint_text(n, t, lint_config).findings, options)


def admit(
    pods: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
    node: str | NodeTopology,
    kubelet_config: Mapping[str, Any] | None = None,
    version: str = "1.35",
) -> list[Admission]:
    """Admit pods one after the other on a node, as the kubelet's managers would.

    `pods`: a Pod or workload mapping (each of its pod templates is a pod), a list of them, or manifest
    text (YAML or JSON, several documents), read as `kubegpu lint` reads them (objects an Argo resource step
    creates; a TrainJob merged with its runtime when `pods` holds it; a partial object, i.e. a patch fragment
    whose container names no image, is skipped as lint skips it). `node`: a preset
    name (`kubegpu nodes`), a profile file, or a NodeTopology. `kubelet_config`: a KubeletConfiguration
    mapping (default: the kubelet's defaults). A configuration the kubelet would refuse raises
    KubeletStartupError; each pod gets an Admission (`.admitted`, `.reason`, `.containers`).
    """
    topology = load_node(node) if isinstance(node, str) else node
    config = (
        KubeletConfig.from_dict(kubelet_config, version=version)
        if kubelet_config is not None
        else KubeletConfig.default_for(topology)
    )
    state = NodeState(topology, config)
    return [state.admit(pod) for pod in _pods(pods)]


def _pods(pods: str | Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[PodRequest]:
    if isinstance(pods, str):
        documents = objects_of_text("<pods>", pods)  # refused as the admit command refuses a file
    else:
        objects = [pods] if isinstance(pods, Mapping) else list(pods)
        documents = [Document(source="<pods>", index=i, data=obj) for i, obj in enumerate(objects)]
    return list(input_pods([("<pods>", documents)]).pods)  # as the admit command reads them


def simulate_openb(
    policy: str = "fgd", seed: int = 42, workload: str = "default", arrival: float = 1.3, data: str | Path | None = None
) -> RunResult:
    """One run of the FGD paper's method on the openb trace (shipped with kubegpu; `data` names another copy).

    `policy`: random, dotprod, clustering, packing, bestfit, fgd or ours; `seed` is the authors' tuning
    seed (the run replays their simulator's random draws). The result's `alloc_at_arrival` is the GPU
    allocation (%) when arrived requests reach `arrival` × capacity, the figure the paper publishes.
    Needs the `sim` extra (numpy).
    """
    try:
        from kubegpu.sim.experiment import run_policy
        from kubegpu.sim.traces.openb import default_openb_dir, node_list, read_nodes, read_pods, variant_files
    except ModuleNotFoundError as err:
        if (err.name or "").partition(".")[0] != "numpy":
            raise
        raise MissingExtraError("sim", "simulate_openb()") from err
    folder = Path(data) if data is not None else default_openb_dir()
    variants = variant_files(folder)
    if workload not in variants:
        raise InputError(f"unknown workload {workload!r}; choose from {', '.join(variants)}", file=str(folder))
    return run_policy(
        read_nodes(node_list(folder)), read_pods(variants[workload]), policy, seed, arrival=arrival, workload=workload
    )
