"""Topology Manager model: NUMA masks merged across hint providers under four policies.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager.
"""
