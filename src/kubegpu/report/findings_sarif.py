"""SARIF 2.1.0 report for GitHub code scanning: rule metadata with help URIs, field-level regions.

Paths are made relative to the working directory with forward slashes, as code scanning expects, and
percent-encoded from the file name's bytes. Messages shown to people are printable, other names valid Unicode,
and `##[` never appears as such (report/escape.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kubegpu import __version__
from kubegpu.lint import Finding, LintResult, all_rules
from kubegpu.report.escape import json_defused, printable, unicode_text

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _uri(file: str) -> str:
    """A relative, percent-encoded URI under the working directory (code scanning's checkout root)."""
    if file.startswith("<"):
        return quote(_name_bytes(file.strip("<>")))
    path = Path(file)
    with contextlib.suppress(ValueError):  # outside the working directory: keep it absolute
        path = path.resolve().relative_to(Path.cwd().resolve())
    if path.is_absolute():
        return "file://" + quote(_name_bytes(path.as_posix()))
    return quote(_name_bytes(path.as_posix()))


def _name_bytes(name: str) -> bytes:
    """The name's bytes: a name that is not UTF-8 keeps them, as os.fsdecode held them; a surrogate no file
    name can hold (a name given as text, not read from a folder) is encoded as itself."""
    try:
        return os.fsencode(name)
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogatepass")


def fingerprint(finding: Finding) -> str:
    """Stable across runs and line moves: the object (kind, namespace, name), the rule and the field path.

    The same Deployment in two namespaces gives two alerts; editing lines above a finding keeps its alert.
    """
    obj = finding.obj
    key = "|".join(
        [
            finding.code,
            _uri(finding.location.file),
            obj.kind if obj else "",
            (obj.namespace or "") if obj else "",
            obj.name if obj else "",
            finding.location.dotted_path,
            "" if obj or finding.location.path else str(finding.location.line),
        ]
    )
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _notifications(result: LintResult) -> list[dict[str, Any]]:
    """The run's notices (a chart not rendered, a remote resource refused, links not followed) as warnings and
    its internal errors as errors: code scanning shows them as the tool's own messages, not as alerts."""
    notes = [{"level": "warning", "message": {"text": printable(n)}} for n in result.notices]
    notes.extend({"level": "error", "message": {"text": printable(e)}} for e in result.internal_errors)
    return notes


def render_sarif(result: LintResult) -> str:
    rules = all_rules()
    index = {rule.code: i for i, rule in enumerate(rules)}
    driver_rules: list[dict[str, Any]] = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.rationale},
            "helpUri": rule.help_uri,
            "help": {"text": rule.rationale, "markdown": f"**{rule.name}**: {rule.rationale}"},
            "defaultConfiguration": {"level": _LEVEL[rule.severity.value]},
            "properties": {"tags": ["kubernetes", "gpu", rule.practice], "fixable": rule.fixable},
        }
        for rule in rules
    ]
    results: list[dict[str, Any]] = []
    for finding in result.findings:
        entry: dict[str, Any] = {
            "ruleId": finding.code,
            "ruleIndex": index[finding.code],
            "level": _LEVEL[finding.severity.value],
            "message": {"text": printable(finding.message)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(finding.location.file)},
                        "region": {"startLine": finding.location.line, "startColumn": finding.location.column},
                    },
                    "logicalLocations": [
                        {
                            "fullyQualifiedName": unicode_text(finding.location.dotted_path) or "(document)",
                            "kind": "member",
                        }
                    ],
                }
            ],
            "partialFingerprints": {"kubegpuFinding/v2": fingerprint(finding)},
        }
        if finding.obj is not None:
            obj = finding.obj
            namespace = None if obj.namespace is None else unicode_text(obj.namespace)
            entry["properties"] = {
                "object": {"kind": unicode_text(obj.kind), "namespace": namespace, "name": unicode_text(obj.name)}
            }
        results.append(entry)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "kubegpu",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://github.com/kubegpu/kubegpu",
                        "rules": driver_rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
                "invocations": [
                    {
                        "executionSuccessful": not result.unreadable and not result.internal_errors,
                        "workingDirectory": {"uri": Path(os.getcwd()).as_uri()},
                        **({"toolExecutionNotifications": notes} if (notes := _notifications(result)) else {}),
                    }
                ],
            }
        ],
    }
    return json_defused(json.dumps(log, indent=2))
