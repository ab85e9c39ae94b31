"""kubegpu.defrag: the fewest evictions that let a waiting GPU pod or gang run, each evicted pod placed again.

What may be evicted (`drain`, `budgets`, `priority`, `gangs`), the instance (`problem`), its lower bound (`lower`),
the integer program (`ilp`) and the bounded search over it (`search`), the replay of a plan through the scheduler
and kubelet models (`replay`), and the plan (`plan`) with its renderings (`render`). Entry point:
`kubegpu.defrag.plan.make_plan`. Nothing is imported here (HiGHS and numpy are the `cluster` or `sim` extra).
"""
