"""Trace readers: openb CSVs, YAML cluster specs, Kubernetes job manifests and a synthetic generator."""
