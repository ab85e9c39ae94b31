"""Exact Kubernetes quantities (cpu millis, bytes): parse and format without floats."""

from kubegpu.units.quantity import Quantity, parse_quantity

__all__ = ["Quantity", "parse_quantity"]
