"""Device manager topology model (follows kubernetes v1.35 pkg/kubelet/cm/devicemanager)."""
