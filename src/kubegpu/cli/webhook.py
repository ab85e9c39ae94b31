"""`kubegpu webhook serve` and `kubegpu gen webhook`: argument parsing; the work is in webhook/."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kubegpu import DEFAULT_IMAGE
from kubegpu.cli.common import IGNORE_HELP, SELECT_HELP, fail
from kubegpu.errors import InputError, KubegpuError
from kubegpu.lint import LintConfig, Severity, all_rules, load_config
from kubegpu.lint.config import rule_names_option
from kubegpu.webhook import WebhookConfig
from kubegpu.webhook.deploy import DeployOptions, encode_ca_bundle, render_webhook
from kubegpu.webhook.limits import Limits
from kubegpu.webhook.review import ALWAYS_EXCLUDED, DEFAULT_FAILURE_POLICY, MAX_CONTAINERS, failure_policy_named

DEFAULTS = Limits()
MaxConnections = Annotated[
    int,
    typer.Option(
        help="Open connections at most (kept below the open-file limit); at the cap the longest-idle one is closed."
    ),
]
MaxBody = Annotated[int, typer.Option(help="Largest request body in bytes (larger: 413).")]
Workers = Annotated[int, typer.Option(help="Reviews run at once, each in a worker thread.")]
Queue = Annotated[int, typer.Option(help="Reviews waiting for a worker at most (more: 503).")]
TimeoutSeconds = Annotated[
    int,
    typer.Option(help="The webhook configurations' timeoutSeconds (1-30): reviews are answered before it."),
]
MaxContainers = Annotated[
    int,
    typer.Option(help="GPU pods with more containers (init and ephemeral included) are not reviewed."),
]
Policy = Annotated[
    str,
    typer.Option(
        help="The webhook configurations' failurePolicy, Ignore or Fail: how a pod that cannot be reviewed "
        "in time, or has too many containers, is answered (allowed with a warning, or denied)."
    ),
]

webhook_app = typer.Typer(help="Run the admission webhook that fixes GPU pods at creation.", no_args_is_help=True)


@webhook_app.command("serve")
def serve_command(
    tls_cert: Annotated[Path, typer.Option(help="Serving certificate (PEM).")],
    tls_key: Annotated[Path, typer.Option(help="Private key of the certificate (PEM).")],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "0.0.0.0",
    port: Annotated[int, typer.Option(help="HTTPS port.")] = 8443,
    exclude_namespace: Annotated[
        list[str] | None, typer.Option(help="Namespaces left alone (kube-system always is; repeatable).")
    ] = None,
    deny_severity: Annotated[
        Severity, typer.Option(help="/validate denies findings at or above this severity.")
    ] = Severity.ERROR,
    config_file: Annotated[
        Path | None,
        typer.Option("--config", help="kubegpu.toml for the rules."),
    ] = None,
    max_connections: MaxConnections = DEFAULTS.max_connections,
    max_body_bytes: MaxBody = DEFAULTS.max_body_bytes,
    review_workers: Workers = DEFAULTS.review_workers,
    review_queue: Queue = DEFAULTS.review_queue,
    handshake_timeout: Annotated[
        float, typer.Option(help="Seconds a client has to finish the TLS handshake.")
    ] = DEFAULTS.handshake_timeout,
    header_timeout: Annotated[
        float, typer.Option(help="Seconds a client has to send a request's head.")
    ] = DEFAULTS.header_timeout,
    body_timeout: Annotated[
        float, typer.Option(help="Seconds a client has to send a request's body.")
    ] = DEFAULTS.body_timeout,
    keep_alive_timeout: Annotated[
        float, typer.Option(help="Seconds an idle connection stays open between requests.")
    ] = DEFAULTS.keep_alive_timeout,
    timeout_seconds: TimeoutSeconds = DEFAULTS.timeout_seconds,
    review_deadline: Annotated[
        float | None,
        typer.Option(help="Seconds from arrival to answer, reviewed or not (default: timeout-seconds less 1 s)."),
    ] = None,
    queue_timeout: Annotated[
        float | None,
        typer.Option(
            help="Seconds from arrival a review may wait for a worker, then 503 (default: half the deadline)."
        ),
    ] = None,
    failure_policy: Policy = DEFAULT_FAILURE_POLICY,
    max_containers: MaxContainers = MAX_CONTAINERS,
) -> None:
    """Serve /mutate, /validate, /healthz, /readyz and /metrics over HTTPS until stopped.

    A rotated certificate and key are picked up without a restart.
    """
    try:
        limits = Limits(
            handshake_timeout=handshake_timeout,
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            keep_alive_timeout=keep_alive_timeout,
            max_connections=max_connections,
            max_body_bytes=max_body_bytes,
            review_workers=review_workers,
            review_queue=review_queue,
            timeout_seconds=timeout_seconds,
            review_deadline=review_deadline,
            queue_timeout=queue_timeout,
        )
        lint = load_config(config_file, all_rules()) if config_file else LintConfig()
        config = WebhookConfig(
            lint=lint,
            deny_severity=deny_severity,
            excluded_namespaces=ALWAYS_EXCLUDED | set(exclude_namespace or ()),
            failure_policy=failure_policy_named(failure_policy),
            max_containers=max_containers,
        )
        from kubegpu.webhook.serve import serve  # the server's dependencies only for `serve`

        serve(config, tls_cert, tls_key, host=host, port=port, limits=limits)
    except KubegpuError as err:
        raise fail(err) from err


def gen_webhook(
    image: Annotated[
        str,
        typer.Option(help="Image with kubegpu installed (`kubegpu` on PATH); default: this version's release image."),
    ] = DEFAULT_IMAGE,
    namespace: Annotated[
        str,
        typer.Option("--namespace", "-n", help="Namespace to run in."),
    ] = "kubegpu-system",
    replicas: Annotated[int, typer.Option(help="Webhook replicas.")] = 2,
    failure_policy: Annotated[str, typer.Option(help="Ignore (default) or Fail.")] = DEFAULT_FAILURE_POLICY,
    ca_bundle: Annotated[
        Path | None, typer.Option(help="PEM CA that signed your serving cert (default: cert-manager issues one).")
    ] = None,
    validating: Annotated[
        bool, typer.Option("--validating/--no-validating", help="Also deny pods with findings.")
    ] = True,
    deny_severity: Annotated[Severity, typer.Option(help="Severity that denies.")] = Severity.ERROR,
    max_connections: MaxConnections = DEFAULTS.max_connections,
    max_body_bytes: MaxBody = DEFAULTS.max_body_bytes,
    review_workers: Workers = DEFAULTS.review_workers,
    review_queue: Queue = DEFAULTS.review_queue,
    timeout_seconds: TimeoutSeconds = DEFAULTS.timeout_seconds,
    max_containers: MaxContainers = MAX_CONTAINERS,
    namespace_object: Annotated[
        bool, typer.Option("--namespace-object/--no-namespace-object", help="Also write the Namespace.")
    ] = True,
    mutating: Annotated[
        bool, typer.Option("--mutating/--no-mutating", help="Apply the safe fixes at creation.")
    ] = True,
    select: Annotated[list[str] | None, typer.Option(help=SELECT_HELP)] = None,
    ignore: Annotated[list[str] | None, typer.Option(help=IGNORE_HELP)] = None,
    allow_from: Annotated[
        list[str] | None,
        typer.Option(help="CIDR the NetworkPolicy lets in, e.g. the API server's (repeatable; default any)."),
    ] = None,
) -> None:
    """Namespace, Deployment, Service, PDB, NetworkPolicy, webhook configurations and TLS.

    The container's memory limit is computed from the connection, body and review limits.
    """
    try:
        limits = Limits(
            max_connections=max_connections,
            max_body_bytes=max_body_bytes,
            review_workers=review_workers,
            review_queue=review_queue,
            timeout_seconds=timeout_seconds,
        )
        bundle = None
        if ca_bundle is not None:
            try:
                text = ca_bundle.read_text()
            except OSError as err:
                raise InputError(f"cannot read CA bundle: {err.strerror}", file=str(ca_bundle)) from err
            bundle = encode_ca_bundle(text, str(ca_bundle))
        options = DeployOptions(
            namespace=namespace,
            image=image,
            replicas=replicas,
            failure_policy=failure_policy_named(failure_policy),
            ca_bundle=bundle,
            max_containers=max_containers,
            validating=validating,
            deny_severity=deny_severity.value,
            limits=limits,
            namespace_object=namespace_object,
            mutating=mutating,
            select=rule_names_option(select, all_rules(), "--select") or (),
            ignore=rule_names_option(ignore, all_rules(), "--ignore") or (),
            allow_from=tuple(allow_from or ()),
        )
        typer.echo(render_webhook(options), nl=False)
    except KubegpuError as err:
        raise fail(err) from err


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    app.add_typer(webhook_app, name="webhook")
    gen_app.command("webhook")(gen_webhook)
