"""What the render and path security tests attack with: loopback servers that count what reaches them, a fake
helm that records its arguments and environment, and a hostile repository built in a temporary folder."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.lint.tools import find_tool

SECRET = "canary-7f3a-secret-value"  # in files outside the repository and in the environment: never printed
SECRET_ENV = {
    "GITHUB_TOKEN": SECRET + "-github",
    "AWS_SECRET_ACCESS_KEY": SECRET + "-aws",
    "KUBEGPU_TEST_CANARY": SECRET + "-env",
}
GPU_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec:\n  containers:\n  - name: main\n    image: t:1\n"
    "    resources: {limits: {nvidia.com/gpu: 1}}\n"
)
TOUCH_TEMPLATE = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: "$(touch PWNED)"}\n'


class LoopbackServer:
    """A TCP server on 127.0.0.1 that counts connections; `answer` is an HTTP reply, or None to never answer."""

    def __init__(self, answer: bytes | None) -> None:
        self.answer = answer
        self.connections = 0
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        host, port = self._socket.getsockname()
        return f"{host}:{port}"

    def _serve(self) -> None:
        self._socket.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._socket.accept()
            except OSError:
                continue
            self.connections += 1
            if self.answer is None:
                self._held.append(conn)  # never answered: the client waits until it gives up
                continue
            conn.settimeout(2)
            try:
                conn.recv(65536)
                conn.sendall(self.answer)
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for conn in self._held:
            conn.close()
        self._socket.close()


REMOTE_CONFIGMAP = (
    b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n"
    b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fetched}\ndata: {a: " + SECRET.encode() + b"-fetched}\n"
)


@pytest.fixture
def counting_server() -> Iterator[LoopbackServer]:
    server = LoopbackServer(REMOTE_CONFIGMAP)
    yield server
    server.close()


@pytest.fixture
def silent_server() -> Iterator[LoopbackServer]:
    server = LoopbackServer(None)
    yield server
    server.close()


def require(name: str, *others: str) -> Path:
    for tool in (name, *others):
        found = find_tool(tool)
        if found is not None:
            return found
    pytest.skip(f"{' or '.join((name, *others))} not installed (.ci/run installs it)")


@dataclass
class Run:
    """One `kubegpu lint` as CI runs it: its exit code and everything it printed."""

    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def lint(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 240) -> Run:
    """kubegpu lint in a process of its own, with the caller's environment plus `env` (secrets, PATH); the
    timeout only keeps a hang from stalling the suite (the run's own limits are the flags given)."""
    environment = {**os.environ, **SECRET_ENV, **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "kubegpu", "lint", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def kubeconfig(folder: Path, server: LoopbackServer) -> Path:
    """A kubeconfig whose API server is `server`: a renderer that reads the caller's kubeconfig reaches it."""
    path = folder / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://{server.address}'}}}}]\n"
        "users: [{name: u, user: {token: " + SECRET + "-kubeconfig}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    return path


def fake_helm(folder: Path) -> tuple[Path, Path]:
    """A `helm` that records its arguments and environment (NUL-separated, one file each per run, named by its
    process id) and prints one ConfigMap: the folder to put first on PATH, and the folder of the records."""
    bin_dir = folder / "fake-bin"
    bin_dir.mkdir()
    record = folder / "helm-records"
    record.mkdir()
    script = bin_dir / "helm"
    script.write_text(
        "#!/bin/sh\n"
        f"for a in \"$@\"; do printf '%s\\0' \"$a\" >> '{record}'/$$.args; done\n"
        f"/usr/bin/env -0 > '{record}'/$$.env\n"
        "printf -- '---\\n# Source: c/templates/a.yaml\\napiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: a}\\n'\n"
    )
    script.chmod(0o755)
    return bin_dir, record


def records(record: Path) -> list[tuple[list[str], dict[str, str]]]:
    """The arguments and environment of each run of fake_helm."""
    runs = []
    for args in sorted(record.glob("*.args")):
        env_items = args.with_suffix(".env").read_text().split("\0")
        env = dict(item.partition("=")[::2] for item in env_items if item)
        runs.append((args.read_text().split("\0")[:-1], env))
    return runs


def chart(folder: Path, template: str = TOUCH_TEMPLATE, name: str = "c") -> Path:
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    (folder / "templates" / "t.yaml").write_text(template)
    return folder


def snapshot(folder: Path) -> dict[str, tuple[str, bytes]]:
    """Every entry under `folder` (links not followed): its kind and bytes, to tell that nothing was written."""
    seen: dict[str, tuple[str, bytes]] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            key = str(path.relative_to(folder))
            if path.is_symlink():
                seen[key] = ("link", os.readlink(path).encode())
            elif path.is_dir():
                seen[key] = ("dir", b"")
            elif path.is_file():
                seen[key] = ("file", path.read_bytes())
            else:
                seen[key] = ("other", b"")
    return seen


@dataclass
class HostileRepo:
    """A repository an attacker wrote, with canary files outside it."""

    base: Path
    repo: Path
    outside: Path
    notes: list[str] = field(default_factory=list)


def hostile_repo(base: Path, remote: LoopbackServer) -> HostileRepo:
    """Flag-named charts, links out (to canaries, /proc/self/environ), loops, a chart holding .git/config, charts
    and kustomizations reaching outside, remote kustomize resources (at `remote`), backtracking bait in
    .gitignore, a FIFO, a deep tree, names with newlines and flag-like names, and one GPU pod with findings."""
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(
        f"apiVersion: v1\nkind: Secret\nmetadata: {{name: s}}\ndata: {{t: {SECRET}}}\n"
    )
    (outside / "creds.yaml").write_text(f"token: {SECRET}: not: yaml: [\n")  # a parse error would print this line
    chart(
        outside / "outside-chart", f'apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: o}}\ndata: {{a: "{SECRET}"}}\n'
    )
    (outside / "kust").mkdir()
    (outside / "kust" / "kustomization.yaml").write_text("resources: [secret.yaml]\n")
    (outside / "kust" / "secret.yaml").write_text((outside / "secret.yaml").read_text())

    repo = base / "repo"
    repo.mkdir()
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text(f'[http]\n\textraheader = "AUTHORIZATION: basic {SECRET}"\n')
    (repo / ".gitignore").write_text("a*a*a*a*a*a*a*a*a*a*a*a*b\n[z-a]\n")
    (repo / ("a" * 200 + ".yaml")).write_text(GPU_POD)
    (repo / "train.yaml").write_text(GPU_POD)
    # helm's arguments: folders named like flags, next to a chart named like helm's default release
    for name in ("--post-renderer=sh", "--validate", "--dry-run=server", "release-name", "-x"):
        chart(repo / name)
    # links out of the repository and loops
    (repo / "env.yaml").symlink_to("/proc/self/environ")
    (repo / "creds.yaml").symlink_to(outside / "creds.yaml")
    (repo / "secret.yaml").symlink_to(outside / "secret.yaml")
    (repo / "git-config.yaml").symlink_to(repo / ".git" / "config")
    (repo / "loop.yaml").symlink_to("loop.yaml")
    (repo / "ping.yaml").symlink_to("pong.yaml")
    (repo / "pong.yaml").symlink_to("ping.yaml")
    (repo / "dangling.yaml").symlink_to("nothing-here.yaml")
    (repo / "outside-chart").symlink_to(outside / "outside-chart")
    os.mkfifo(repo / "fifo.yaml")
    # charts that would read outside: a link out, a link loop, .git inside the chart folder
    leaky = chart(
        repo / "charts" / "leaky",
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: l}\ndata: {a: {{ .Files.Get "s.txt" | quote }}}\n',
    )
    (leaky / "s.txt").symlink_to(outside / "secret.yaml")
    looping = chart(repo / "charts" / "looping")
    (looping / "templates" / "up").symlink_to("..")
    vcs = chart(
        repo / "charts" / "vcs",
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v}\ndata: {a: {{ .Files.Get ".git/config" | quote }}}\n',
    )
    (vcs / ".git").mkdir()
    (vcs / ".git" / "config").write_text(f"token = {SECRET}\n")
    # kustomizations: remote resources, a base outside, a link to a base outside
    remote_dir = repo / "deploy" / "remote"
    remote_dir.mkdir(parents=True)
    (remote_dir / "kustomization.yaml").write_text(
        "resources:\n"
        f"- http://{remote.address}/x.yaml\n"
        f"- https://{remote.address}/x.yaml\n"
        f"- {remote.address}/org/repo//base?ref=main\n"
        "- github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v3.3.1\n"
        f"- git::http://{remote.address}/org/repo.git\n"
    )
    escape = repo / "deploy" / "escape"
    escape.mkdir()
    (escape / "kustomization.yaml").write_text(f"resources:\n- {os.path.relpath(outside / 'kust', escape)}\n")
    linked = repo / "deploy" / "linked"
    linked.mkdir()
    (linked / "base").symlink_to(outside / "kust")
    (linked / "kustomization.yaml").write_text("resources:\n- base\n")
    generator = repo / "deploy" / "generator"
    generator.mkdir()
    (generator / "kustomization.yaml").write_text(
        "configMapGenerator:\n- name: g\n  files: [/proc/self/environ]\n  envs: [../../../outside/creds.yaml]\n"
    )
    # hostile names and a deep tree
    (repo / "evil\n::error file=x::pwned.yaml").write_text(GPU_POD)
    (repo / "--format=json.yaml").write_text(GPU_POD)
    deep = repo.joinpath(*(["d"] * 150))
    deep.mkdir(parents=True)
    (deep / "deep.yaml").write_text(GPU_POD)
    return HostileRepo(base, repo, outside)


def tools_env(*bins: Path) -> dict[str, str]:
    """PATH with the folders of these programs first."""
    return {"PATH": os.pathsep.join([*(str(b.parent) for b in bins), os.environ.get("PATH", "")])}
