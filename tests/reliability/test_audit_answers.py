"""`audit --cluster` on answers that are not Kubernetes JSON (an HTML error page, a redirect without a
Content-Type, an exec credential plugin printing garbage), served over real HTTP on localhost: one line, exit 2."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from kubegpu.cli.main import app
from tests.live.conftest import write_kubeconfig

HTML = "<html><body><h1>500 Internal Server Error</h1></body></html>"


def _audit(kubeconfig: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["audit", "--cluster", "--kubeconfig", str(kubeconfig), "--timeout", "5"])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "status, body, headers",
    [
        (500, HTML, {"Content-Type": "text/html"}),
        (200, HTML, {"Content-Type": "text/html"}),
        (302, "", {"Location": "/login"}),
        (200, '{"kind": "NodeList", "items": [', {"Content-Type": "application/json"}),
        (200, '"just a string"', {"Content-Type": "application/json"}),
    ],
)
def test_non_json_answers_are_one_line(
    httpserver: HTTPServer, tmp_path: Path, status: int, body: str, headers: dict[str, str]
) -> None:
    httpserver.expect_request("/api/v1/nodes").respond_with_data(body, status=status, headers=headers)
    httpserver.no_handler_status_code = 404
    code, output = _audit(write_kubeconfig(tmp_path / "kubeconfig", httpserver.url_for("/").rstrip("/")))
    assert code == 2, output
    assert "Traceback" not in output and "internal error" not in output
    assert output.startswith("kubegpu: error:") and output.count("\n") == 1


def test_exec_plugin_printing_garbage(httpserver: HTTPServer, tmp_path: Path) -> None:
    plugin = tmp_path / "credential-plugin"
    plugin.write_text("#!/bin/sh\necho 'this is not an ExecCredential'\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: k\n  cluster:\n    server: {httpserver.url_for('/').rstrip('/')}\n"
        "users:\n- name: u\n  user:\n    exec:\n"
        "      apiVersion: client.authentication.k8s.io/v1beta1\n"
        f"      command: '{plugin}'\n      interactiveMode: Never\n"
        "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
    )
    code, output = _audit(kubeconfig)
    assert code == 2, output
    assert "Traceback" not in output and "internal error" not in output
