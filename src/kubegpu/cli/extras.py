"""Which optional extra brings a missing module, so a command without it says what to install.

The extras are those of pyproject.toml, read back from the installed package's metadata (`Requires-Dist:
numpy…; extra == "sim"`): a dependency added to an extra there is known here with no second list.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import typer

from kubegpu.errors import MissingExtraError

# the extra a command needs, where a module belongs to several (numpy: sim and cluster)
COMMAND_EXTRA: dict[str, str] = {"simulate": "sim", "audit": "cluster", "defrag": "cluster", "webhook": "server"}
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _normalise(name: str) -> str:
    """PEP 503: distribution names compare lower-case with runs of -, _ and . as one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def extras_of_module(module: str, requirements: list[str] | None = None) -> list[str]:
    """The extras (in pyproject order) whose requirements name the distribution `module` comes from."""
    if requirements is None:
        from importlib import metadata  # only when a module is missing: it is slow to import

        try:
            requirements = metadata.requires("kubegpu") or []
        except metadata.PackageNotFoundError:  # running from a source tree that was never installed
            return []
    wanted = _normalise(module)
    found: list[str] = []
    for requirement in requirements:
        name, extra = _NAME.match(requirement), _EXTRA.search(requirement)
        if name and extra and _normalise(name.group(1)) == wanted and extra.group(1) not in found:
            found.append(extra.group(1))
    return found


def missing_extra(
    error: ModuleNotFoundError, command: str | None, requirements: list[str] | None = None
) -> MissingExtraError | None:
    """The extra to install for the missing module (the command's own first), or None if no extra has it."""
    extras = extras_of_module((error.name or "").partition(".")[0], requirements)
    if not extras:
        return None
    preferred = COMMAND_EXTRA.get(command or "")
    extra = preferred if preferred in extras else extras[0]
    return MissingExtraError(extra, f"`kubegpu {command}`" if command else "this command")


def unavailable_command(error: MissingExtraError) -> Callable[[], None]:
    """A stand-in for a command whose module cannot load: any call fails with the error naming the extra to
    install, which the command line prints as one line and exit 2 (cli.common.run_app)."""

    def command() -> None:
        raise error

    return command


def register_unavailable(app: typer.Typer, command: str, error: MissingExtraError) -> None:
    """Add `command` to the app as a stand-in that takes any arguments and exits 2 naming the extra."""
    app.command(
        command,
        help=f"Needs the optional '{error.extra}' dependencies: pip install 'kubegpu[{error.extra}]'.",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
    )(unavailable_command(error))
