"""A pod's scheduling priority, as the Priority admission plugin sets it (kubernetes v1.35
plugin/pkg/admission/priority): spec.priority when set, else its PriorityClass's value, else the value of the
PriorityClass marked globalDefault (the lowest such value when several are), else 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubegpu.errors import InputError
from kubegpu.live.model import PodInfo, PriorityClassInfo

DEFAULT_PRIORITY = 0  # scheduling.DefaultPriorityWhenNoDefaultClassExists


def default_priority(classes: Sequence[PriorityClassInfo]) -> int:
    """The priority a pod without priorityClassName gets."""
    defaults = [c.value for c in classes if c.global_default]
    return min(defaults) if defaults else DEFAULT_PRIORITY


def class_priority(name: str, classes: Sequence[PriorityClassInfo]) -> int | None:
    """The value of the PriorityClass `name`, or None when the snapshot has no such class."""
    return next((c.value for c in classes if c.name == name), None)


def pod_priority(pod: PodInfo, classes: Sequence[PriorityClassInfo]) -> int:
    """spec.priority; else the pod's class's value; else the default. A pod naming a class the snapshot lacks
    was admitted with that class's value, which only spec.priority tells: without it the default is assumed."""
    if pod.priority is not None:
        return pod.priority
    if pod.priority_class:
        value = class_priority(pod.priority_class, classes)
        if value is not None:
            return value
    return default_priority(classes)


def priority_of_class(name: str, classes: Sequence[PriorityClassInfo]) -> int:
    """The value of a PriorityClass named on the command line; InputError naming the classes there are."""
    value = class_priority(name, classes)
    if value is None:
        known = ", ".join(c.name for c in classes) or "none in the snapshot"
        raise InputError(f"--priority-class {name!r}: no such PriorityClass ({known})")
    return value
