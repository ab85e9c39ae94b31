"""The security settings of the pods and containers kubegpu generates: the restricted Pod Security Standard
(Kubernetes v1.35 pod-security-admission) wherever the workload's job allows, in one place.

A container that sets all of `restricted_context` meets the restricted profile on its own, whatever pod it is
added to. What a workload needs beyond it (a hostPath, running as root to write one) is decided, and explained,
by its generator; tests/security/test_generated_pss.py lists it per workload.
"""

from __future__ import annotations

from typing import Any

NOBODY = 65534  # a user no image needs to know (a numeric user needs no /etc/passwd entry)
RUNTIME_DEFAULT_SECCOMP = {"type": "RuntimeDefault"}


def restricted_context(run_as_user: int | None = NOBODY, read_only_root: bool = True) -> dict[str, Any]:
    """A container securityContext: no privilege escalation, every capability dropped, the runtime's default
    seccomp profile, a read-only root filesystem and a non-root user. `run_as_user=None` leaves the image's user
    (for a container that must be root, which the restricted profile then refuses: its generator says why)."""
    context: dict[str, Any] = {"allowPrivilegeEscalation": False}
    if read_only_root:
        context["readOnlyRootFilesystem"] = True
    if run_as_user is not None:
        context["runAsNonRoot"] = True
        context["runAsUser"] = run_as_user
    context["capabilities"] = {"drop": ["ALL"]}
    context["seccompProfile"] = dict(RUNTIME_DEFAULT_SECCOMP)
    return context


def read_only_mount(name: str, mount_path: str, host: bool = False) -> dict[str, Any]:
    """A read-only volumeMount; from a host folder (`host`), recursively read-only where the runtime can do it.

    `recursiveReadOnly: IfPossible` (VolumeMount, Kubernetes v1.30+, on by default from v1.31) also makes the
    mounts below the folder read-only, which a plain `readOnly` does not; it needs `readOnly: true` and no
    mountPropagation other than None, and falls back to a plain read-only mount where the runtime cannot.
    """
    mount: dict[str, Any] = {"name": name, "mountPath": mount_path, "readOnly": True}
    if host:
        mount["recursiveReadOnly"] = "IfPossible"
    return mount
