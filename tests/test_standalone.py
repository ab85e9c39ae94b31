"""The product stands alone: no code or data under src/ looks for the developers' ../shared folder."""

from __future__ import annotations

import re

from tests.paths import REPO_ROOT

SOURCE = REPO_ROOT / "src" / "kubegpu"
LOOKUP = re.compile(r"\.\./shared|[\"']shared[\"']\s*/|/\s*[\"']shared[\"']|parent\s*/\s*[\"']shared")


def test_no_product_file_names_the_shared_folder() -> None:
    offenders = []
    for path in sorted(SOURCE.rglob("*")):
        if path.is_file() and path.suffix in {".py", ".yaml", ".json", ".md", ".toml", ""}:
            for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if LOOKUP.search(line):
                    offenders.append(f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
