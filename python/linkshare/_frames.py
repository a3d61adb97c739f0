"""The one place where the compiled module's column buffers become pandas objects.

Each column comes as ``(name, kind, data, extra)`` (see ``crates/python/src/convert.rs``):
integers (int64, with a mask of missing values), floats (float64, NaN missing),
booleans (with a mask) and names (categorical codes with their labels).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _column(kind, data, extra):
    if kind == "float":
        return np.frombuffer(data, dtype="<f8").copy()
    if kind == "int":
        values = np.frombuffer(data, dtype="<i8").copy()
        if extra is None:
            return values
        return pd.arrays.IntegerArray(values, np.frombuffer(extra, dtype=np.uint8).astype(bool))
    if kind == "bool":
        values = np.frombuffer(data, dtype=np.uint8).astype(bool)
        if extra is None:
            return values
        return pd.arrays.BooleanArray(values, np.frombuffer(extra, dtype=np.uint8).astype(bool))
    if kind == "text":
        codes = np.frombuffer(data, dtype="<i4").copy()
        return pd.Categorical.from_codes(codes, categories=pd.Index(list(extra), dtype=object))
    raise ValueError(f"unknown column kind {kind!r}")


def frame(columns) -> pd.DataFrame:
    """A DataFrame from the compiled module's columns, in their order."""
    return pd.DataFrame({name: _column(kind, data, extra) for name, kind, data, extra in columns})


def floats(data: bytes) -> np.ndarray:
    """An array of float64 from little-endian bytes."""
    return np.frombuffer(data, dtype="<f8")
