"""Discrete-event GPU cluster simulator: traces, event loop, gang and topology placement, metrics.

Builds on kubegpu.scheduler (kube-scheduler v1.35 framework and the FGD-study policies).
"""
