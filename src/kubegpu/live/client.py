"""Read a live cluster into a ClusterSnapshot with `get` and `list` requests only.

lightkube 1.0 reads the kubeconfig and authenticates (tokens, client certificates, exec plugins); the
requests go through an httpx2 client whose transport (live/transport.py) ends every request by its
deadline. The API server's answers are untrusted: each request has a total deadline (not one per read),
the whole read has one, lists stop after a number of pages, objects and bytes, and a repeated `continue`
token is refused. A missing CRD (404) or a forbidden read (403) becomes a note, never a failure.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
from lightkube import ConfigError, KubeConfig
from lightkube.config.client_adapter import Client as adapter_client
from lightkube.config.client_adapter import ConnectionParams, verify_cluster
from lightkube.config.kubeconfig import SingleConfig

from kubegpu.deadline import Deadline
from kubegpu.errors import InputError
from kubegpu.live.model import ClusterSnapshot
from kubegpu.live.parse import parse_configz
from kubegpu.live.snapshot import build_snapshot
from kubegpu.live.transport import DeadlineTransport

KUEUE_VERSIONS = ("v1beta2", "v1beta1")
SERVICE_ACCOUNT_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
CONFIGZ_WORKERS = 16
LIST_CHUNK = 500  # list in pages (limit/continue) so big clusters are not one huge response
NRT_VERSIONS = ("v1alpha2",)
MIB = 1024 * 1024
CONFIGZ_MAX_BYTES = 4 * MIB  # a kubelet configuration is a few KiB
# A DNS-1123 subdomain, what a node name is: anything else is not put into a request path.
_NODE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


@dataclass(frozen=True)
class ClusterOptions:
    """How to reach the cluster and how much of its answers to take.

    `timeout_s` bounds each request from its start to the last byte of its answer; `deadline_s` the whole
    read. A list stops with an error after `max_pages` pages or `max_objects` objects; one answer may hold
    `max_response_bytes` (decompressed), all answers together `max_total_bytes`. The defaults are far above
    a cluster at Kubernetes' scalability limits (150,000 pods, 5,000 nodes): 500 objects a page, 300,000
    objects a list.
    """

    kubeconfig: Path | None = None
    context: str | None = None
    namespace: str | None = None
    timeout_s: float = 30.0
    read_configz: bool = True
    deadline_s: float = 300.0
    max_pages: int = 1000
    max_objects: int = 300_000
    max_response_bytes: int = 128 * MIB
    max_total_bytes: int = 2048 * MIB
    disruption: bool = False  # also PodDisruptionBudgets, PriorityClasses, PVCs and PVs (what `defrag` reads)

    def __post_init__(self) -> None:
        if not 0 < self.timeout_s <= 3600 or not 0 < self.deadline_s <= 86400:
            raise InputError("--timeout must be 0-3600 seconds and --deadline 0-86400 seconds, both above 0")
        if min(self.max_pages, self.max_objects, self.max_response_bytes, self.max_total_bytes) < 1:
            raise InputError("the page, object and byte caps of a cluster read must be at least 1")


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


class Refused(Exception):
    """The API server answered a request with an error status (403, 404, 500...)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def _size(n: int) -> str:
    return f"{n / MIB:g} MiB" if n >= MIB else f"{n} bytes"


def _printable(text: str, limit: int = 200) -> str:
    """A server's text as one short printable line (it reaches the terminal and the report)."""
    flat = "".join(c if c.isprintable() else " " for c in text[: limit * 2]).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _status_message(body: bytes, reason: str) -> str:
    """The message of a metav1.Status answer, else the start of the body, else the reason phrase."""
    try:
        status = json.loads(body)
    except (ValueError, RecursionError):
        status = None
    if isinstance(status, Mapping) and isinstance(status.get("message"), str) and status["message"]:
        return _printable(status["message"])
    return _printable(body[:400].decode("utf-8", "replace")) or _printable(reason)


Objects = list[tuple[Mapping[str, Any], str]]


class ClusterReader:
    """One read of a cluster; notes record what could not be read and why."""

    def __init__(self, options: ClusterOptions, warn: Callable[[str], None] | None = None) -> None:
        self.options = options
        self.config = load_config(options)
        self.server = self.config.cluster.server
        self.notes: list[str] = []
        if self.config.cluster.insecure:
            warning = (
                "the kubeconfig turns TLS verification off for this cluster (insecure-skip-tls-verify: true): "
                f"whoever answers at {self.server} is trusted with the credentials and believed"
            )
            self.notes.append(warning)
            if warn is not None:
                warn(warning)
        self.deadline = Deadline.after(options.deadline_s)
        self.listed: set[str] = set()  # kinds whose list was read, empty or not
        self._bytes = 0
        self._lock = threading.Lock()  # the byte count, shared by the configz threads
        try:
            if self.config.user is None:
                raise ConfigError("the context names no user")
            context = verify_cluster(self.config.cluster, self.config.user, self.config.abs_file, trust_env=False)
            self.transport = DeadlineTransport(context, max_connections=CONFIGZ_WORKERS + 1)
            params = ConnectionParams(
                timeout=httpx2.Timeout(options.timeout_s), trust_env=False, transport=self.transport
            )
            self.raw = adapter_client(self.config, params)
        except (ConfigError, OSError, ValueError) as err:
            raise InputError(f"cannot use kubeconfig context: {err}") from err

    def close(self) -> None:
        self.raw.close()

    def read(self) -> ClusterSnapshot:
        try:
            objects = self._core()
            objects += self._nrt()
            objects += self._kueue()
            if self.options.disruption:
                objects += self._disruption()
            configs = self._configz([o for o, _ in objects if o.get("kind") == "Node"])
        except ConfigError as err:  # raised at request time, e.g. by an exec credential plugin
            raise InputError(f"kubeconfig credentials failed: {err}") from err
        except FileNotFoundError as err:
            raise InputError(f"kubeconfig credentials failed: {err.strerror}: {err.filename}") from err
        except (httpx2.TransportError, OSError) as err:
            raise InputError(f"cannot reach the API server at {self.server}: {_printable(str(err))}") from err
        except (ValueError, TypeError, AttributeError, KeyError, RecursionError) as err:
            raise InputError(
                f"the API server at {self.server} did not answer with Kubernetes JSON "
                f"(a proxy or login page in the way?): {type(err).__name__}: {_printable(str(err))}"
            ) from err
        return build_snapshot(objects, configs, self.notes, source=self.server, listed=self.listed)

    # -- requests ------------------------------------------------------------------------------

    def _get(self, path: str, params: Mapping[str, str | int], max_bytes: int) -> Any:
        """GET `path` and parse its JSON within the request's and the run's deadlines and the byte caps;
        Refused for an error status, InputError for a timeout or an answer over a cap."""
        if self.deadline.expired():
            raise self._out_of_time()
        deadline = Deadline.after(self.options.timeout_s).earlier(self.deadline)
        chunks: list[bytes] = []
        size = 0
        try:
            with self.transport.bounded(deadline), self.raw.stream("GET", path, params=params) as response:
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise InputError(
                            f"the API server at {self.server} sent more than {_size(max_bytes)} for GET {path}"
                        )
                    chunks.append(chunk)
        except httpx2.TimeoutException as err:
            if self.deadline.expired():
                raise self._out_of_time() from err
            raise InputError(
                f"the API server at {self.server} did not answer GET {path} within {self.options.timeout_s:g} s "
                "(--timeout, the whole request)"
            ) from err
        self._count(size)
        body = b"".join(chunks)
        if response.status_code != 200:
            raise Refused(response.status_code, _status_message(body, response.reason_phrase))
        return json.loads(body)

    def _out_of_time(self) -> InputError:
        return InputError(
            f"reading the cluster at {self.server} did not finish within {self.options.deadline_s:g} s (--deadline)"
        )

    def _count(self, size: int) -> None:
        with self._lock:
            self._bytes += size
            total = self._bytes
        if total > self.options.max_total_bytes:
            raise InputError(
                f"the API server at {self.server} sent more than {_size(self.options.max_total_bytes)} in all"
            )

    def _list(self, path: str, kind: str, api_version: str) -> Objects:
        """Every object of a list, page after page (limit/continue, as kubectl), within the caps."""
        out: Objects = []
        seen: set[bytes] = set()
        token = ""
        for _ in range(self.options.max_pages):
            params: dict[str, str | int] = {"limit": LIST_CHUNK}
            if token:
                params["continue"] = token
            page = self._get(path, params, self.options.max_response_bytes)
            items = page.get("items") if isinstance(page, Mapping) else None
            if items is None and isinstance(page, Mapping) and str(page.get("kind", "")).endswith("List"):
                items = []  # an empty list serialised as null
            if not isinstance(items, list):
                raise ValueError(f"GET {path} did not answer a list with 'items'")
            for item in items:
                if not isinstance(item, Mapping):
                    raise ValueError(f"GET {path} listed an item that is not an object")
                out.append(({**item, "kind": kind, "apiVersion": api_version}, f"{kind} list"))
            if len(out) > self.options.max_objects:
                raise InputError(
                    f"GET {path} listed more than {self.options.max_objects} objects at {self.server}; "
                    "audit a dump with --snapshot instead"
                )
            meta = page.get("metadata")
            following = meta.get("continue") if isinstance(meta, Mapping) else None
            if not following or not isinstance(following, str):
                self.listed.add(kind)
                return out
            token = following
            digest = hashlib.sha256(token.encode("utf-8", "replace")).digest()
            if digest in seen:
                raise InputError(f"GET {path} at {self.server} gave a continue token it had given before: a loop")
            seen.add(digest)
        raise InputError(f"GET {path} at {self.server} did not end after {self.options.max_pages} pages")

    # -- what is read --------------------------------------------------------------------------

    def _core(self) -> Objects:
        try:
            objects = self._list("/api/v1/nodes", "Node", "v1")
        except Refused as err:
            raise InputError(f"cannot list nodes at {self.server} ({err.code}): {err.message}") from err
        try:
            objects += self._list("/api/v1/pods", "Pod", "v1")
        except Refused as err:
            namespace = self.options.namespace
            if err.code != 403 or namespace is None:
                raise InputError(f"cannot list pods at {self.server} ({err.code}): {err.message}") from err
            self.notes.append(
                f"pods of all namespaces are forbidden; read namespace {namespace} "
                "only, so GPUs used by other namespaces count as free"
            )
            try:
                objects += self._list(f"/api/v1/namespaces/{quote(namespace, safe='')}/pods", "Pod", "v1")
            except Refused as err2:
                raise InputError(f"cannot list pods in {namespace} ({err2.code}): {err2.message}") from err2
        return objects

    def _optional(self, group: str, versions: tuple[str, ...], kind: str, plural: str) -> Objects:
        """List a kind (all namespaces) trying each version; 404 on all = not served (a CRD not installed),
        403 = forbidden. The core group is ``""``."""
        resource = f"{plural}.{group}" if group else plural
        for version in versions:
            prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
            try:
                return self._list(f"{prefix}/{plural}", kind, f"{group}/{version}" if group else version)
            except Refused as err:
                if err.code == 403:
                    self.notes.append(f"reading {resource} is forbidden: {err.message}")
                    return []
                if err.code != 404:
                    self.notes.append(f"reading {resource} failed ({err.code}): {err.message}")
                    return []
        served = "/".join(versions)
        self.notes.append(f"{resource} ({served}) is not served: CRD not installed")
        return []

    def _nrt(self) -> Objects:
        return self._optional("topology.node.k8s.io", NRT_VERSIONS, "NodeResourceTopology", "noderesourcetopologies")

    def _kueue(self) -> Objects:
        return (
            self._optional("kueue.x-k8s.io", KUEUE_VERSIONS, "Topology", "topologies")
            + self._optional("kueue.x-k8s.io", KUEUE_VERSIONS, "ClusterQueue", "clusterqueues")
            + self._optional("kueue.x-k8s.io", KUEUE_VERSIONS, "Workload", "workloads")
            + self._optional("kueue.x-k8s.io", KUEUE_VERSIONS, "LocalQueue", "localqueues")
        )

    def _disruption(self) -> Objects:
        """What decides whether a pod may be evicted and where it may run again: PodDisruptionBudgets,
        PriorityClasses, PersistentVolumeClaims and PersistentVolumes (a forbidden list is noted)."""
        return (
            self._optional("policy", ("v1",), "PodDisruptionBudget", "poddisruptionbudgets")
            + self._optional("scheduling.k8s.io", ("v1",), "PriorityClass", "priorityclasses")
            + self._optional("", ("v1",), "PersistentVolumeClaim", "persistentvolumeclaims")
            + self._optional("", ("v1",), "PersistentVolume", "persistentvolumes")
        )

    def _configz(self, nodes: list[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
        """GET /api/v1/nodes/NAME/proxy/configz per node (needs `nodes/proxy` get).

        The first node is asked alone (a 403 there means RBAC forbids it for all), the rest in
        parallel, CONFIGZ_WORKERS at a time. A node whose kubelet does not answer in time is noted.
        """
        configs: dict[str, Mapping[str, Any]] = {}
        names: list[str] = []
        failed: list[str] = []
        for node in nodes:
            meta = node.get("metadata")
            name = meta.get("name") if isinstance(meta, Mapping) else None
            if isinstance(name, str) and len(name) <= 253 and _NODE_NAME.fullmatch(name):
                names.append(name)
            else:
                failed.append(f"{_printable(str(name), 80)} (not a valid node name)")
        if not self.options.read_configz or not names:
            return configs

        def fetch(name: str) -> tuple[str, object]:
            try:
                return name, self._get(f"/api/v1/nodes/{name}/proxy/configz", {}, CONFIGZ_MAX_BYTES)
            except Refused as err:
                return name, err
            except InputError as err:
                if self.deadline.expired():
                    raise
                return name, err
            except (ValueError, RecursionError) as err:
                return name, ValueError(str(err))

        first = fetch(names[0])
        if isinstance(first[1], Refused) and first[1].code == 403:
            self.notes.append("kubelet configs not read: nodes/proxy get is forbidden")
            return configs
        with ThreadPoolExecutor(max_workers=CONFIGZ_WORKERS) as pool:
            answers = [first, *pool.map(fetch, names[1:])]
        for name, answer in answers:
            if isinstance(answer, Refused):
                failed.append(f"{name} ({answer.code})")
            elif isinstance(answer, InputError):
                failed.append(f"{name} ({answer.message})")
            elif isinstance(answer, ValueError):
                failed.append(f"{name} (not a configz answer)")
            else:
                try:
                    configs[name] = parse_configz(answer, name, f"configz of {name}")
                except InputError:
                    failed.append(f"{name} (not a configz answer)")
        if failed:
            self.notes.append(f"kubelet configz not read for: {', '.join(failed)}")
        return configs


def read_cluster(options: ClusterOptions, warn: Callable[[str], None] | None = None) -> ClusterSnapshot:
    """Read nodes, pods, NRT, Kueue Topologies/Workloads and kubelet configz into a snapshot.

    `warn` is told at once of what the report will note but the user should see first (TLS verification off).
    """
    reader = ClusterReader(options, warn)
    try:
        return reader.read()
    finally:
        reader.close()
