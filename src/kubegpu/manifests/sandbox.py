"""Run a renderer (helm, kustomize) on untrusted input: a minimal environment, a private home, a time limit and a
cap on what it prints, read as it comes so that a chart printing gigabytes never holds more than the cap.

The environment holds no variable of the caller's (no CI tokens, cloud credentials or kubeconfig): a temporary
home with empty helm and XDG folders, no PATH, and proxies that lead nowhere unless remote resources are allowed.
"""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

MEMORY_LIMIT = 3 << 30
"""Address space a renderer may use: helm builds its whole output in memory before printing it, so a chart
that renders gigabytes would take the runner's memory. helm's and kubectl's address space is near 1.3 GiB on
a small chart (most of it reserved, not used); this leaves well over 1 GiB for rendering."""
_CHUNK = 1 << 16
_STDERR_BYTES = 1 << 16  # helm's and kustomize's errors are one line; more is kept out of memory
_NOWHERE = "http://127.0.0.1:9"  # a closed port: a request that is not refused earlier ends here at once
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
# What a remote fetch (kustomize's git clones and HTTP requests) may take from the caller's environment.
_REMOTE_VARIABLES = ("PATH", "SSL_CERT_FILE", "SSL_CERT_DIR", *_PROXY_VARIABLES, *(v.lower() for v in _PROXY_VARIABLES))


@dataclass(frozen=True)
class Ran:
    """What a renderer did: its exit code and output, or why it was stopped (`stopped`: in words)."""

    code: int | None
    out: str
    err: str
    stopped: str | None = None


def environment(home: Path, allow_remote: bool, caller: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment a renderer gets: every folder it may write under `home`, nothing of the caller's
    but, with `allow_remote`, what a fetch needs (PATH for git, proxies, CA certificates)."""
    folders = {
        "HOME": home,
        "TMPDIR": home / "tmp",
        "XDG_CACHE_HOME": home / "cache",
        "XDG_CONFIG_HOME": home / "config",
        "XDG_DATA_HOME": home / "data",
        "XDG_STATE_HOME": home / "state",
        "HELM_CACHE_HOME": home / "cache" / "helm",
        "HELM_CONFIG_HOME": home / "config" / "helm",
        "HELM_DATA_HOME": home / "data" / "helm",
        "HELM_PLUGINS": home / "data" / "helm" / "plugins",
        "HELM_REPOSITORY_CACHE": home / "cache" / "helm" / "repository",
        "HELM_REPOSITORY_CONFIG": home / "config" / "helm" / "repositories.yaml",
        "HELM_REGISTRY_CONFIG": home / "config" / "helm" / "registry" / "config.json",
    }
    env = {name: str(path) for name, path in folders.items()}
    (home / "tmp").mkdir(exist_ok=True)
    env.update(
        {
            "PATH": "",
            "LC_ALL": "C.UTF-8",
            "KUBECONFIG": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
        }
    )
    if not allow_remote:
        env.update({name: _NOWHERE for name in _PROXY_VARIABLES[:3]})
        env.update({name.lower(): _NOWHERE for name in _PROXY_VARIABLES[:3]})
        env["GIT_ALLOW_PROTOCOL"] = "none"
        return env
    given = os.environ if caller is None else caller
    env.update({name: given[name] for name in _REMOTE_VARIABLES if name in given})
    return env


def run(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    max_bytes: int,
    limit: str | None = None,
) -> Ran:
    """Run `command` (an absolute program path and its arguments) and read what it prints as it comes.

    It is stopped (killed with the processes it started) when it runs past `timeout_s` (`limit` says which
    limit that is, in words) or prints more than `max_bytes` on standard output; standard input is empty.
    """
    try:
        process = subprocess.Popen(  # the program: an absolute path found on the trusted PATH
            list(command),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: killed whole
            close_fds=True,
        )
    except OSError as problem:
        return Ran(None, "", "", f"cannot run {Path(command[0]).name}: {problem.strerror or problem}")
    _limit_memory(process.pid)
    assert process.stdout is not None and process.stderr is not None
    name = Path(command[0]).name
    too_long = f"{name} did not finish within {limit or f'{timeout_s:g} s'}"
    ends = time.monotonic() + max(timeout_s, 0.0)
    out = bytearray()
    errors = bytearray()
    stopped: str | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, out)
        selector.register(process.stderr, selectors.EVENT_READ, errors)
        while selector.get_map() and stopped is None:
            left = ends - time.monotonic()
            if left <= 0:
                stopped = too_long
                break
            for key, _event in selector.select(left):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                into: bytearray = key.data
                if into is out:
                    out += chunk
                    if len(out) > max_bytes:
                        stopped = f"{name} printed more than {max_bytes} bytes (the limit of --max-file-size): stopped"
                        break
                elif len(errors) < _STDERR_BYTES:
                    errors += chunk[: _STDERR_BYTES - len(errors)]
    code: int | None = None
    if stopped is None:
        try:
            code = process.wait(timeout=max(ends - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            stopped = too_long
    if stopped is not None:
        _kill(process)
    process.stdout.close()
    process.stderr.close()
    if stopped is None and code != 0 and b"out of memory" in errors:
        stopped = f"{name} needed more than {MEMORY_LIMIT >> 30} GiB of memory: stopped"
    return Ran(code, out.decode("utf-8", "replace"), errors.decode("utf-8", "replace"), stopped)


def _limit_memory(pid: int) -> None:
    """Cap the address space of the started process (Linux; elsewhere the time limit alone bounds it). Set just
    after it starts, not in the child before exec, which is unsafe where threads run."""
    prlimit = getattr(resource, "prlimit", None)
    if prlimit is None:
        return
    # (it may have ended already, or the limit cannot be set here: the time limit still holds)
    with contextlib.suppress(OSError, ValueError):
        prlimit(pid, resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the process and everything it started (its process group), and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()
