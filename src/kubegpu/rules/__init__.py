"""Lint rules only, one module or package per practice; each module's `RULES` is listed in `kubegpu.lint.registry`.

A rule reads the interface (`kubegpu.ruleapi`) and the models, never the engine that runs it (`kubegpu.lint`).
"""
