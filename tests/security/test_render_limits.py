"""Every render has a bound: what a renderer prints is read as it comes and stopped past --max-file-size, a
renderer runs within its time limit with everything it started, and its address space is capped."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from kubegpu.manifests import sandbox
from tests.security.render_fixtures import chart, lint, require, tools_env


def _run(code: str, tmp_path: Path, **limits: float) -> sandbox.Ran:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return sandbox.run(
        [sys.executable, "-c", code],
        cwd=home,
        env={**sandbox.environment(home, allow_remote=False), "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout_s=limits.get("timeout_s", 60),
        max_bytes=int(limits.get("max_bytes", 1 << 20)),
    )


def test_output_past_the_cap_is_not_read(tmp_path: Path) -> None:
    """A program printing without end is stopped once it passes the cap: what was read stays near the cap."""
    ran = _run("import sys\nwhile True: sys.stdout.write('x' * 65536)", tmp_path, max_bytes=1 << 20)
    assert ran.stopped is not None and "printed more than 1048576 bytes" in ran.stopped
    assert len(ran.out) <= (1 << 20) + (1 << 16)


def test_a_program_that_never_ends_is_stopped_with_what_it_started(tmp_path: Path) -> None:
    marker = tmp_path / "child-alive"
    grandchild = f"import time; time.sleep(3); open({str(marker)!r}, 'w')"
    code = (
        "import subprocess, sys, time\n"
        # a grandchild that keeps the pipes open and would write the marker later
        f"subprocess.Popen([sys.executable, '-c', {grandchild!r}])\n"
        "time.sleep(3600)\n"
    )
    ran = _run(code, tmp_path, timeout_s=1)
    assert ran.stopped is not None and "did not finish within 1 s" in ran.stopped
    import time

    time.sleep(3.5)
    assert not marker.exists()  # the whole process group was killed


def test_the_environment_holds_nothing_of_the_callers(tmp_path: Path) -> None:
    ran = _run("import json, os; print(json.dumps(dict(os.environ)))", tmp_path)
    env = json.loads(ran.out)
    env.pop("PYTHONPATH")
    assert set(env) <= {
        "HOME", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
        "HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME", "HELM_PLUGINS", "HELM_REPOSITORY_CACHE",
        "HELM_REPOSITORY_CONFIG", "HELM_REGISTRY_CONFIG", "PATH", "LC_ALL", "KUBECONFIG", "GIT_TERMINAL_PROMPT",
        "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_ALLOW_PROTOCOL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
        "http_proxy", "https_proxy", "all_proxy", "LC_CTYPE",
    }  # fmt: skip
    assert all(value.startswith(str(tmp_path)) for key, value in env.items() if key.endswith(("HOME", "DIR")))
    remote = sandbox.environment(tmp_path / "home", allow_remote=True, caller={"PATH": "/bin", "GITHUB_TOKEN": "t"})
    assert remote["PATH"] == "/bin" and "GITHUB_TOKEN" not in remote and "HTTPS_PROXY" not in remote


def test_the_address_space_is_capped(tmp_path: Path) -> None:
    if not hasattr(__import__("resource"), "prlimit"):
        return  # only Linux sets it; the time limit bounds a renderer elsewhere
    ran = _run(
        "import resource, time\ntime.sleep(0.5)\nprint(resource.getrlimit(resource.RLIMIT_AS)[0])\n"
        f"x = bytearray({sandbox.MEMORY_LIMIT})\n",
        tmp_path,
    )
    assert ran.out.split()[0] == str(sandbox.MEMORY_LIMIT)
    assert ran.code != 0 and "MemoryError" in ran.err


def test_a_chart_printing_more_than_max_file_size_is_an_error(tmp_path: Path) -> None:
    helm = require("helm")
    big = "{{- range until 3000 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c{{ . }}}\n{{- end }}\n"
    chart(tmp_path / "repo" / "big", big)
    done = lint([".", "-o", "json", "--max-file-size", "20000"], tmp_path / "repo", tools_env(helm))
    assert done.code == 2, done.text
    [finding] = json.loads(done.out)["findings"]
    assert finding["file"] == "big/Chart.yaml"
    assert finding["message"] == "helm printed more than 20000 bytes (the limit of --max-file-size): stopped"
