"""kube-scheduler model: framework, NodeResources scoring, FGD GPU policies, gang and topology placement.

Follows kubernetes v1.35 pkg/scheduler and hkust-adsl/kubernetes-scheduler-simulator for the FGD study.
"""
