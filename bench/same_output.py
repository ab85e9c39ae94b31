"""Run every kubegpu command over fixed inputs, keep each output, and compare two such folders byte for byte.

A refactoring that must not change behaviour is checked by recording the outputs of the code before it and of
the code after it over the same inputs, then comparing the folders:

    python bench/same_output.py record OUT [--src SRC] [--inputs REPO] [--shared DIR] [--workers N] [--only GLOB]
    python bench/same_output.py compare BEFORE AFTER [--intended GLOB ...]

`record` runs `python -m kubegpu ...` with PYTHONPATH=SRC (default: this checkout's `src`; another checkout's
`src` runs that code with this virtual environment's dependencies) and writes one file per command: the command
line, its exit status, its standard output and its standard error (the webhook's: the HTTP status and body of
each review). The inputs come from REPO (default: this checkout): the rule case tables of tests/rules/cases
(each case's manifest with its selection, options, node, kubelet configuration and --smt, and every manifest
together), the fix, generator, kubelet, simulator, webhook and cluster-snapshot fixtures, tests/fixtures/repos,
`examples/`, a small benchmark corpus from bench/corpus_gen.py and the real manifests of DIR/corpus/real
(default /work/shared; left out when absent). Commands cover lint (every format, one process and two), fix
(--diff, --unsafe-fixes, in place), explain, rules, admit, coldstart, every `gen` generator, simulate (small
inputs), audit --snapshot, nodes and the webhook's /mutate and /validate over HTTPS on localhost. `probe` and
`loadbench` read this machine and are left out; so is `audit --cluster` (no API server here).

Normalisation, applied to every output before it is written (deterministic, so both runs normalise alike):
- the staging folder (a fresh temporary folder holding copies of the inputs, the commands' working folder) is
  written `<STAGE>`, whatever its absolute path; the source tree is written `<SRC>`;
- the webhook's port is `<PORT>`; a `simulate` report's wall-clock times (`... s wall`, `"wall_s": ...`,
  `elapsed`) are `<TIME>`;
- nothing else: any other difference is a difference.

`compare` prints one line per differing output (and a short diff of each), the outputs only one side has, and
exits 1 unless every output is identical; `--intended GLOB` names outputs whose differences are intended
(listed apart, not failing).
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FORMATS = ("text", "json", "sarif", "junit", "github")
PRESETS_SHOWN = ("dgx-h100", "gb200-nvl72-tray", "topoDualSocketHT", "aws-p5.48xlarge", "amd-mi300x-8gpu")
COMMAND_TIMEOUT_S = 300
# Case tables whose manifests also go through the workload-shape commands (gen volcano/kai/computedomain,
# simulate), the inference-server ones (coldstart) and the image ones (gen prepull), one file at a time.
_SHAPE_TABLES = frozenset({"gang", "placement", "multinode_serving", "trainjob_runtime", "argo_resource", "binpack"})
_SERVER_TABLES = frozenset({"models", "coldstart", "shm", "qos"})
_IMAGE_TABLES = frozenset({"images", "coldstart"})
# Wall-clock figures a simulate report prints (the only time-dependent text in any output).
_TIMES = (
    re.compile(r"\d+(\.\d+)?(?= ?s wall)"),
    re.compile(r'(?<="wall_s": )\d+(\.\d+)?'),
    re.compile(r"(?<=elapsed )\d+(\.\d+)?s?"),
)


@dataclass(frozen=True)
class Run:
    """One command: its output file name, arguments (after `kubegpu`), standard input and files to read back."""

    name: str
    argv: tuple[str, ...]
    stdin: str | None = None
    read_back: str | None = None  # a folder (relative to the stage) whose files are appended to the output
    prepare: tuple[tuple[str, str], ...] = ()  # (copy from, copy to) under the stage, done before the command


@dataclass
class Stage:
    """The staging folder: copies of the inputs, and the runs over them."""

    root: Path
    runs: list[Run] = field(default_factory=list)

    def add(self, name: str, *argv: str, **kw: Any) -> None:
        self.runs.append(Run(_safe(name), tuple(argv), **kw))


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=+-]+", "_", name).strip("_")


# --- inputs ------------------------------------------------------------------------------------------------------


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


def _case_config(case: dict[str, Any]) -> str:
    lines = []
    for rule, options in (case.get("options") or {}).items():
        lines.append(f"[rules.{json.dumps(str(rule))}]")
        lines += [f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in options.items()]
    return "\n".join(lines) + "\n"


def _stage_cases(stage: Stage, inputs: Path) -> None:
    """Every case of every rule table: alone with its own settings (lint -o json, fix --diff), and all together."""
    every = stage.root / "cases-all"
    for table_path in sorted((inputs / "tests" / "rules" / "cases").glob("*.yaml")):
        table = yaml.safe_load(table_path.read_text())
        for i, case in enumerate(table.get("cases") or []):
            slug = f"{table_path.stem}-{i:03d}"
            folder = stage.root / "cases" / slug
            folder.mkdir(parents=True)
            if "dockerfile" in case:
                name = str(case.get("file") or "Dockerfile")
                (folder / name).write_text(case["dockerfile"])
                (every / slug).mkdir(parents=True)
                (every / slug / name).write_text(case["dockerfile"])
                select = case.get("select", table.get("select", ()))
                stage.add(
                    f"case-{slug}-lint", "lint", f"cases/{slug}", "-o", "json", "--exit-zero", *_selection(select)
                )
                continue
            if "manifest" not in case:
                continue
            (folder / "manifest.yaml").write_text(case["manifest"])
            every.mkdir(exist_ok=True)
            (every / f"{slug}.yaml").write_text(case["manifest"])
            argv: list[str] = [f"cases/{slug}/manifest.yaml"]
            select = case.get("select", table.get("select", ()))
            argv += _selection(select)
            if case.get("options"):
                (folder / "kubegpu.toml").write_text(_case_config(case))
                argv += ["--config", f"cases/{slug}/kubegpu.toml"]
            if case.get("node"):
                argv += ["--node", str(case["node"])]
            if case.get("kubelet_config"):
                (folder / "kubelet-config.yaml").write_text(case["kubelet_config"])
                argv += ["--kubelet-config", f"cases/{slug}/kubelet-config.yaml"]
            if case.get("smt"):
                argv += ["--smt", str(case["smt"])]
            stage.add(f"case-{slug}-lint", "lint", *argv, "-o", "json", "--exit-zero")
            stage.add(f"case-{slug}-fix-diff", "fix", "--diff", "--unsafe-fixes", *argv)


def _selection(select: Sequence[str]) -> list[str]:
    return ["--select", ",".join(str(s) for s in select)] if select else []


def _copy(src: Path, dst: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    elif src.exists():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)


def _stage_inputs(stage: Stage, inputs: Path, shared: Path) -> list[str]:
    """Copy the input folders into the stage; the names of the manifest sets staged."""
    root = stage.root
    _copy(inputs / "examples", root / "examples")
    _copy(inputs / "tests" / "fixtures" / "repos", root / "repos")
    _copy(inputs / "tests" / "fixtures" / "cluster", root / "cluster")
    _copy(inputs / "tests" / "generate" / "data", root / "generate-data")
    _copy(inputs / "tests" / "kubelet" / "data", root / "kubelet-data")
    _copy(inputs / "tests" / "sim" / "data", root / "sim-data")
    _copy(inputs / "tests" / "webhook" / "reviews", root / "reviews")
    for before in sorted((inputs / "tests" / "fix" / "fixtures").glob("*/before")):
        _copy(before, root / "fix-fixtures" / before.parent.name)
    sys.path.insert(0, str(inputs / "bench"))
    try:
        from corpus_gen import write_corpus
    finally:
        sys.path.pop(0)
    write_corpus(root / "corpus", files=20, per_file=10, seed=7)
    sets = ["examples", "repos", "generate-data", "kubelet-data", "sim-data", "fix-fixtures", "corpus"]
    real = shared / "corpus" / "real"
    if real.is_dir():
        _copy(real, root / "real")
        sets.append("real")
    _stage_cases(stage, inputs)
    sets.append("cases-all")
    return sets


def _manifests(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml", ".json"))


def _named_objects(path: Path) -> list[tuple[str, str]]:
    """(kind, name) of each object of a file that has both (PyYAML: a file it cannot read gives none)."""
    try:
        docs = list(yaml.safe_load_all(path.read_text()))
    except (yaml.YAMLError, UnicodeDecodeError):
        return []
    found = []
    for doc in docs:
        if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict) and doc["metadata"].get("name"):
            found.append((str(doc.get("kind")), str(doc["metadata"]["name"])))
    return found


# --- the commands ------------------------------------------------------------------------------------------------


def _plan(stage: Stage, sets: list[str]) -> None:
    root = stage.root
    add = stage.add
    # lint: every set in every format, one process; JSON and text in two processes too; verbose; a node target.
    for name in sets:
        for fmt in FORMATS:
            add(f"lint-{name}-{fmt}", "lint", name, "-o", fmt, "--exit-zero", "--jobs", "1")
        add(f"lint-{name}-json-jobs2", "lint", name, "-o", "json", "--exit-zero", "--jobs", "2")
        add(f"lint-{name}-text-jobs2", "lint", name, "--exit-zero", "--jobs", "2")
        add(f"lint-{name}-verbose", "lint", name, "--exit-zero", "--verbose", "--jobs", "1")
        add(f"lint-{name}-node-dgx-h100", "lint", name, "-o", "json", "--exit-zero", "--node", "dgx-h100")
        add(f"lint-{name}-exit-code", "lint", name, "--jobs", "1")
        add(f"fix-{name}-diff", "fix", "--diff", name)
        add(
            f"fix-{name}-diff-unsafe",
            "fix",
            "--diff",
            "--unsafe-fixes",
            "--queue",
            "team-a",
            "--topology-level",
            "cloud.provider.com/topology-rack",
            name,
        )
        add(f"fix-{name}-check", "fix", "--check", name)
    add(
        "lint-examples-kubelet",
        "lint",
        "examples/train-pytorchjob.yaml",
        "--node",
        "dgx-h100",
        "--kubelet-config",
        "examples/kubelet-config.yaml",
        "--exit-zero",
    )
    add("lint-examples-select", "lint", "examples", "--select", "gang-missing,dshm-missing", "--exit-zero")
    add("lint-examples-ignore", "lint", "examples", "--ignore", "KG3", "--ignore", "KG101,KG102", "--exit-zero")
    add("lint-repos-exclude", "lint", "repos/platform", "--exclude", "legacy/", "--verbose", "--exit-zero")
    add(
        "lint-repos-helm-set",
        "lint",
        "repos/platform/charts/inference",
        "--helm-set",
        "shm.enabled=true",
        "--exit-zero",
    )
    add(
        "lint-stdin",
        "lint",
        "-",
        "--stdin-filename",
        "vllm.yaml",
        "-o",
        "json",
        "--exit-zero",
        stdin=(root / "examples" / "vllm-inference.yaml").read_text(),
    )

    def lint_kubelet(name: str, rel: str) -> None:  # a KubeletConfiguration, linted as the --node nodes' own
        add(name, "lint", rel, "--node", "dgx-h100", "--kubelet-config", rel, "-o", "json", "--exit-zero")

    for kubelet in _manifests(root / "kubelet-data"):
        if kubelet.name.startswith("kubelet-"):
            lint_kubelet(f"lint-kubelet-{kubelet.stem}", str(kubelet.relative_to(root)))
    if (root / "real").is_dir():
        for kubelet in sorted((root / "real").rglob("kubelet-config*.yaml")):
            rel = kubelet.relative_to(root)
            lint_kubelet(f"lint-real-kubelet-{kubelet.parent.name}", str(rel))
            add(
                f"admit-real-kubelet-{kubelet.parent.name}",
                "admit",
                "examples/train-pytorchjob.yaml",
                "--node",
                "dgx-h100",
                "--kubelet-config",
                str(rel),
                "--explain",
            )
    # fix in place on a copy: the files it writes are the output.
    add(
        "fix-inplace-fix-fixtures",
        "fix",
        "--unsafe-fixes",
        "--exit-zero",
        "scratch/fix-inplace",
        read_back="scratch/fix-inplace",
        prepare=(("fix-fixtures", "scratch/fix-inplace"),),
    )
    add(
        "fix-inplace-examples",
        "fix",
        "--exit-zero",
        "scratch/fix-examples",
        read_back="scratch/fix-examples",
        prepare=(("examples", "scratch/fix-examples"),),
    )
    # rules and explain
    for fmt in FORMATS:
        add(f"rules-{fmt}", "rules", "-o", fmt)
    add("explain-codes", "explain", "KG201,KG202")
    add("explain-name", "explain", "dshm-missing")
    add("explain-unknown", "explain", "KG999")
    # nodes
    for fmt in ("text", "json", "yaml"):
        add(f"nodes-{fmt}", "nodes", "-o", fmt)
        for preset in PRESETS_SHOWN:
            add(f"nodes-show-{preset}-{fmt}", "nodes", "show", preset, "-o", fmt)
    add("nodes-show-unknown", "nodes", "show", "no-such-node")
    # admit
    kd = "kubelet-data"
    add("admit-half-node-json", "admit", f"{kd}/half-node.yaml", "--node", "dgx-h100", "-o", "json")
    add(
        "admit-same-node",
        "admit",
        f"{kd}/half-node.yaml",
        f"{kd}/train-8gpu.yaml",
        "--node",
        "dgx-h100",
        "--kubelet-config",
        f"{kd}/kubelet-restricted.yaml",
        "--same-node",
    )
    add(
        "admit-odd-cpus",
        "admit",
        f"{kd}/odd-cpus.yaml",
        "--node",
        "dgx-h100",
        "--kubelet-config",
        f"{kd}/kubelet-restricted.yaml",
    )
    add(
        "admit-guide",
        "admit",
        f"{kd}/train-8gpu.yaml",
        "--node",
        "dgx-h100",
        "--kubelet-config",
        f"{kd}/kubelet-guide-example.yaml",
    )
    add(
        "admit-explain",
        "admit",
        f"{kd}/train-8gpu.yaml",
        "--node",
        "dgx-h100",
        "--kubelet-config",
        f"{kd}/kubelet-restricted.yaml",
        "--explain",
    )
    add(
        "admit-existing",
        "admit",
        f"{kd}/train-8gpu.yaml",
        "--existing",
        f"{kd}/half-node.yaml",
        "--node",
        "dgx-h100",
        "-o",
        "json",
    )
    for version in ("1.32", "1.33", "1.34"):
        add(
            f"admit-version-{version}",
            "admit",
            f"{kd}/train-8gpu.yaml",
            "--node",
            "dgx-h100",
            "--kubelet-config",
            f"{kd}/kubelet-restricted.yaml",
            "--kubernetes-version",
            version,
            "-o",
            "json",
        )
    # per manifest file: admit, coldstart, gen kubelet --largest-gpu-pod, gen prepull, lint alone
    # (the case tables' manifests, many and small, get the commands that read workload shapes and pods only)
    per_file_sets = [s for s in ("examples", "generate-data", "sim-data", "real", "cases-all") if (root / s).is_dir()]
    for set_name in per_file_sets:
        full = set_name != "cases-all"
        for path in _manifests(root / set_name):
            rel = str(path.relative_to(root))
            tag = _safe(rel)
            table = path.name.rsplit("-", 1)[0]
            shapes = full or table in _SHAPE_TABLES
            add(f"admit-{tag}", "admit", rel, "--node", "dgx-h100", "-o", "json")
            if full or table in _SERVER_TABLES:
                add(f"coldstart-{tag}", "coldstart", rel, "-o", "json")
            if shapes:
                add(
                    f"simulate-{tag}",
                    "simulate",
                    "--nodes",
                    "sim-data/cluster-small.yaml",
                    "--pods",
                    rel,
                    "--gang",
                    "both",
                    "-o",
                    "json",
                )
            if full or table in _IMAGE_TABLES:
                add(f"gen-prepull-{tag}", "gen", "prepull", "--from", rel)
            if full:
                add(f"admit-{tag}-text", "admit", rel, "--node", "gb200-nvl72-tray")
                add(f"coldstart-{tag}-text", "coldstart", rel, "--image-size", "9G")
                add(f"gen-kubelet-{tag}", "gen", "kubelet", "--node", "dgx-h100", "--largest-gpu-pod", rel)
            # the generators that read one workload: each named object of the file in turn
            for kind, obj in _named_objects(path) if shapes else ():
                otag = f"{tag}-{_safe(kind)}-{_safe(obj)}"
                add(f"gen-volcano-{otag}", "gen", "volcano", "--gpus", "64", "--for", rel, "--name", obj)
                add(f"gen-kai-{otag}", "gen", "kai", "--gpus", "32", "--for", rel, "--name", obj)
                add(f"gen-computedomain-{otag}", "gen", "computedomain", "--for", rel, "--name", obj)
                if full:
                    add(
                        f"gen-fixes-{otag}",
                        "gen",
                        "fixes",
                        "--for",
                        rel,
                        "--name",
                        obj,
                        "--only",
                        "dshm,qos,pull-policy,scheduler",
                    )
                    add(f"gen-dshm-{otag}", "gen", "dshm", "--for", rel, "--name", obj)
                    add(
                        f"gen-model-cache-{otag}",
                        "gen",
                        "model-cache",
                        "--model",
                        "llama",
                        "--source",
                        "hf://meta-llama/Llama-3.1-8B-Instruct",
                        "--size",
                        "20Gi",
                        "--for",
                        rel,
                        "--name",
                        obj,
                    )
    # coldstart and the generators as the docs run them
    add("coldstart-doc-1", "coldstart", "examples/vllm-inference.yaml", "--image-size", "9G")
    add(
        "coldstart-doc-2",
        "coldstart",
        "examples/vllm-inference.yaml",
        "--image-size",
        "vllm/vllm-openai:latest=9G",
        "--load-gbps",
        "2",
        "-o",
        "json",
    )
    gens = [
        ("audit-rbac",),
        ("audit-rbac", "--job"),
        ("computedomain", "--for", "examples/train-pytorchjob.yaml"),
        ("dshm", "--for", "examples/vllm-inference.yaml"),
        ("dshm", "--for", "examples/vllm-inference.yaml", "--size", "16Gi"),
        ("fixes", "--for", "examples/vllm-inference.yaml", "--only", "dshm,qos,pull-policy,scheduler"),
        ("kai", "--gpus", "32", "--for", "examples/train-pytorchjob.yaml"),
        ("kai", "--gpus", "32"),
        ("kubelet", "--node", "dgx-h100"),
        ("kubelet", "--node", "dgx-h100", "--largest-gpu-pod", "4:64:512Gi"),
        ("kubelet", "--node", "dgx-h100", "--largest-gpu-pod", "examples/train-pytorchjob.yaml"),
        ("kubelet", "--node", "gb200-nvl72-tray", "--reserve-cores", "4"),
        ("kubelet", "--node", "aws-p5.48xlarge", "--validate"),
        ("kubelet", "--node", "amd-mi300x-8gpu", "--largest-gpu-pod", "gpus=8,cpu=100,memory=1000Gi"),
        (
            "kueue",
            "--gpus-per-node",
            "8",
            "--nodes",
            "16",
            "--cpus-per-node",
            "200",
            "--memory-per-node",
            "1800Gi",
            "--topology",
            "gke",
        ),
        ("kueue", "--node", "gb200-nvl72-tray", "--nodes", "18", "--topology", "nvl72"),
        ("kueue", "--node", "dgx-h100", "--nodes", "4", "--validate"),
        ("lazy-pull", "--snapshotter", "soci"),
        ("lazy-pull", "--snapshotter", "stargz"),
        (
            "loadbench-job",
            "--host-path",
            "/var/lib/kubegpu/models",
            "--node-selector",
            "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3",
            "--gpus",
            "1",
        ),
        ("loadbench-job", "--pvc", "llama-weights", "--node", "gpu-node-7", "--validate"),
        ("mirror", "--mirror", "https://registry-mirror.internal:5000"),
        (
            "model-cache",
            "--model",
            "llama",
            "--source",
            "hf://meta-llama/Llama-3.1-8B-Instruct",
            "--size",
            "20Gi",
            "--for",
            "examples/vllm-inference.yaml",
            "--min-replicas",
            "2",
        ),
        ("model-cache", "--model", "llama", "--source", "s3://bucket/llama", "--size", "20Gi", "--mode", "shared"),
        ("prepull", "--from", "examples/train-pytorchjob.yaml", "--from", "examples/vllm-inference.yaml"),
        ("probe-daemonset",),
        ("probe-daemonset", "--image", "ghcr.io/example/kubegpu:0.1.0"),
        ("probe-job", "--image", "ghcr.io/example/kubegpu:0.1.0", "--gpus", "8", "--cpus", "32", "--shm", "8Gi"),
        ("scheduler", "--strategy", "RequestedToCapacityRatio", "--gpu-weight", "10", "--configmap"),
        ("scheduler",),
        ("volcano", "--gpus", "64", "--for", "examples/train-pytorchjob.yaml"),
        ("volcano", "--gpus", "64"),
        ("webhook",),
        ("webhook", "--image", "registry.example.com/platform/kubegpu:0.1.0"),
        (
            "webhook",
            "--image",
            "registry.example.com/platform/kubegpu:0.1.0",
            "--failure-policy",
            "Fail",
            "--no-validating",
        ),
    ]
    for i, argv in enumerate(gens):
        add(f"gen-doc-{i:02d}-{argv[0]}", "gen", *argv)
    add(
        "gen-to-folder",
        "gen",
        "kai",
        "--gpus",
        "32",
        "--for",
        "examples/train-pytorchjob.yaml",
        "-o",
        "scratch/gen-kai",
        read_back="scratch/gen-kai",
    )
    # simulate on small inputs
    add(
        "simulate-jobs",
        "simulate",
        "--nodes",
        "sim-data/cluster-small.yaml",
        "--pods",
        "sim-data/jobs.yaml",
        "--gang",
        "both",
    )
    add(
        "simulate-synthetic",
        "simulate",
        "--nodes",
        "sim-data/cluster-small.yaml",
        "--synthetic",
        "60",
        "--rate",
        "20",
        "--gang",
        "both",
        "--policy",
        "most-allocated",
        "-o",
        "json",
    )
    for fmt in ("text", "json", "csv", "markdown"):
        add(
            f"simulate-jobs-{fmt}",
            "simulate",
            "--nodes",
            "sim-data/cluster-small.yaml",
            "--pods",
            "sim-data/jobs.yaml",
            "--mode",
            "events",
            "--policy",
            "fgd,most-allocated,volcano-binpack",
            "-o",
            fmt,
        )
    add(
        "simulate-jobs-kubelet",
        "simulate",
        "--nodes",
        "sim-data/cluster-small.yaml",
        "--pods",
        "sim-data/jobs.yaml",
        "--kubelet-config",
        "kubelet-data/kubelet-restricted.yaml",
        "-o",
        "json",
    )
    add(
        "simulate-snapshot",
        "simulate",
        "--snapshot",
        "cluster/nodes.json",
        "--snapshot",
        "cluster/pods.json",
        "--policy",
        "fgd,most-allocated",
    )
    add("simulate-snapshot-json", "simulate", "--snapshot", "cluster", "--policy", "all", "-o", "json")
    # audit
    for fmt in ("text", "json", "markdown"):
        add(f"audit-snapshot-{fmt}", "audit", "--snapshot", "cluster", "--format", fmt)
        add(f"audit-snapshot-infer-{fmt}", "audit", "--snapshot", "cluster", "-n", "infer", "--format", fmt)
    add(
        "audit-snapshot-files",
        "audit",
        "--snapshot",
        "cluster/nodes.json",
        "--snapshot",
        "cluster/pods.json",
        "--no-configz",
    )


# --- running -----------------------------------------------------------------------------------------------------


def _environment(src: Path, stage: Path) -> dict[str, str]:
    home = stage / ".home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "COLUMNS": "120",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "PYTHONHASHSEED": "0",
        "PYTHONPATH": str(src),
        "KUBECONFIG": str(home / "no-kubeconfig"),
    }
    return env


def normalise(text: str, stage: Path, src: Path) -> str:
    """The output with the staging folder, source tree and wall-clock times written as fixed words."""
    for path, word in ((stage, "<STAGE>"), (src, "<SRC>")):
        for form in {str(path), str(path.resolve())}:
            text = text.replace(form, word)
    for pattern in _TIMES:
        text = pattern.sub("<TIME>", text)
    return text


def _run_one(run: Run, stage: Path, src: Path, env: dict[str, str]) -> str:
    for source, target in run.prepare:
        shutil.rmtree(stage / target, ignore_errors=True)
        _copy(stage / source, stage / target)
    argv = [sys.executable, "-m", "kubegpu", *run.argv]
    try:
        done = subprocess.run(
            argv,
            cwd=stage,
            env=env,
            input=run.stdin if run.stdin is not None else "",
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )
        status, out, err = str(done.returncode), done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        status, out, err = "timeout", "", ""
    parts = [f"$ kubegpu {' '.join(run.argv)}", f"exit: {status}", "--- stdout", out, "--- stderr", err]
    if run.read_back:
        folder = stage / run.read_back
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            parts += [f"--- file {path.relative_to(folder)}", path.read_text(errors="replace")]
    return normalise("\n".join(parts), stage, src)


# --- the webhook over HTTPS -----------------------------------------------------------------------------------------


def _certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "tls.crt", folder / "tls.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _post(port: int, path: str, body: bytes) -> tuple[int, bytes]:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
    try:
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _webhook(stage: Path, src: Path, env: dict[str, str], out: Path) -> None:
    """Serve the webhook over HTTPS on localhost and record each review's answer from /mutate and /validate."""
    cert, key = _certificate(stage / ".home")
    port = _free_port()
    argv = [
        sys.executable,
        "-m",
        "kubegpu",
        "webhook",
        "serve",
        "--tls-cert",
        str(cert),
        "--tls-key",
        str(key),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    server = subprocess.Popen(argv, cwd=stage, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    (out / "webhook-serve.txt").write_text("the webhook did not start\n")
                    return
                time.sleep(0.2)
        reviews = sorted((stage / "reviews").glob("*.json"))
        for review in reviews:
            for path in ("/mutate", "/validate"):
                status, body = _post(port, path, review.read_bytes())
                text = f"POST {path} {review.name}\nstatus: {status}\n{body.decode(errors='replace')}\n"
                name = _safe(f"webhook-{review.stem}-{path.strip('/')}") + ".txt"
                (out / name).write_text(normalise(text.replace(str(port), "<PORT>"), stage, src))
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def record(
    out: Path, src: Path, inputs: Path, shared: Path, workers: int, dry_run: bool = False, only: Sequence[str] = ()
) -> int:
    src = src.resolve()
    probe = subprocess.run(
        [sys.executable, "-c", "import kubegpu; print(kubegpu.__file__)"],
        env={"PYTHONPATH": str(src), "PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        check=True,
    )
    if not Path(probe.stdout.strip()).resolve().is_relative_to(src):
        print(f"PYTHONPATH={src} does not select that source tree (got {probe.stdout.strip()})", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        print(f"{out} is not empty", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kubegpu-same-output-") as folder:
        stage = Stage(Path(folder))
        sets = _stage_inputs(stage, inputs, shared)
        _plan(stage, sets)
        if only:  # a subset, by output name (the webhook's reviews are left out)
            stage.runs = [r for r in stage.runs if any(fnmatch.fnmatch(f"{r.name}.txt", g) for g in only)]
        names = [r.name for r in stage.runs]
        duplicates = {n for n in names if names.count(n) > 1}
        if duplicates:
            print(f"duplicate output names: {sorted(duplicates)[:5]}", file=sys.stderr)
            return 2
        if dry_run:
            print(f"{len(stage.runs)} commands" + ("" if only else ", and the webhook's reviews"))
            return 0
        env = _environment(src, stage.root)
        started = time.monotonic()
        # Runs that copy into the stage write their own scratch folders, so any order gives the same outputs.
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            texts = pool.map(lambda run: (run.name, _run_one(run, stage.root, src, env)), stage.runs)
            for name, text in texts:
                (out / f"{name}.txt").write_text(text)
        if not only:
            _webhook(stage.root, src, env, out)
        (out / "README").write_text(
            f"kubegpu outputs recorded by bench/same_output.py\nsource: {src}\ninputs: {inputs}\n"
            f"real corpus: {'yes' if 'real' in sets else 'absent'}\n"
        )
    count = sum(1 for _ in out.glob("*.txt"))
    print(f"recorded {count} outputs in {out} ({time.monotonic() - started:.0f} s)")
    return 0


# --- comparing ---------------------------------------------------------------------------------------------------


def _outputs(folder: Path) -> dict[str, Path]:
    return {p.name: p for p in folder.glob("*.txt")}


def compare(before: Path, after: Path, intended: Sequence[str], context_lines: int = 12) -> int:
    a, b = _outputs(before), _outputs(after)
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    same: list[str] = []
    differ: list[str] = []
    for name in sorted(set(a) & set(b)):
        (same if a[name].read_bytes() == b[name].read_bytes() else differ).append(name)
    wanted = [n for n in differ if any(fnmatch.fnmatch(n, g) for g in intended)]
    unexpected = [n for n in differ if n not in wanted]
    print(
        f"{len(same)} identical, {len(differ)} different ({len(wanted)} intended), "
        f"{len(only_a)} only in {before}, {len(only_b)} only in {after}"
    )
    for title, names in (("different", unexpected), ("intended difference", wanted)):
        for name in names:
            print(f"\n{title}: {name}")
            lines = difflib.unified_diff(
                a[name].read_text(errors="replace").splitlines(),
                b[name].read_text(errors="replace").splitlines(),
                str(before / name),
                str(after / name),
                lineterm="",
                n=1,
            )
            shown = list(_first(lines, context_lines * 4))
            print("\n".join(shown))
    for name in only_a:
        print(f"only in {before}: {name}")
    for name in only_b:
        print(f"only in {after}: {name}")
    return 0 if not unexpected and not only_a and not only_b else 1


def _first(lines: Iterator[str], count: int) -> Iterator[str]:
    for i, line in enumerate(lines):
        if i == count:
            yield "  ... (diff cut)"
            return
        yield line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="run every command and write its output to OUT")
    rec.add_argument("out", type=Path)
    rec.add_argument("--src", type=Path, default=REPO / "src", help="the kubegpu source tree to run")
    rec.add_argument("--inputs", type=Path, default=REPO, help="the checkout whose tests/, examples/, bench/ to read")
    rec.add_argument("--shared", type=Path, default=Path("/work/shared"), help="folder holding corpus/real")
    rec.add_argument("--workers", type=int, default=2, help="commands run at once")
    rec.add_argument("--dry-run", action="store_true", help="stage the inputs and count the commands only")
    rec.add_argument("--only", action="append", default=[], help="record only the outputs this glob names")
    cmp = commands.add_parser("compare", help="compare two recorded folders byte for byte")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    cmp.add_argument("--intended", action="append", default=[], help="glob of outputs whose change is intended")
    args = parser.parse_args(argv)
    if args.command == "record":
        return record(args.out, args.src, args.inputs.resolve(), args.shared, args.workers, args.dry_run, args.only)
    return compare(args.before, args.after, args.intended)


if __name__ == "__main__":
    sys.exit(main())
