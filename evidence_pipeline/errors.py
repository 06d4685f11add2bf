"""Errors that name the file or the setting at fault."""

from __future__ import annotations


class EvidencePipelineError(Exception):
    """Base class of every error this package raises on purpose."""


class ParseError(EvidencePipelineError):
    """A document could not be read. The message names the file and the reason."""

    def __init__(self, path: str, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class StoreError(EvidencePipelineError):
    """The vector store could not be opened or written."""


class SettingsError(EvidencePipelineError, ValueError):
    """An environment variable or option holds a value the pipeline cannot use; the message
    names the variable."""
