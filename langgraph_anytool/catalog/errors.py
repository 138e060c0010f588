"""Errors raised while loading or querying a catalog."""

from __future__ import annotations

from ..sanitize.files import DataFileError


class CatalogError(ValueError):
    """A catalog problem, naming where it is (file, field, tool name)."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None,
                 line: int | None = None) -> None:
        self.source = source
        self.field = field
        self.line = line
        where = ", ".join(p for p in (f"file {source}" if source else "", f"line {line}" if line is not None else "",
                                      f"field {field!r}" if field else "") if p)
        super().__init__(f"{where}: {message}" if where else message)

    @classmethod
    def from_data(cls, exc: DataFileError) -> CatalogError:
        """The same fault (file, line, field) as a `CatalogError`."""
        return cls(exc.message, source=exc.source, field=exc.field, line=exc.line)


class CatalogLoadError(CatalogError):
    """Several files failed to load; every problem is listed, none hidden."""

    def __init__(self, errors: list[CatalogError]) -> None:
        self.errors = errors
        lines = "\n".join(f"  - {e}" for e in errors)
        super(CatalogError, self).__init__(f"{len(errors)} catalog file(s) failed to load:\n{lines}")
        self.source = None
        self.field = None
        self.line = None


class UnknownNameError(CatalogError, KeyError):
    """A category, tool, API or function name that the catalog does not have."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
