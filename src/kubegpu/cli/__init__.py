"""kubegpu.cli."""
