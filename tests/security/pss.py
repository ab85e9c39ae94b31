"""The Pod Security Standards' baseline and restricted profiles, checked on a pod spec as Pod Security Admission
checks them: the checks of k8s.io/pod-security-admission v0.35 (Kubernetes v1.35) policy/check_*.go, each at
its newest version, written from their documented rules (tests/security/data/pss-v1.35.json holds upstream's
own pass and fail fixtures, which tests/security/test_generated_pss.py runs through this).

`violations(pod_spec, metadata, level)` names each check the pod fails at that level, with upstream's check ID.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

BASELINE, RESTRICTED = "baseline", "restricted"

_BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
_SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.ip_local_reserved_ports",  # 1.27
        "net.ipv4.tcp_keepalive_time",  # 1.29
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",  # 1.32
        "net.ipv4.tcp_wmem",
    }
)
_SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})  # 1.31
_PROFILE_TYPES = frozenset({"RuntimeDefault", "Localhost"})
# Inline volume sources the restricted profile allows; any other source is refused (hostPath among them).
_RESTRICTED_VOLUMES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "image",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
_APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"

Spec = Mapping[str, Any]


def _containers(spec: Spec) -> Iterator[Spec]:
    """Init containers, containers and ephemeral containers, as the policy visits them."""
    for field in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(field) or ()


def _context(container: Spec) -> Spec:
    return container.get("securityContext") or {}


def _pod_context(spec: Spec) -> Spec:
    return spec.get("securityContext") or {}


def _all_contexts(spec: Spec) -> list[Spec]:
    """The pod's securityContext and each container's."""
    return [_pod_context(spec), *(_context(c) for c in _containers(spec))]


def _bad_profiles(spec: Spec, field: str) -> list[Any]:
    """The types of the `field` profiles (appArmorProfile, seccompProfile) set to neither RuntimeDefault nor
    Localhost, in the pod's or a container's securityContext."""
    return [
        ctx[field].get("type")
        for ctx in _all_contexts(spec)
        if ctx.get(field) is not None and ctx[field].get("type") not in _PROFILE_TYPES
    ]


def _windows(spec: Spec) -> bool:
    return (spec.get("os") or {}).get("name") == "windows"


def _user_namespace(spec: Spec) -> bool:
    """hostUsers: false: from 1.35, runAsNonRoot, runAsUser and baseline procMount are relaxed for such pods."""
    return spec.get("hostUsers") is False


def _names(containers: list[Spec]) -> str:
    return ", ".join(repr(c.get("name")) for c in containers)


# ----------------------------------------------------------------------------------------------- baseline checks


def host_namespaces(spec: Spec, metadata: Spec) -> str | None:
    shared = [field for field in ("hostNetwork", "hostPID", "hostIPC") if spec.get(field) is True]
    return f"shares the host's namespaces: {', '.join(shared)}" if shared else None


def privileged(spec: Spec, metadata: Spec) -> str | None:
    bad = [c for c in _containers(spec) if _context(c).get("privileged") is True]
    return f"privileged containers {_names(bad)}" if bad else None


def capabilities_baseline(spec: Spec, metadata: Spec) -> str | None:
    bad = [
        c
        for c in _containers(spec)
        if any(cap not in _BASELINE_CAPABILITIES for cap in (_context(c).get("capabilities") or {}).get("add") or ())
    ]
    return f"containers {_names(bad)} add capabilities beyond the default set" if bad else None


def host_path_volumes(spec: Spec, metadata: Spec) -> str | None:
    bad = [v.get("name") for v in spec.get("volumes") or () if v.get("hostPath") is not None]
    return f"hostPath volumes {bad}" if bad else None


def host_ports(spec: Spec, metadata: Spec) -> str | None:
    bad = [c for c in _containers(spec) if any((p.get("hostPort") or 0) != 0 for p in c.get("ports") or ())]
    return f"containers {_names(bad)} use host ports" if bad else None


def app_armor_profile(spec: Spec, metadata: Spec) -> str | None:
    bad = _bad_profiles(spec, "appArmorProfile")
    for key, value in (metadata.get("annotations") or {}).items():
        if key.startswith(_APPARMOR_ANNOTATION) and not (
            value in ("", "runtime/default") or value.startswith("localhost/")
        ):
            bad.append(f"{key}={value}")
    return f"AppArmor profiles {bad}" if bad else None


def se_linux_options(spec: Spec, metadata: Spec) -> str | None:
    for ctx in _all_contexts(spec):
        options = ctx.get("seLinuxOptions")
        if options is None:
            continue
        if options.get("type", "") not in _SELINUX_TYPES or options.get("user") or options.get("role"):
            return f"SELinux options {options}"
    return None


def proc_mount_baseline(spec: Spec, metadata: Spec) -> str | None:
    return None if _user_namespace(spec) else proc_mount_restricted(spec, metadata)


def seccomp_profile_baseline(spec: Spec, metadata: Spec) -> str | None:
    bad = _bad_profiles(spec, "seccompProfile")
    return f"seccomp profiles {bad}" if bad else None


def sysctls(spec: Spec, metadata: Spec) -> str | None:
    bad = [s.get("name") for s in _pod_context(spec).get("sysctls") or () if s.get("name") not in _SAFE_SYSCTLS]
    return f"sysctls {bad}" if bad else None


def windows_host_process(spec: Spec, metadata: Spec) -> str | None:
    if any((ctx.get("windowsOptions") or {}).get("hostProcess") is True for ctx in _all_contexts(spec)):
        return "windowsOptions.hostProcess"
    return None


def host_probes_and_lifecycle(spec: Spec, metadata: Spec) -> str | None:
    bad = []
    for c in _containers(spec):
        handlers = [c.get(probe) for probe in ("livenessProbe", "readinessProbe", "startupProbe")]
        handlers += [(c.get("lifecycle") or {}).get(hook) for hook in ("postStart", "preStop")]
        for handler in handlers:
            for action in ("httpGet", "tcpSocket"):
                if ((handler or {}).get(action) or {}).get("host"):
                    bad.append(c.get("name"))
    return f"containers {bad} set a probe or lifecycle host" if bad else None


# --------------------------------------------------------------------------------------------- restricted checks


def restricted_volumes(spec: Spec, metadata: Spec) -> str | None:
    bad = []
    for volume in spec.get("volumes") or ():
        sources = {key for key, value in volume.items() if key != "name" and value is not None}
        # no source at all: the API server's defaulting makes it an emptyDir before admission sees it
        if sources and not sources & _RESTRICTED_VOLUMES:
            bad.append(volume.get("name"))
    return f"volumes {bad} of types the restricted profile refuses" if bad else None


def allow_privilege_escalation(spec: Spec, metadata: Spec) -> str | None:
    if _windows(spec):
        return None
    bad = [c for c in _containers(spec) if _context(c).get("allowPrivilegeEscalation") is not False]
    return f"containers {_names(bad)} must set allowPrivilegeEscalation: false" if bad else None


def run_as_non_root(spec: Spec, metadata: Spec) -> str | None:
    if _user_namespace(spec):
        return None
    pod = _pod_context(spec).get("runAsNonRoot")
    if pod is False:
        return "the pod sets runAsNonRoot: false"
    explicit = [c for c in _containers(spec) if _context(c).get("runAsNonRoot") is False]
    if explicit:
        return f"containers {_names(explicit)} set runAsNonRoot: false"
    unset = [c for c in _containers(spec) if _context(c).get("runAsNonRoot") is None]
    if pod is not True and unset:
        return f"the pod or containers {_names(unset)} must set runAsNonRoot: true"
    return None


def run_as_user(spec: Spec, metadata: Spec) -> str | None:
    if _user_namespace(spec):
        return None
    return "runAsUser: 0" if any(ctx.get("runAsUser") == 0 for ctx in _all_contexts(spec)) else None


def seccomp_profile_restricted(spec: Spec, metadata: Spec) -> str | None:
    if _windows(spec):
        return None
    explicitly_bad = seccomp_profile_baseline(spec, metadata)
    if explicitly_bad:
        return explicitly_bad
    if _pod_context(spec).get("seccompProfile") is not None:
        return None
    unset = [c for c in _containers(spec) if _context(c).get("seccompProfile") is None]
    return f"the pod or containers {_names(unset)} must set a seccomp profile" if unset else None


def capabilities_restricted(spec: Spec, metadata: Spec) -> str | None:
    if _windows(spec):
        return None
    problems = []
    for c in _containers(spec):
        capabilities = _context(c).get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or ()):
            problems.append(f"{c.get('name')!r} must drop ALL")
        if any(cap != "NET_BIND_SERVICE" for cap in capabilities.get("add") or ()):
            problems.append(f"{c.get('name')!r} may add only NET_BIND_SERVICE")
    return "; ".join(problems) or None


def proc_mount_restricted(spec: Spec, metadata: Spec) -> str | None:
    bad = [c for c in _containers(spec) if _context(c).get("procMount") not in (None, "Default")]
    return f"containers {_names(bad)} set procMount" if bad else None


# Upstream's check IDs, their level, and the baseline checks a restricted one replaces at the restricted level.
CHECKS: Mapping[str, tuple[str, Callable[[Spec, Spec], str | None]]] = {
    "hostNamespaces": (BASELINE, host_namespaces),
    "privileged": (BASELINE, privileged),
    "capabilities_baseline": (BASELINE, capabilities_baseline),
    "hostPathVolumes": (BASELINE, host_path_volumes),
    "hostPorts": (BASELINE, host_ports),
    "appArmorProfile": (BASELINE, app_armor_profile),
    "seLinuxOptions": (BASELINE, se_linux_options),
    "procMount": (BASELINE, proc_mount_baseline),
    "seccompProfile_baseline": (BASELINE, seccomp_profile_baseline),
    "sysctls": (BASELINE, sysctls),
    "windowsHostProcess": (BASELINE, windows_host_process),
    "hostProbesAndHostLifecycle": (BASELINE, host_probes_and_lifecycle),
    "restrictedVolumes": (RESTRICTED, restricted_volumes),
    "allowPrivilegeEscalation": (RESTRICTED, allow_privilege_escalation),
    "runAsNonRoot": (RESTRICTED, run_as_non_root),
    "runAsUser": (RESTRICTED, run_as_user),
    "seccompProfile_restricted": (RESTRICTED, seccomp_profile_restricted),
    "capabilities_restricted": (RESTRICTED, capabilities_restricted),
    "procMount_restricted": (RESTRICTED, proc_mount_restricted),
}
OVERRIDES: Mapping[str, str] = {
    "restrictedVolumes": "hostPathVolumes",
    "seccompProfile_restricted": "seccompProfile_baseline",
    "capabilities_restricted": "capabilities_baseline",
    "procMount_restricted": "procMount",
}


def violations(spec: Spec, metadata: Spec, level: str) -> dict[str, str]:
    """Check ID -> what fails, for each check of `level` (baseline, or restricted with baseline) the pod fails."""
    ids = [check for check, (check_level, _) in CHECKS.items() if check_level == BASELINE or level == RESTRICTED]
    if level == RESTRICTED:
        ids = [check for check in ids if check not in OVERRIDES.values()]
    found = {}
    for check in ids:
        problem = CHECKS[check][1](spec, metadata)
        if problem is not None:
            found[check] = problem
    return found
