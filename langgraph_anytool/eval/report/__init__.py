"""`anytool report`: static, offline HTML pages of runs (`write_site`), and `render_run` for notebooks."""

from .site import SiteReport, render_run, thread_record, write_site

__all__ = ["SiteReport", "render_run", "thread_record", "write_site"]
