"""Would the kubelet start on this node with this configuration? The first start-up error or None.

Follows kubernetes v1.35 kubelet start-up (config validation, then container-manager creation).
"""

from __future__ import annotations

from kubegpu.kubelet.config import KubeletConfig, KubeletStartupError
from kubegpu.kubelet.node_state import NodeState
from kubegpu.topology.model import NodeTopology


def check_startup(node: NodeTopology, config: KubeletConfig) -> KubeletStartupError | None:
    """The KubeletStartupError NodeState(node, config) would raise, or None when it starts."""
    errors = config.validation_errors()
    if errors:
        message = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        return KubeletStartupError("kubelet config validation", message, file=config.source)
    try:
        NodeState(node, config)
    except KubeletStartupError as err:
        return err
    return None
