"""kubegpu.kubelet."""
