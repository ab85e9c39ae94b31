"""A repository written by an attacker, linted as CI lints a pull request, in every output format: nothing in it
runs, nothing is fetched, nothing outside it is read or written, and the run ends within its limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lint.tools import find_tool
from tests.security.render_fixtures import (
    SECRET,
    LoopbackServer,
    counting_server,
    hostile_repo,
    kubeconfig,
    lint,
    snapshot,
)

__all__ = ["counting_server"]  # a fixture, used by name

FORMATS = ("text", "json", "sarif", "junit", "github")


@pytest.mark.parametrize("form", FORMATS)
def test_linting_a_hostile_repository(tmp_path: Path, counting_server: LoopbackServer, form: str) -> None:
    found = hostile_repo(tmp_path, counting_server)
    tools = [t for t in (find_tool("helm"), find_tool("kubectl"), find_tool("kustomize")) if t is not None]
    path = ":".join([*(str(t.parent) for t in tools), "/usr/bin", "/bin"])
    env = {"PATH": path, "KUBECONFIG": str(kubeconfig(tmp_path, counting_server))}
    before = {"repo": snapshot(found.repo), "outside": snapshot(found.outside)}
    args = [".", "-o", form, "--verbose", "--render-timeout", "20", "--render-deadline", "60"]
    done = lint(args, found.repo, env)
    assert done.code in (1, 2), done.text  # findings, and the FIFO, a KG006 error
    assert "internal error" not in done.text and "Traceback" not in done.text
    assert SECRET not in done.text  # no canary, environment variable, kubeconfig token or .git/config line
    assert not list(tmp_path.rglob("PWNED"))  # no template ran as a shell script
    assert counting_server.connections == 0  # no remote resource fetched, no API server called
    after = {"repo": snapshot(found.repo), "outside": snapshot(found.outside)}
    assert after == before  # nothing written, inside or outside
    assert "symbolic links were not followed" in done.err
    if form == "json":
        report = json.loads(done.out)
        skipped = {s["file"]: s["what"] for s in report["summary"]["skipped"]}
        for name in ("env.yaml", "creds.yaml", "secret.yaml", "git-config.yaml", "loop.yaml", "dangling.yaml"):
            assert skipped.get(name) == "link", (name, skipped)
        notices = "\n".join(report["summary"]["notices"])
        if tools:
            for words in ("charts/leaky", "charts/looping", "deploy/remote", "deploy/escape", "deploy/linked"):
                assert words in notices, (words, notices)
        files = {f["file"] for f in report["findings"]}
        assert "train.yaml" in files and not any("outside" in f or f.startswith("/") for f in files)
