"""kubegpu.report."""
