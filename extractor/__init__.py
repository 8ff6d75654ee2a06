"""Source-grounded extraction and QA of SEC filing sections."""

__version__ = "0.1.0"
