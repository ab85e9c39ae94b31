"""GPU placement for the FGD study: per-GPU milli accounting, fragmentation metric and the six policies.

Follows hkust-adsl/kubernetes-scheduler-simulator (pkg/simulator/plugin, pkg/utils/frag.go, Open-Gpu-Share).
"""
