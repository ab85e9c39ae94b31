"""kubegpu: find, explain and fix what starves or strands GPUs on Kubernetes."""

__version__ = "0.1.0"
