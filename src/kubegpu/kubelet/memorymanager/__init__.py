"""Static memory manager model (follows kubernetes v1.35 pkg/kubelet/cm/memorymanager)."""
