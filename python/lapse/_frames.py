"""to_dataframe() of Profile and Run: the report model's rows as a pandas DataFrame."""

from __future__ import annotations

from typing import Any, Sequence


def data_frame(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> Any:
    """A pandas DataFrame of rows, with columns in this order (also when empty)."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("lapse: to_dataframe() needs pandas, which is not installed here "
                          "(pip install pandas)") from e
    return pandas.DataFrame(list(rows), columns=list(columns))
