"""edgebench: structured-JSON accuracy and on-device cost of small language models."""

__version__ = "0.2.0"
