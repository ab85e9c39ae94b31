"""The kubegpu image, as far as it can be checked without a container engine: the Dockerfile's stages and
what its runtime stage may rely on, its labels and version, that kubegpu's own lint passes on it, that the
build context holds what it copies, that the manifests run it, and the release workflow that builds it.
(Its build step itself runs, paths moved to a scratch folder, in tests/test_package.py.)
"""

from __future__ import annotations

import fnmatch
import json
import re
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import kubegpu
from kubegpu.cli.main import app
from kubegpu.lint import LintConfig, lint_paths
from kubegpu.manifests.dockerfile import Instruction, instructions, stages
from tests.paths import REPO_ROOT

DOCKERFILE = REPO_ROOT / "Dockerfile"
TEXT = DOCKERFILE.read_text()
RUNTIME_FROM = max(i.line for i in instructions(TEXT) if i.keyword == "FROM")
BUILD = [i for i in instructions(TEXT) if i.keyword != "FROM" and i.line < RUNTIME_FROM]
RUNTIME = [i for i in instructions(TEXT) if i.line > RUNTIME_FROM]


def _one(keyword: str, stage: list[Instruction]) -> str:
    (found,) = [i.arguments for i in stage if i.keyword == keyword]
    return found


def docker_extras() -> str:
    """The extras the image installs, as written in its build stage (`[server,cluster]`)."""
    match = re.search(r"kubegpu-\*\.whl\)(\[[a-z,]+\])", " ".join(i.arguments for i in BUILD))
    assert match, "the build stage installs the wheel with its extras"
    return match.group(1)


def test_two_stages_on_a_slim_python_3_11() -> None:
    found = stages(TEXT)
    assert [s.name for s in found] == ["build", "runtime"]
    for stage in found:
        assert re.fullmatch(r"python:3\.11[\w.-]*-slim[\w.-]*", stage.resolved), stage.resolved


def test_the_image_installs_the_server_and_cluster_extras_with_the_pins() -> None:
    assert docker_extras() == "[server,cluster]"
    run = " ".join(i.arguments for i in BUILD if i.keyword == "RUN")
    assert "-c constraints.txt" in run and "pip wheel" in run and "kubegpu --version" in run


def test_runtime_stage_needs_no_shell_and_writes_nothing() -> None:
    keywords = {i.keyword for i in RUNTIME}
    assert "RUN" not in keywords  # nothing executes in the runtime stage, so nothing there needs a shell
    assert json.loads(_one("ENTRYPOINT", RUNTIME)) == ["kubegpu"]  # exec form: no /bin/sh -c
    assert isinstance(json.loads(_one("CMD", RUNTIME)), list)
    assert _one("COPY", RUNTIME) == "--from=build /opt/kubegpu /opt/kubegpu"
    env = _one("ENV", RUNTIME)
    assert "PYTHONDONTWRITEBYTECODE=1" in env and env.startswith("PATH=/opt/kubegpu/bin:")
    assert "--compile" in " ".join(i.arguments for i in BUILD)  # bytecode made at build time


def test_runtime_user_is_numeric_and_not_root() -> None:
    user, _, group = _one("USER", RUNTIME).partition(":")
    assert user.isdigit() and int(user) != 0 and group.isdigit() and int(group) != 0
    webhook = CliRunner().invoke(app, ["gen", "webhook"])
    assert f"runAsUser: {user}\n" in webhook.output  # the Deployment runs as the image's user


def test_labels_name_source_version_and_licence() -> None:
    labels = dict(re.findall(r'(org\.opencontainers\.image\.[a-z]+)="([^"]*)"', _one("LABEL", RUNTIME)))
    assert labels["org.opencontainers.image.version"] == "${VERSION}"
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    assert labels["org.opencontainers.image.source"].startswith("https://github.com/")
    assert _one("ARG", RUNTIME) == f"VERSION={kubegpu.__version__}"


def test_kubegpu_lint_passes_on_its_own_dockerfile() -> None:
    result = lint_paths([str(DOCKERFILE)], LintConfig())
    assert result.files == 1 and result.findings == [] and not result.suppressed


def test_build_context_holds_what_the_build_stage_copies() -> None:
    rules = [
        line for line in (REPO_ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")
    ]

    def included(path: str) -> bool:
        keep = True
        for rule in rules:
            negate = rule.startswith("!")
            pattern = rule.lstrip("!").rstrip("/")
            if fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/"):
                keep = negate
        return keep

    for instruction in BUILD:
        if instruction.keyword == "COPY":
            *sources, _target = instruction.arguments.split()
            for source in sources:
                assert (REPO_ROOT / source).exists() and included(source), source
    assert not included("tests") and not included(".venv") and included("src/kubegpu/__init__.py")


@pytest.mark.parametrize(
    "command",
    [
        ["gen", "webhook"],
        ["gen", "probe-daemonset"],
        ["gen", "probe-job"],
        ["gen", "audit-rbac", "--job"],
        ["gen", "loadbench-job", "--pvc", "models", "--node", "gpu-node-1"],
    ],
)
def test_manifests_run_this_versions_image(command: list[str]) -> None:
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    images = [c["image"] for doc in yaml.safe_load_all(result.output) if doc for c in _containers(doc)]
    kubegpu_images = [i for i in images if not i.startswith("registry.k8s.io/pause")]
    assert kubegpu_images and set(kubegpu_images) == {kubegpu.DEFAULT_IMAGE}
    assert f"ghcr.io/kubegpu/kubegpu:{kubegpu.__version__}" == kubegpu.DEFAULT_IMAGE


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = (((doc.get("spec") or {}).get("template") or {}).get("spec")) or {}
    return list(spec.get("initContainers") or []) + list(spec.get("containers") or [])


def test_release_workflow_builds_wheel_image_and_chart_on_a_tag() -> None:
    workflow = yaml.safe_load((REPO_ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert workflow[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads the key `on` as True
    jobs = workflow["jobs"]
    steps = {name: json.dumps(job["steps"]) for name, job in jobs.items()}
    assert ".ci/run" in steps["test"] and "GITHUB_REF_NAME" in steps["test"]
    assert "python -m build" in steps["python"]
    assert "docker/build-push-action" in steps["image"] and "ghcr.io/kubegpu/kubegpu:" in steps["image"]
    assert "VERSION=" in steps["image"]
    assert "helm package charts/kubegpu-webhook" in steps["chart"]
    assert all(job.get("needs") for name, job in jobs.items() if name != "test")
