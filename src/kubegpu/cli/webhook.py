"""`kubegpu webhook serve` and `kubegpu gen webhook`: argument parsing; the work is in webhook/."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kubegpu.cli.common import fail
from kubegpu.errors import InputError, KubegpuError
from kubegpu.rules import LintConfig, Severity, all_rules, load_config
from kubegpu.webhook import WebhookConfig
from kubegpu.webhook.deploy import DeployOptions, encode_ca_bundle, render_webhook
from kubegpu.webhook.review import ALWAYS_EXCLUDED
from kubegpu.webhook.serve import serve

webhook_app = typer.Typer(help="Run the admission webhook that fixes GPU pods at creation.",
                          no_args_is_help=True)


@webhook_app.command("serve")
def serve_command(
    tls_cert: Annotated[Path, typer.Option(help="Serving certificate (PEM).")],
    tls_key: Annotated[Path, typer.Option(help="Private key of the certificate (PEM).")],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "0.0.0.0",
    port: Annotated[int, typer.Option(help="HTTPS port.")] = 8443,
    exclude_namespace: Annotated[list[str] | None, typer.Option(
        help="Namespaces left alone (kube-system always is; repeatable).")] = None,
    deny_severity: Annotated[Severity, typer.Option(
        help="/validate denies findings at or above this severity.")] = Severity.ERROR,
    config_file: Annotated[
        Path | None, typer.Option("--config", help="kubegpu.toml for the rules."),
    ] = None,
) -> None:
    """Serve /mutate, /validate, /healthz, /readyz and /metrics over HTTPS until stopped."""
    try:
        lint = load_config(config_file, all_rules()) if config_file else LintConfig()
        config = WebhookConfig(lint=lint, deny_severity=deny_severity,
                               excluded_namespaces=ALWAYS_EXCLUDED | set(exclude_namespace or ()))
        serve(config, tls_cert, tls_key, host=host, port=port)
    except KubegpuError as err:
        raise fail(err) from err


def gen_webhook(
    image: Annotated[str, typer.Option(help="Image with kubegpu installed (`kubegpu` on PATH).")],
    namespace: Annotated[
        str, typer.Option("--namespace", "-n", help="Namespace to run in."),
    ] = "kubegpu-system",
    replicas: Annotated[int, typer.Option(help="Webhook replicas.")] = 2,
    failure_policy: Annotated[str, typer.Option(help="Ignore (default) or Fail.")] = "Ignore",
    ca_bundle: Annotated[Path | None, typer.Option(
        help="PEM CA that signed your serving cert (default: cert-manager issues one).")] = None,
    validating: Annotated[bool, typer.Option("--validating/--no-validating",
                                             help="Also deny pods with findings.")] = True,
    deny_severity: Annotated[Severity, typer.Option(help="Severity that denies.")] = Severity.ERROR,
) -> None:
    """Deployment, Service, PDB, Mutating/ValidatingWebhookConfiguration and TLS for the webhook."""
    try:
        bundle = None
        if ca_bundle is not None:
            try:
                text = ca_bundle.read_text()
            except OSError as err:
                raise InputError(f"cannot read CA bundle: {err.strerror}",
                                 file=str(ca_bundle)) from err
            bundle = encode_ca_bundle(text, str(ca_bundle))
        options = DeployOptions(namespace=namespace, image=image, replicas=replicas,
                                failure_policy=failure_policy, ca_bundle=bundle,
                                validating=validating, deny_severity=deny_severity.value)
        typer.echo(render_webhook(options), nl=False)
    except KubegpuError as err:
        raise fail(err) from err


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    app.add_typer(webhook_app, name="webhook")
    gen_app.command("webhook")(gen_webhook)
