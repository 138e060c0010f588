"""Building blocks of the data-file schemas: the pydantic models beside each reader derive from `FileModel`, and
`sanitize.files.check_model` validates data against them (the one schema layer: a fault is one line naming the
file, the line and the field).

- `FileModel`: an object of a data file; its declared fields are checked, any other field is kept as it is (files
  written by other tools or later versions carry more).
- `Count`: a finite number ≥ 0 (a token count, seconds, a price); `Fraction`: a finite number in [0, 1].
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Count = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class FileModel(BaseModel):
    """An object of a data file: the declared fields are checked, others are kept as they are."""

    model_config = ConfigDict(extra="allow")


__all__ = ["Count", "FileModel", "Fraction"]
