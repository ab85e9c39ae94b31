"""Read a live cluster into a ClusterSnapshot with lightkube 1.0, using only `get` and `list`.

A missing CRD (404) or a forbidden read (403) becomes a note on the snapshot, never a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from lightkube import ApiError, Client, ConfigError, KubeConfig
from lightkube.config.client_adapter import Client as adapter_client
from lightkube.config.client_adapter import ConnectionParams
from lightkube.config.kubeconfig import SingleConfig
from lightkube.generic_resource import create_global_resource, create_namespaced_resource
from lightkube.resources.core_v1 import Node, Pod

from kubegpu.errors import InputError
from kubegpu.live.model import ClusterSnapshot
from kubegpu.live.parse import parse_configz
from kubegpu.live.snapshot import build_snapshot

KUEUE_VERSIONS = ("v1beta2", "v1beta1")
SERVICE_ACCOUNT_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
CONFIGZ_WORKERS = 16
LIST_CHUNK = 500  # list in pages (limit/continue) so big clusters are not one huge response
NRT_VERSIONS = ("v1alpha2",)


@dataclass(frozen=True)
class ClusterOptions:
    """How to reach the cluster: kubeconfig file, context, namespace and a request timeout."""

    kubeconfig: Path | None = None
    context: str | None = None
    namespace: str | None = None
    timeout_s: float = 10.0
    read_configz: bool = True


def load_config(options: ClusterOptions) -> SingleConfig:
    """The context to use: --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else in-cluster.

    In a pod (the ServiceAccount of `kubegpu gen audit-rbac`) the mounted token is used.
    """
    path = options.kubeconfig
    if path is None:
        env = os.environ.get("KUBECONFIG", "")
        path = Path(env.split(os.pathsep)[0]) if env else Path.home() / ".kube" / "config"
        if not env and not path.is_file() and SERVICE_ACCOUNT_TOKEN.is_file():
            try:
                in_cluster = KubeConfig.from_service_account().get()
            except ConfigError as err:
                raise InputError(f"in-cluster configuration: {err}") from err
            if in_cluster is None:
                raise InputError("in-cluster configuration has no context")
            return in_cluster
    if not path.is_file():
        raise InputError("kubeconfig not found (set --kubeconfig or KUBECONFIG)", file=str(path))
    try:
        config = KubeConfig.from_file(path).get(context_name=options.context)
    except ConfigError as err:
        raise InputError(f"kubeconfig: {err}", file=str(path)) from err
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise InputError(f"kubeconfig is not valid: {err}", file=str(path)) from err
    if config is None:
        raise InputError("kubeconfig has no current context; pass --context", file=str(path))
    return config


def _api_error(err: httpx2.HTTPStatusError) -> tuple[int, str]:
    """Status code and message of a failed request (from a metav1.Status body when sent)."""
    code = err.response.status_code
    if isinstance(err, ApiError):
        return code, str(getattr(err.status, "message", "") or err)
    return code, err.response.text.strip()[:200] or err.response.reason_phrase


Objects = list[tuple[Mapping[str, Any], str]]


def _listed(items: Iterable[Any], kind: str, api_version: str) -> Objects:
    out: Objects = []
    for item in items:
        obj = dict(item.to_dict())
        obj["kind"] = kind
        obj["apiVersion"] = api_version
        out.append((obj, f"{kind} list"))
    return out


class ClusterReader:
    """One read of a cluster; notes record what could not be read and why."""

    def __init__(self, options: ClusterOptions) -> None:
        self.options = options
        self.config = load_config(options)
        self.server = self.config.cluster.server
        timeout = httpx2.Timeout(options.timeout_s)
        try:
            self.client = Client(config=self.config, timeout=timeout, trust_env=False)
            self.raw = adapter_client(self.config, ConnectionParams(timeout=timeout, trust_env=False))
        except (ConfigError, OSError, ValueError) as err:
            raise InputError(f"cannot use kubeconfig context: {err}") from err
        self.notes: list[str] = []

    def close(self) -> None:
        self.client.close()
        self.raw.close()

    def read(self) -> ClusterSnapshot:
        try:
            objects = self._core()
            objects += self._nrt()
            objects += self._kueue()
            configs = self._configz([o for o, _ in objects if o.get("kind") == "Node"])
        except ConfigError as err:  # raised at request time, e.g. by an exec credential plugin
            raise InputError(f"kubeconfig credentials failed: {err}") from err
        except FileNotFoundError as err:
            raise InputError(f"kubeconfig credentials failed: {err.strerror}: {err.filename}") from err
        except (httpx2.TransportError, OSError) as err:
            raise InputError(f"cannot reach the API server at {self.server}: {err}") from err
        except (ValueError, TypeError, AttributeError, KeyError) as err:  # JSONDecodeError is a ValueError
            raise InputError(
                f"the API server at {self.server} did not answer with Kubernetes JSON "
                f"(a proxy or login page in the way?): {type(err).__name__}: {err}"
            ) from err
        return build_snapshot(objects, configs, self.notes, source=self.server)

    def _core(self) -> Objects:
        try:
            objects = _listed(self.client.list(Node, chunk_size=LIST_CHUNK), "Node", "v1")
        except httpx2.HTTPStatusError as err:
            code, message = _api_error(err)
            raise InputError(f"cannot list nodes at {self.server} ({code}): {message}") from err
        try:
            objects += _listed(self.client.list(Pod, namespace="*", chunk_size=LIST_CHUNK), "Pod", "v1")
        except httpx2.HTTPStatusError as err:
            code, message = _api_error(err)
            namespace = self.options.namespace
            if code != 403 or namespace is None:
                raise InputError(f"cannot list pods at {self.server} ({code}): {message}") from err
            self.notes.append(
                f"pods of all namespaces are forbidden; read namespace {namespace} "
                "only, so GPUs used by other namespaces count as free"
            )
            try:
                objects += _listed(self.client.list(Pod, namespace=namespace), "Pod", "v1")
            except httpx2.HTTPStatusError as err2:
                code, message = _api_error(err2)
                raise InputError(f"cannot list pods in {namespace} ({code}): {message}") from err2
        return objects

    def _optional(self, group: str, versions: tuple[str, ...], kind: str, plural: str, namespaced: bool) -> Objects:
        """List a CRD kind trying each version; 404 on all = not installed, 403 = forbidden."""
        last = 404
        for version in versions:
            resource: Any
            try:
                if namespaced:
                    resource = create_namespaced_resource(group, version, kind, plural)
                    items: Iterable[Any] = self.client.list(resource, namespace="*")
                else:
                    resource = create_global_resource(group, version, kind, plural)
                    items = self.client.list(resource)
                return _listed(items, kind, f"{group}/{version}")
            except httpx2.HTTPStatusError as err:
                last, message = _api_error(err)
                if last == 403:
                    self.notes.append(f"reading {plural}.{group} is forbidden: {message}")
                    return []
                if last != 404:
                    self.notes.append(f"reading {plural}.{group} failed ({last}): {message}")
                    return []
        served = "/".join(versions)
        self.notes.append(f"{plural}.{group} ({served}) is not served: CRD not installed")
        return []

    def _nrt(self) -> Objects:
        return self._optional(
            "topology.node.k8s.io", NRT_VERSIONS, "NodeResourceTopology", "noderesourcetopologies", namespaced=False
        )

    def _kueue(self) -> Objects:
        return (
            self._optional("kueue.x-k8s.io", KUEUE_VERSIONS, "Topology", "topologies", False)
            + self._optional("kueue.x-k8s.io", KUEUE_VERSIONS, "ClusterQueue", "clusterqueues", False)
            + self._optional("kueue.x-k8s.io", KUEUE_VERSIONS, "Workload", "workloads", True)
        )

    def _configz(self, nodes: list[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
        """GET /api/v1/nodes/NAME/proxy/configz per node (needs `nodes/proxy` get).

        The first node is asked alone (a 403 there means RBAC forbids it for all), the rest in
        parallel, CONFIGZ_WORKERS at a time.
        """
        configs: dict[str, Mapping[str, Any]] = {}
        names = [str(node.get("metadata", {}).get("name", "")) for node in nodes]
        if not self.options.read_configz or not names:
            return configs

        def fetch(name: str) -> tuple[str, httpx2.Response]:
            return name, self.raw.get(f"/api/v1/nodes/{name}/proxy/configz")

        first = fetch(names[0])
        if first[1].status_code == 403:
            self.notes.append("kubelet configs not read: nodes/proxy get is forbidden")
            return configs
        with ThreadPoolExecutor(max_workers=CONFIGZ_WORKERS) as pool:
            answers = [first, *pool.map(fetch, names[1:])]
        failed: list[str] = []
        for name, response in answers:
            if response.status_code != 200:
                failed.append(f"{name} ({response.status_code})")
                continue
            try:
                configs[name] = parse_configz(response.json(), name, f"configz of {name}")
            except (ValueError, InputError):
                failed.append(f"{name} (not a configz answer)")
        if failed:
            self.notes.append(f"kubelet configz not read for: {', '.join(failed)}")
        return configs


def read_cluster(options: ClusterOptions) -> ClusterSnapshot:
    """Read nodes, pods, NRT, Kueue Topologies/Workloads and kubelet configz into a snapshot."""
    reader = ClusterReader(options)
    try:
        return reader.read()
    finally:
        reader.close()
