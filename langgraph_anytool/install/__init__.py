"""This installation of the package: where pip installed it from, and the `pip install` line for an extra
(`extras.py`). The package is not on PyPI; docs/quickstart.md says how to install it into your own environment."""
