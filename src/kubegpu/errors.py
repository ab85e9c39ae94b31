"""One exception hierarchy for kubegpu; every user-facing error names file, line and a plain sentence.

The CLI turns a `KubegpuError` into one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations


class KubegpuError(Exception):
    """An error the user can act on: where it is (file, line) and what is wrong."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file if self.line is None else f"{self.file}:{self.line}"
            where += ": "
        return f"{where}{self.message}"


class InputError(KubegpuError):
    """Input that cannot be read or does not mean anything: a bad file, document or value."""


class QuantityError(InputError):
    """A string that is not a Kubernetes quantity."""


class ConfigError(KubegpuError):
    """A kubegpu configuration (kubegpu.toml, pyproject, options) that is invalid."""


class ModelError(KubegpuError):
    """A model (kubelet, scheduler, topology) was given a state it cannot represent."""


class MissingExtraError(KubegpuError):
    """A command needs optional dependencies that are not installed: names the extra that brings them."""

    def __init__(self, extra: str, what: str) -> None:
        super().__init__(f"{what} needs the optional '{extra}' dependencies: pip install 'kubegpu[{extra}]'")
        self.extra = extra
