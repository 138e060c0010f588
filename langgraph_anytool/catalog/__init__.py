"""API catalog: model, loaders, naming and search."""

from .catalog import Catalog
from .errors import CatalogError, CatalogLoadError, UnknownNameError
from .models import Api, Category, Param, Tool

__all__ = ["Api", "Catalog", "CatalogError", "CatalogLoadError", "Category", "Param", "Tool", "UnknownNameError"]
