"""kubegpu.webhook."""
