"""kubegpu.generate: node, scheduler, queueing, pre-pull and cache configuration, explained.

One module per generator; each returns a `Generated` (files of YAML documents with comments, or
text) that `output` renders and writes and `validate` checks against upstream schemas.
"""
