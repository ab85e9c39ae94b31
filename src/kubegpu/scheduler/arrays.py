"""The numpy array types the scheduler model computes with: one entry per node (or per GPU of a node).

Kind-agnostic, so that the framework and any cluster model share them without importing each other.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
