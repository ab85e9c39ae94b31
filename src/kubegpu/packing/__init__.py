"""Upper bounds on GPU allocation: the most GPU any placement of given tasks on given nodes can occupy.

A linear program over node classes and packing patterns, solved by column generation with exact pricing
(HiGHS); the bound it reports is a Lagrangian dual bound, valid whenever the solver stops.
"""
