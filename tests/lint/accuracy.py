"""Recall and precision of `kubegpu lint` on real manifests, against an expert's written verdicts.

Two verdict sets are read: the shared real corpus (`../shared/corpus/real/INDEX.tsv`, files beside it)
and external tables such as `tests/lint/external_verdicts.tsv` (repository, path, commit only: the files
are read from a `fetch` mirror or from clones the user made, never from this project). A verdict lists
the practices a file violates (`V: tag; tag`) and those it follows (`OK: tag`); VOCABULARY maps each tag
to the one rule that reports it. Every file is linted in-process with the default configuration.

Run: `python -m tests.lint.accuracy` (see `--help` and docs/accuracy.md).
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kubegpu.lint import LintConfig, Severity, lint_text
from kubegpu.manifests.placeholders import DEPENDS_ON
from tests.paths import SHARED_DIR

DEFAULT_CORPUS = SHARED_DIR / "corpus" / "real"
DEFAULT_VERDICTS = Path(__file__).resolve().parent / "external_verdicts.tsv"
DEFAULT_MIRROR = Path("/work/.mirror")
DEFAULT_ADJUDICATIONS = Path(__file__).resolve().parent / "adjudications.tsv"


@dataclass(frozen=True)
class Tag:
    """One word of the verdict vocabulary: the rule that reports it, and whether the shared notes use it."""

    rule: str
    base: bool = True  # False: only the external verdicts judge it (the shared notes never name it)


# The one place where the verdict vocabulary meets kubegpu's rule codes (`kubegpu rules` lists them).
VOCABULARY: dict[str, Tag] = {
    "qos-besteffort": Tag("KG101"),
    "qos-burstable": Tag("KG101"),
    "no-cpu-request": Tag("KG101"),
    "guaranteed": Tag("KG101"),
    "cpu-fractional": Tag("KG102"),
    "integer-cpu": Tag("KG102"),
    "no-dshm": Tag("KG201"),
    "dshm": Tag("KG201"),
    "dshm-hostpath": Tag("KG203"),
    "pull-always": Tag("KG301"),
    "pull-policy": Tag("KG301", base=False),
    "latest-tag": Tag("KG302"),
    "mutable-tag": Tag("KG302"),
    "pinned-image": Tag("KG302"),
    "devel-runtime": Tag("KG303"),
    "runtime-image": Tag("KG303", base=False),
    "no-model-cache": Tag("KG401"),
    "model-cache": Tag("KG401"),
    "model-in-image": Tag("KG401"),
    "scale-to-zero": Tag("KG403"),
    "warm": Tag("KG403"),
    "no-gang": Tag("KG501"),
    "no-gang-serving": Tag("KG501"),
    "gang": Tag("KG501"),
    "no-topology": Tag("KG601"),
    "topology": Tag("KG601"),
    # Judged by the external verdicts only.
    "dshm-unsized": Tag("KG202", base=False),
    "dshm-sized": Tag("KG202", base=False),
    "gpu-limit-mismatch": Tag("KG104", base=False),
    "cache-rw-shared": Tag("KG402", base=False),
    "cache-read-only": Tag("KG402", base=False),
    "gang-partial": Tag("KG502", base=False),
}
# A violation that Kubernetes semantics imply: a `:latest` or untagged image without imagePullPolicy is
# pulled with Always, so a note naming only latest-tag does not make KG301 wrong.
IMPLIED: dict[str, tuple[str, ...]] = {"latest-tag": ("KG301",)}
# Tags in the notes that name no rule (facts about the file, or practices kubegpu does not judge).
UNSCORED_TAGS = frozenset(
    {
        "single-replica",
        "binpack",
        "kai-queue",
        "kueue-admission",
        "sidecar",
        "hostnetwork",
    }
)


def scored_rules(base_only: bool) -> frozenset[str]:
    return frozenset(tag.rule for tag in VOCABULARY.values() if tag.base or not base_only)


@dataclass(frozen=True)
class Verdict:
    """One file and the expert's reading of it."""

    label: str  # how reports name the file
    notes: str
    text: str | None  # None: the file could not be read (reason in `missing`)
    missing: str = ""


@dataclass(frozen=True)
class Adjudication:
    """Who is right about one disagreement, decided by the Kubernetes semantics, and why."""

    set: str  # "corpus" or "external"
    file: str  # a fragment of the file's label
    rule: str
    disagreement: str  # "missed", "extra", or "agreed" (both name it and Kubernetes semantics say both are wrong)
    decision: str  # "kubegpu-wrong", "verdict-wrong", "debatable"; "both-wrong" for an agreement
    category: str  # the class of problem (custom-kind, placeholder, multi-node-gang, ...)
    reason: str


DECISIONS = ("kubegpu-wrong", "verdict-wrong", "debatable", "both-wrong")


def load_adjudications(path: Path) -> list[Adjudication]:
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    found = [
        Adjudication(r["set"], r["file"], r["rule"], r["disagreement"], r["decision"], r["class"], r["reason"])
        for r in rows
    ]
    for item in found:
        agreed = item.disagreement == "agreed"
        if (
            item.decision not in DECISIONS
            or item.disagreement not in ("missed", "extra", "agreed")
            or agreed != (item.decision == "both-wrong")
        ):
            raise ValueError(f"{path}: bad decision or disagreement in {item}")
    return found


@dataclass
class FileScore:
    label: str
    expected: frozenset[str]
    fired: frozenset[str]
    implied: frozenset[str]
    follows: frozenset[str]  # rules whose practice the verdict says is followed
    info_only: frozenset[str]  # expected rules that kubegpu reported below the threshold only
    unscored: Counter[str] = field(default_factory=Counter)
    hedged: frozenset[str] = frozenset()  # rules counted as fired by a placeholder hedge alone (--placeholder-hedges)

    @property
    def missed(self) -> frozenset[str]:
        return self.expected - self.fired

    @property
    def extra(self) -> frozenset[str]:
        return self.fired - self.expected - self.implied

    @property
    def agreed(self) -> frozenset[str]:
        return self.expected & self.fired


@dataclass
class SetScore:
    name: str
    set: str  # "corpus" or "external": which adjudications apply
    rules: frozenset[str]
    files: list[FileScore] = field(default_factory=list)
    unavailable: list[Verdict] = field(default_factory=list)
    unknown_tags: Counter[str] = field(default_factory=Counter)

    def counts(self, rule: str | None = None) -> tuple[int, int, int]:
        """True positives, false negatives, false positives (over all rules when `rule` is None)."""
        tp = fn = fp = 0
        for score in self.files:
            keep = (lambda code: code == rule) if rule else (lambda code: True)
            tp += sum(1 for code in score.expected & score.fired if keep(code))
            fn += sum(1 for code in score.missed if keep(code))
            fp += sum(1 for code in score.extra if keep(code))
        return tp, fn, fp

    def adjudicated_counts(
        self, adjudications: Sequence[Adjudication], rule: str | None = None
    ) -> tuple[int, int, int]:
        """Counts after correcting the verdicts that Kubernetes semantics prove wrong (debatable ones stay).

        A true positive that both got wrong (the verdict names a violation that the operator's or the API
        server's behaviour rules out, and kubegpu reports it) becomes a false positive.
        """
        tp, fn, fp = self.counts(rule)
        for score in self.files:
            for code in score.agreed if rule is None else score.agreed & {rule}:
                if decision(adjudications, self.set, score.label, code, "agreed") == "both-wrong":
                    tp, fp = tp - 1, fp + 1
            for code in score.missed if rule is None else score.missed & {rule}:
                if decision(adjudications, self.set, score.label, code, "missed") == "verdict-wrong":
                    fn -= 1
            for code in score.extra if rule is None else score.extra & {rule}:
                if decision(adjudications, self.set, score.label, code, "extra") == "verdict-wrong":
                    fp, tp = fp - 1, tp + 1
        return tp, fn, fp


def find_adjudication(
    adjudications: Sequence[Adjudication], set_name: str, label: str, rule: str, disagreement: str
) -> Adjudication | None:
    for item in adjudications:
        if (item.set, item.rule, item.disagreement) == (set_name, rule, disagreement) and item.file in label:
            return item
    return None


def decision(adjudications: Sequence[Adjudication], set_name: str, label: str, rule: str, disagreement: str) -> str:
    item = find_adjudication(adjudications, set_name, label, rule, disagreement)
    return item.decision if item else "not adjudicated"


def split_top(text: str, separator: str) -> Iterator[str]:
    """Split at `separator` outside parentheses (notes write `no-topology (2 x 8; rack)`)."""
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char == separator and depth == 0:
            yield text[start:index]
            start = index + 1
    yield text[start:]


def tags(notes: str, prefix: str) -> list[str]:
    """The tags of the `V:` or `OK:` section(s) of a notes cell."""
    found = []
    for section in split_top(notes, "|"):
        section = section.strip()
        if not section.startswith(prefix):
            continue
        for item in split_top(section[len(prefix) :], ";"):
            word = item.strip().split("(", 1)[0].split()
            if word:
                found.append(word[0])
    return found


def score_file(
    verdict: Verdict, rules: frozenset[str], threshold: Severity, unknown: Counter[str], hedges: bool = False
) -> FileScore:
    assert verdict.text is not None
    violations, follows = tags(verdict.notes, "V:"), tags(verdict.notes, "OK:")
    for tag in violations + follows:
        if tag not in VOCABULARY and tag not in UNSCORED_TAGS:
            unknown[tag] += 1
    expected = {VOCABULARY[t].rule for t in violations if t in VOCABULARY} & rules
    follow_rules = {VOCABULARY[t].rule for t in follows if t in VOCABULARY} & rules
    # An implied violation stands unless the verdict says the practice is followed (explicit IfNotPresent).
    implied = {code for t in violations for code in IMPLIED.get(t, ())} - follow_rules
    result = lint_text(verdict.label, verdict.text, LintConfig())
    fired, below, hedged, unscored = set(), set(), set(), Counter[str]()
    for finding in result.findings:
        if finding.code not in rules:
            unscored[finding.code] += 1
        elif finding.severity.rank >= threshold.rank:
            fired.add(finding.code)
        else:
            below.add(finding.code)
            if hedges and DEPENDS_ON in finding.message:
                hedged.add(finding.code)
    # A hedge claims nothing by itself: it agrees with a verdict that names the violation (the verdict assumed a
    # rendered value), and is no finding at all where the verdict names none.
    hedged = (hedged & expected) - fired
    fired |= hedged
    return FileScore(
        label=verdict.label,
        expected=frozenset(expected),
        fired=frozenset(fired),
        implied=frozenset(implied - expected),
        follows=frozenset(follow_rules),
        info_only=frozenset((expected - fired) & below),
        unscored=unscored,
        hedged=frozenset(hedged),
    )


def score_set(
    name: str,
    set_name: str,
    verdicts: Sequence[Verdict],
    base_only: bool,
    threshold: Severity,
    hedges: bool = False,
) -> SetScore:
    result = SetScore(name, set_name, scored_rules(base_only))
    for verdict in verdicts:
        if verdict.text is None:
            result.unavailable.append(verdict)
        else:
            result.files.append(score_file(verdict, result.rules, threshold, result.unknown_tags, hedges))
    return result


def corpus_verdicts(corpus: Path) -> list[Verdict]:
    """The shared corpus: INDEX.tsv's `notes` for each file kept beside it."""
    with (corpus / "INDEX.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    verdicts = []
    for row in rows:
        path = corpus / row["local_file"]
        text = path.read_text(encoding="utf-8") if path.is_file() else None
        verdicts.append(Verdict(row["local_file"], row["notes"], text, "" if text is not None else f"{path} absent"))
    return verdicts


def mirror_git_dir(mirror: Path, repo: str) -> Path | None:
    """Where the `fetch` tool keeps a repository (`owner+name/repo`, a bare git directory)."""
    base = mirror / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def read_external(row: dict[str, str], mirror: Path | None, files: Path | None) -> Verdict:
    repo, path, commit = row["repo"], row["path"], row["commit"]
    label = f"{repo}/{path}@{commit[:12]}"
    if files is not None:
        local = files / repo / path
        if local.is_file():
            return Verdict(label, row["notes"], local.read_text(encoding="utf-8"))
    if mirror is not None:
        git_dir = mirror_git_dir(mirror, repo)
        if git_dir is not None:
            shown = subprocess.run(
                ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                capture_output=True,
                check=False,
            )
            if shown.returncode == 0:
                return Verdict(label, row["notes"], shown.stdout.decode("utf-8"))
            return Verdict(
                label, row["notes"], None, f"not in the mirror at that commit: {shown.stderr.decode()[:120]}"
            )
    return Verdict(label, row["notes"], None, "repository neither mirrored nor under --files")


def external_verdicts(table: Path, mirror: Path | None, files: Path | None) -> list[Verdict]:
    with table.open(encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        rows = [row for row in reader if not row["repo"].startswith("#")]
    return [read_external(row, mirror, files) for row in rows]


def ratio(numerator: int, denominator: int) -> str:
    return f"{100 * numerator / denominator:.1f} %" if denominator else "n/a"


def render(score: SetScore, adjudications: Sequence[Adjudication]) -> str:
    lines = [f"## {score.name}", ""]
    lines.append(
        f"{len(score.files)} file(s) scored, {len(score.unavailable)} unavailable; "
        f"rules scored: {', '.join(sorted(score.rules))}"
    )
    lines += [
        "",
        "| rule | TP | missed | extra | recall | precision | adjudicated recall | adjudicated precision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for rule in [*sorted(score.rules), None]:
        tp, fn, fp = score.counts(rule)
        if not (tp or fn or fp) and rule is not None:
            continue
        atp, afn, afp = score.adjudicated_counts(adjudications, rule)
        name = rule or "**all**"
        lines.append(
            f"| {name} | {tp} | {fn} | {fp} | {ratio(tp, tp + fn)} | {ratio(tp, tp + fp)} "
            f"| {ratio(atp, atp + afn)} | {ratio(atp, atp + afp)} |"
        )
    lines += [
        "",
        "Adjudicated: verdicts that Kubernetes semantics prove wrong are corrected; debatable ones count as written.",
        "",
        "Disagreements (missed: the verdict names it, kubegpu did not report it at the "
        "threshold; extra: kubegpu reported it, the verdict does not name it; agreed: both name it and "
        "the adjudication shows both wrong):",
        "",
    ]
    classes: Counter[tuple[str, str]] = Counter()
    for file in score.files:
        items = [(code, "missed") for code in sorted(file.missed)] + [(code, "extra") for code in sorted(file.extra)]
        items += [
            (code, "agreed")
            for code in sorted(file.agreed)
            if find_adjudication(adjudications, score.set, file.label, code, "agreed") is not None
        ]
        for code, kind in items:
            note = " (info only)" if kind == "missed" and code in file.info_only else ""
            note += " (verdict: practice followed)" if kind == "extra" and code in file.follows else ""
            note += " (placeholder hedge)" if kind != "missed" and code in file.hedged else ""
            item = find_adjudication(adjudications, score.set, file.label, code, kind)
            why = f"{item.decision}, {item.category}: {item.reason}" if item else "not adjudicated"
            classes[(item.decision, item.category) if item else ("not adjudicated", "-")] += 1
            lines.append(f"- {file.label}: {kind} {code}{note}: {why}")
    if classes:
        lines += ["", "| decision | class | disagreements |", "|---|---|---|"]
        lines += [f"| {d} | {c} | {n} |" for (d, c), n in sorted(classes.items(), key=lambda kv: (-kv[1], kv[0]))]
    if score.unavailable:
        lines += ["", "Unavailable (not scored):", ""]
        lines += [f"- {v.label}: {v.missing}" for v in score.unavailable]
    unscored = Counter[str]()
    for file in score.files:
        unscored.update(file.unscored)
    if unscored:
        lines += [
            "",
            "Findings of rules the verdicts do not judge: "
            + ", ".join(f"{code} x{n}" for code, n in sorted(unscored.items())),
        ]
    if score.unknown_tags:
        lines += [
            "",
            "Tags with no rule in the vocabulary: "
            + ", ".join(f"{tag} x{n}" for tag, n in sorted(score.unknown_tags.items())),
        ]
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.lint.accuracy", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        default=DEFAULT_CORPUS,
        help="shared corpus folder holding INDEX.tsv (default: ../shared/corpus/real)",
    )
    parser.add_argument(
        "--verdicts",
        type=Path,
        action="append",
        help="external verdict table (repo, path, commit, kinds, notes); repeatable "
        "(default: every tests/lint/*_verdicts.tsv: external, further, holdout)",
    )
    parser.add_argument(
        "--mirror",
        type=Path,
        default=DEFAULT_MIRROR,
        help="folder of fetched repositories, owner+name/repo (default: /work/.mirror)",
    )
    parser.add_argument(
        "--files", type=Path, help="folder of clones, FILES/owner/name checked out at the table's commit"
    )
    parser.add_argument(
        "--adjudications",
        type=Path,
        default=DEFAULT_ADJUDICATIONS,
        help="who is right about each known disagreement (default: tests/lint/adjudications.tsv)",
    )
    parser.add_argument("--only", choices=("corpus", "external"), help="score one set only")
    parser.add_argument(
        "--placeholder-hedges",
        choices=("miss", "count"),
        default="miss",
        help="an info finding that says its check depends on a placeholder's rendered value: 'miss' (default) "
        "counts it as not reported, 'count' as reporting the violation the verdict names (the verdict assumed "
        "a rendered value)",
    )
    parser.add_argument(
        "--min-severity",
        choices=[s.value for s in Severity],
        default="warning",
        help="lowest severity that counts as reporting a violation (default: warning)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    threshold = Severity(args.min_severity)
    hedges = args.placeholder_hedges == "count"
    adjudications = load_adjudications(args.adjudications)
    scored = 0
    if args.only != "external":
        if (args.corpus / "INDEX.tsv").is_file():
            corpus = score_set(
                f"shared corpus ({args.corpus})", "corpus", corpus_verdicts(args.corpus), True, threshold, hedges
            )
            print(render(corpus, adjudications))
            scored += 1
        else:
            print(f"skipped the shared corpus: {args.corpus / 'INDEX.tsv'} is absent", file=sys.stderr)
    if args.only != "corpus":
        mirror = args.mirror if args.mirror.is_dir() else None
        if mirror is None and args.files is None:
            print(
                f"skipped the external verdicts: mirror {args.mirror} is absent and no --files given", file=sys.stderr
            )
        else:
            for table in args.verdicts or sorted(DEFAULT_VERDICTS.parent.glob("*_verdicts.tsv")):
                verdicts = external_verdicts(table, mirror, args.files)
                external = score_set(
                    f"external verdicts ({table.name})", "external", verdicts, False, threshold, hedges
                )
                print(render(external, adjudications))
                scored += 1
    if not scored:
        print("nothing scored", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
