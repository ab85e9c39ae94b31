"""kubegpu.fix: apply rule fixes in place, keeping every comment, key and document the fixes did not touch.

`fix_text(name, text, lint, options)` is the engine; the CLI passes a linter bound to its configuration.
"""

from kubegpu.fix.engine import allowed, fix_text
from kubegpu.fix.files import InputFile, fix_input, read_input, read_inputs, write_outcome
from kubegpu.fix.model import AppliedFix, FileOutcome, FixOptions, Remaining
from kubegpu.fix.protocols import EditLike, FindingLike, FixLike, LintFunction
from kubegpu.manifests.atomic import write_atomic

__all__ = [
    "AppliedFix",
    "EditLike",
    "FileOutcome",
    "FindingLike",
    "FixLike",
    "FixOptions",
    "InputFile",
    "LintFunction",
    "Remaining",
    "allowed",
    "fix_input",
    "fix_text",
    "read_input",
    "read_inputs",
    "write_atomic",
    "write_outcome",
]
