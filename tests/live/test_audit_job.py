"""`kubegpu gen audit-rbac --job`: the audit run in the cluster, from the release image, as the ServiceAccount
that holds exactly the audit's read access."""

from __future__ import annotations

import kubernetes_validate
import pytest
import yaml
from typer.testing import CliRunner

from kubegpu import DEFAULT_IMAGE
from kubegpu.cli.main import app

IMAGE = "registry.example.com/platform/kubegpu:0.1.0"


@pytest.mark.parametrize("configz", [True, False])
def test_job_runs_the_release_image_as_the_service_account(configz: bool) -> None:
    args = ["gen", "audit-rbac", "--job", "-n", "ops"] + (["--with-configz"] if configz else [])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    objects = [d for d in yaml.safe_load_all(result.output) if d]
    for obj in objects:
        kubernetes_validate.validate(obj, "1.35.0", strict=True)
    job = objects[-1]
    assert job["kind"] == "Job" and job["metadata"]["namespace"] == "ops"
    pod = job["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == objects[0]["metadata"]["name"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["image"] == DEFAULT_IMAGE
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["command"] + container["args"][:2] == ["kubegpu", "audit", "--cluster"]
    assert ("--no-configz" in container["args"]) is not configz


def test_image_is_overridable_and_checked() -> None:
    custom = CliRunner().invoke(app, ["gen", "audit-rbac", "--job", "--image", IMAGE])
    assert custom.exit_code == 0 and f"image: {IMAGE}\n" in custom.output
    bad = CliRunner().invoke(app, ["gen", "audit-rbac", "--job", "--image", "not an image"])
    assert bad.exit_code == 2 and "--image" in bad.output
    plain = CliRunner().invoke(app, ["gen", "audit-rbac"])
    assert "kind: Job" not in plain.output
