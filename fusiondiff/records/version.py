"""fusiondiff's version, on its own so that any module can name it without importing the package's
front (``fusiondiff.capture`` imports the live side)."""

__version__ = "0.1.0"
