"""Read a trace file as text: plain, xz- or gzip-compressed, checked against the folder's SHA256SUMS.

A folder may hold `name.csv` or `name.csv.xz` / `name.csv.gz`; `SHA256SUMS` (sha256sum format) lists the
digest of each uncompressed file, and a file listed there that does not match is refused.
"""

from __future__ import annotations

import gzip
import hashlib
import lzma
from pathlib import Path

from kubegpu.errors import InputError

CHECKSUMS = "SHA256SUMS"
COMPRESSED = {".xz": lzma.decompress, ".gz": gzip.decompress}


def plain_name(path: Path) -> str:
    """`openb_pod_list_default.csv.xz` -> `openb_pod_list_default.csv`."""
    return path.name[: -len(path.suffix)] if path.suffix in COMPRESSED else path.name


def is_csv(path: Path) -> bool:
    """A CSV file, compressed or not."""
    return plain_name(path).lower().endswith(".csv")


def locate(folder: Path, name: str) -> Path:
    """`folder/name`, else its compressed form when that exists; the plain path when neither does."""
    plain = folder / name
    if plain.is_file():
        return plain
    for suffix in COMPRESSED:
        packed = folder / f"{name}{suffix}"
        if packed.is_file():
            return packed
    return plain


def csv_files(folder: Path, prefix: str) -> list[Path]:
    """Every `prefix*.csv` in `folder`, compressed or not, sorted; a plain file wins over a compressed twin."""
    found: dict[str, Path] = {}
    for path in sorted(folder.glob(f"{prefix}*")):
        name = plain_name(path)
        if name.endswith(".csv") and (name not in found or path.name == name):
            found[name] = path
    return [found[name] for name in sorted(found)]


def _expected_digests(folder: Path) -> dict[str, str]:
    listing = folder / CHECKSUMS
    try:
        text = listing.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", file=str(listing)) from None
    digests: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name:
            raise InputError("not a sha256sum line (digest, two spaces, file name)", file=str(listing), line=number)
        digests[name.strip()] = digest.lower()
    return digests


def read_text(path: Path) -> str:
    """The file's text, decompressed when it ends in .xz or .gz; InputError when unreadable or its digest is wrong."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", file=str(path)) from None
    unpack = COMPRESSED.get(path.suffix)
    if unpack is not None:
        try:
            raw = unpack(raw)
        except (lzma.LZMAError, OSError, EOFError) as err:
            raise InputError(f"cannot decompress: {err}", file=str(path)) from None
    expected = _expected_digests(path.parent).get(plain_name(path))
    if expected is not None and hashlib.sha256(raw).hexdigest() != expected:
        raise InputError(
            f"content does not match its sha256 in {CHECKSUMS} (the file is damaged or was changed)", file=str(path)
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"not UTF-8 text (byte {err.start})", file=str(path)) from None
