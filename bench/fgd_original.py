"""The FGD authors' simulator beside kubegpu: one experiment each, wall time, CPU time, peak memory, and
both allocation rows against the published one.

`make fgd-original FGD_SOURCE=DIR` (DIR: a copy of github.com/hkust-adsl/kubernetes-scheduler-simulator, with
its vendor/ folder). Needs Go (Debian's golang-go 1.19 builds it offline in about three minutes); without Go or a
source folder it says so and exits 0. The original's run takes about 40 minutes; kubegpu's a few seconds. The
configuration is written as the artifact's scripts/generate_config_and_run.py and data/pod_csv_to_yaml.py write
theirs; nothing of the original is copied into this repository.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kubegpu.scheduler.gpu.registry import PAPER_POLICIES
from kubegpu.sim.discrete import discretize
from kubegpu.sim.experiment import run_policy
from kubegpu.sim.published import compare_row, read_published
from kubegpu.sim.traces.files import read_text
from kubegpu.sim.traces.openb import default_openb_dir, node_list, published_file, read_nodes, read_pods, variant_files

# per policy: the score plugin, gpuSelMethod, dimExtMethod and normMethod the artifact's run scripts pass
# (experiments/run_scripts/generate_run_scripts.py), after generate_config_and_run.py's rule that a
# max-weight FGD (or DotProduct with a dimExtMethod other than merge) selects GPUs itself
POLICY_CONFIG = {
    "random": ("RandomScore", "random", "share", "max"),
    "dotprod": ("DotProductScore", "best", "merge", "max"),
    "clustering": ("GpuClusteringScore", "best", "share", "max"),
    "packing": ("GpuPackingScore", "best", "share", "max"),
    "bestfit": ("BestFitScore", "best", "share", "max"),
    "fgd": ("FGDScore", "FGDScore", "share", "max"),
}
SCORE_PLUGINS = ("RandomScore", "DotProductScore", "GpuClusteringScore", "GpuPackingScore", "BestFitScore", "FGDScore")
DEFAULT_SCORES_OFF = (
    "ImageLocality",
    "NodeAffinity",
    "PodTopologySpread",
    "TaintToleration",
    "NodeResourcesBalancedAllocation",
    "InterPodAffinity",
    "NodeResourcesLeastAllocated",
    "NodePreferAvoidPods",
)
ALLOC_LINE = re.compile(
    r"\[Alloc\]; Used nodes: \d+; Used GPUs: \d+; Used GPU Milli: (\d+); Total GPUs: (\d+); Arrived GPU Milli: (\d+)"
)
UNSCHEDULED = re.compile(r"there are (\d+) unscheduled pods")


def pod_documents(csv_rows: list[dict[str, str]]) -> str:
    """The pods as pod_csv_to_yaml.py writes them (JSON documents, which YAML readers take as they are)."""
    docs = []
    for row in csv_rows:
        requests = {"cpu": f"{int(row['cpu_milli'])}m", "memory": f"{int(row['memory_mib'])}Mi"}
        annotations: dict[str, str] = {}
        gpus, milli = int(row["num_gpu"]), int(row["gpu_milli"])
        if gpus != 0:
            annotations["alibabacloud.com/gpu-milli"] = (
                str(milli) if 0 < milli <= 1000 else "1000" if milli > 1000 else "0"
            )
            annotations["alibabacloud.com/gpu-count"] = str(gpus)
            model = "|".join(m for m in (row.get("gpu_spec") or "").split("|") if m)
            if model:
                annotations["alibabacloud.com/gpu-card-model"] = model
        metadata: dict[str, object] = {"name": row["name"], "namespace": "paib-gpu"}
        if annotations:
            metadata["annotations"] = annotations
        container = {
            "name": "main",
            "image": "tensorflow:latest",
            "imagePullPolicy": "Always",
            "resources": {"requests": requests, "limits": dict(requests)},
        }
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": {"containers": [container], "restartPolicy": "OnFailure", "dnsPolicy": "Default"},
        }
        docs.append(json.dumps(pod))
    return "\n---\n".join(docs) + "\n"


def cluster_config(cluster_dir: Path, seed: int, tune: float) -> str:
    """generate_config_and_run.py's cluster configuration for one run (as JSON, which is YAML)."""
    config = {
        "apiVersion": "simon/v1alpha1",
        "kind": "Config",
        "metadata": {"name": "simon-openb-config"},
        "spec": {
            "appList": None,
            "cluster": {"customConfig": str(cluster_dir)},
            "newNode": "example/newnode/gpushare",
            "customConfig": {
                "shufflePod": True,
                "exportConfig": {},
                "workloadInflationConfig": {"ratio": 1, "seed": 233},
                "workloadTuningConfig": {"ratio": tune, "seed": seed},
                "descheduleConfig": {"ratio": 0},
                "newWorkloadConfig": None,
                "typicalPodsConfig": {
                    "isInvolvedCpuPods": True,
                    "podPopularityThreshold": 95,
                    "podIncreaseStep": 1,
                    "gpuResWeight": 0,
                },
            },
        },
    }
    return json.dumps(config, indent=1)


def scheduler_config(policy: str) -> str:
    """generate_config_and_run.py's KubeSchedulerConfiguration for one policy (weight 1000)."""
    plugin, gpu_sel, dim_ext, norm = POLICY_CONFIG[policy]
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1beta1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [
            {
                "schedulerName": "simon-scheduler",
                "plugins": {
                    "filter": {"enabled": [{"name": "Open-Gpu-Share"}]},
                    "preScore": {
                        "disabled": [{"name": "RandomScore"}],
                        "enabled": [{"name": "RandomScore"}] if plugin == "RandomScore" else None,
                    },
                    "score": {
                        "disabled": [{"name": n} for n in (*SCORE_PLUGINS, *DEFAULT_SCORES_OFF)],
                        "enabled": [{"name": plugin, "weight": 1000}],
                    },
                    "reserve": {"enabled": [{"name": "Open-Gpu-Share"}]},
                    "bind": {"disabled": [{"name": "DefaultBinder"}], "enabled": [{"name": "Simon"}]},
                },
                "pluginConfig": [
                    {"name": plugin, "args": {"dimExtMethod": dim_ext, "normMethod": norm}},
                    {
                        "name": "Open-Gpu-Share",
                        "args": {"gpuSelMethod": gpu_sel, "dimExtMethod": dim_ext, "normMethod": norm},
                    },
                ],
            }
        ],
    }
    return json.dumps(config, indent=1)


def build(source: Path, out: Path) -> float:
    """go build of the original with its vendored modules, offline; returns seconds."""
    env = {**os.environ, "GOFLAGS": "-mod=vendor", "GOPROXY": "off"}
    start = time.perf_counter()
    subprocess.run(["go", "build", "-o", str(out), "./cmd"], cwd=source, env=env, check=True, timeout=3600)
    return time.perf_counter() - start


def run_original(binary: Path, work: Path, policy: str, seed: int, tune: float, timeout: float) -> dict[str, float]:
    """One run of the original; returns its figures and writes its log to work/log.txt."""
    (work / "cc.yaml").write_text(cluster_config(work / "cluster", seed, tune))
    (work / "sc.yaml").write_text(scheduler_config(policy))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [
        str(binary),
        "apply",
        "--extended-resources",
        "gpu",
        "-f",
        "cc.yaml",
        "--default-scheduler-config",
        "sc.yaml",
    ]
    with (work / "log.txt").open("wb") as log:
        subprocess.run(command, cwd=work, stdout=log, stderr=subprocess.STDOUT, check=False, timeout=timeout)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "rss_mb": after.ru_maxrss / 1024}


def original_row(log: Path) -> tuple[dict[int, float], int, int]:
    """The run's [Alloc] lines, discretised as merge_alloc_discrete does; and its pods and failed pods."""
    arrived: list[int] = []
    used: list[int] = []
    total = 0
    failed = 0
    for line in log.read_text(errors="replace").splitlines():
        match = ALLOC_LINE.search(line)
        if match:
            used.append(int(match.group(1)))
            total = int(match.group(2))
            arrived.append(int(match.group(3)))
        elif (gone := UNSCHEDULED.search(line)) is not None:
            failed = int(gone.group(1))
    return discretize(arrived, used, total), len(arrived), failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help="a copy of hkust-adsl/kubernetes-scheduler-simulator")
    parser.add_argument("--workload", default="default")
    parser.add_argument("--policy", default="fgd", choices=PAPER_POLICIES)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--tune", type=float, default=1.3)
    parser.add_argument("--timeout", type=float, default=3 * 3600, help="seconds for the original's run")
    parser.add_argument("--binary", type=Path, help="the original's binary: built there if absent, else reused")
    args = parser.parse_args(argv)
    if shutil.which("go") is None:
        print("go is not installed (apt-get install golang-go); skipping the original's run")
        return 0
    source = args.source
    if source is None or not (source / "cmd").is_dir() or not (source / "vendor").is_dir():
        print("no source of the original (--source DIR or FGD_SOURCE=DIR, with its vendor/ folder); skipping")
        return 0
    openb = default_openb_dir()
    trace_path = variant_files(openb)[args.workload]
    table = published_file(openb)
    row = None if table is None else read_published(table).row(args.workload, args.policy, args.tune, args.seed)
    version = subprocess.run(["go", "version"], capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="fgd-original-") as tmp:
        work = Path(tmp)
        binary = args.binary.resolve() if args.binary is not None else work / "simon"
        if binary.is_file():
            print(f"reusing the original's binary {binary} ({version} installed)", flush=True)
        else:
            seconds = build(source.resolve(), binary)
            print(f"built the original with {version} in {seconds:.0f} s", flush=True)
        cluster = work / "cluster"
        cluster.mkdir()
        shutil.copy(source / "data" / "node_yaml" / "openb_node_list_gpu_node.yaml", cluster)
        rows = list(csv.DictReader(io.StringIO(read_text(trace_path))))
        (cluster / f"openb_pod_list_{args.workload}.yaml").write_text(pod_documents(rows))
        go = run_original(binary, work, args.policy, args.seed, args.tune, args.timeout)
        go_row, go_pods, go_failed = original_row(work / "log.txt")
    start, cpu0 = time.perf_counter(), time.process_time()
    ours = run_policy(
        read_nodes(node_list(openb)), read_pods(trace_path), args.policy, args.seed, args.tune, args.workload
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    what = f"{args.workload}, {args.policy}, seed {args.seed}, {args.tune:g}× GPU capacity"
    print(f"\none experiment ({what}):")
    print(
        f"  original: wall {go['wall']:8.1f} s   CPU {go['cpu']:8.1f} s   peak memory {go['rss_mb']:6.0f} MB   "
        f"{go_pods} pods, {go_failed} failed"
    )
    print(
        f"  kubegpu:  wall {wall:8.1f} s   CPU {cpu:8.1f} s   peak memory {rss:6.0f} MB   "
        f"{ours.pods} pods, {ours.failed_pods} failed"
    )
    print(f"  kubegpu is {go['wall'] / max(wall, 1e-9):.0f} times faster (wall)")
    same = compare_row(args.workload, args.policy, args.seed, ours.discrete, go_row)
    print(f"  kubegpu's row against the original's: {same.identical} of {same.columns} columns identical")
    if row is not None:
        for name, mine in (("original", go_row), ("kubegpu", ours.discrete)):
            c = compare_row(args.workload, args.policy, args.seed, mine, row)
            print(f"  {name}'s row against the published one: {c.identical} of {c.columns} columns identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
