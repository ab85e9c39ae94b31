"""Rule options: one declaration per option (name, help, what a valid value is, validator, default) that the
configuration reader checks values against and the rule reads values through.

Label keys and values follow kubernetes v1.35 apimachinery `IsQualifiedName` and `IsValidLabelValue`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from kubegpu.errors import QuantityError
from kubegpu.units import parse_quantity

T = TypeVar("T")


class OptionValueError(ValueError):
    """A value a validator refuses; its text (possibly empty) says why, besides what is expected."""


class HasOptions(Protocol):
    """What a rule reads its options from (RuleContext): rule name -> option name -> checked value."""

    @property
    def options(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class RuleOption(Generic[T]):
    """One option of a rule (`[rules.<name>]` in kubegpu.toml).

    `parse` turns a configured value into the value the rule reads, or raises OptionValueError; applied to its
    own result it returns it unchanged, so a checked configuration can be checked again. `default` is what the
    rule reads when the option is not given; `default_text` says it in words for the docs when it is not a value.
    """

    name: str
    help: str
    expected: str  # what a valid value is: "a whole number from 1 to 8"
    example: str  # a valid value written in TOML: '"16Gi"'
    parse: Callable[[object], T]
    default: T
    default_text: str = ""

    def check(self, value: object, where: str) -> T:
        """`value` checked and normalised, else OptionValueError in one line: where, what is expected and given."""
        try:
            return self.parse(value)
        except OptionValueError as err:
            why = f" ({err})" if str(err) else ""
            raise OptionValueError(
                f"{where}: expected {self.expected} (e.g. {self.example}); got {toml_text(value)}{why}"
            ) from None

    def given(self, ctx: HasOptions, rule: str) -> bool:
        per_rule = ctx.options.get(rule)
        return per_rule is not None and self.name in per_rule

    def read(self, ctx: HasOptions, rule: str) -> T:
        """The value `rule` was configured with (checked when the configuration was built), else the default."""
        per_rule = ctx.options.get(rule)
        if per_rule is None or self.name not in per_rule:
            return self.default
        value: T = per_rule[self.name]
        return value

    @property
    def doc(self) -> str:
        """One Markdown list item for the rule's page and the configuration page."""
        default = self.default_text or ("none" if self.default is None else toml_text(self.default))
        example = f"`{self.name} = {self.example}`"
        return f"`{self.name}`: {self.help}. Expects {self.expected}, like {example}; default: {default}."


def toml_text(value: object) -> str:
    """A value as TOML writes it, for messages: "64Mi", true, 2, ["a"]."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "a table"
    return type(value).__name__


def whole_number(low: int, high: int) -> Callable[[object], int]:
    """A TOML integer from `low` to `high` (not a string, a float or a boolean)."""

    def parse(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionValueError(_kind(value))
        if not low <= value <= high:
            raise OptionValueError("out of range")
        return value

    return parse


def boolean(value: object) -> bool:
    """A TOML boolean (not a string or a number)."""
    if not isinstance(value, bool):
        raise OptionValueError(_kind(value))
    return value


def positive_number(allow_zero: bool = False) -> Callable[[object], float]:
    """A finite TOML integer or float above zero (or zero too)."""

    def parse(value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise OptionValueError(_kind(value))
        try:
            number = float(value)
        except OverflowError:
            raise OptionValueError("out of range") from None
        if not math.isfinite(number) or number < 0 or (number == 0 and not allow_zero):
            raise OptionValueError("out of range")
        return number

    return parse


def quantity_above(minimum: int, minimum_text: str) -> Callable[[object], str]:
    """A Kubernetes quantity (a string such as "16Gi", or a whole number of bytes) above `minimum` bytes; the
    value is kept as written (a number as its digits), since the rule writes it into the manifest."""

    def parse(value: object) -> str:
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise OptionValueError(_kind(value))
        text = str(value)
        try:
            size = parse_quantity(text).ceil
        except (QuantityError, ValueError, ArithmeticError):
            raise OptionValueError("not a quantity") from None
        if size <= minimum:
            raise OptionValueError(f"not above {minimum_text}")
        return text

    return parse


def byte_sizes(value: object) -> Mapping[str, int]:
    """A table of names to sizes: whole numbers of bytes or quantities ("141G"), each above zero."""
    if not isinstance(value, Mapping):
        raise OptionValueError(_kind(value))
    sizes: dict[str, int] = {}
    for key, size in value.items():
        if isinstance(size, bool) or not isinstance(size, str | int):
            raise OptionValueError(f"{json.dumps(str(key))} is {_kind(size)}")
        try:
            count = parse_quantity(size).ceil
        except (QuantityError, ValueError, ArithmeticError):
            raise OptionValueError(f"{json.dumps(str(key))} is not a quantity") from None
        if count <= 0:
            raise OptionValueError(f"{json.dumps(str(key))} is not above 0")
        sizes[str(key)] = count
    return sizes


def regular_expressions(value: object) -> tuple[str, ...]:
    """A list of Python regular expressions, each of which compiles."""
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise OptionValueError(_kind(value))
    for item in value:
        if not isinstance(item, str):
            raise OptionValueError(f"an item is {_kind(item)}")
        try:
            re.compile(item)
        except re.error as err:
            raise OptionValueError(f"{json.dumps(item)} is not a regular expression: {err}") from None
    return tuple(value)


# kubernetes apimachinery pkg/util/validation: qualified names (label keys) and label values.
_NAME = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?")
_NAME_MAX = 63  # qualifiedNameMaxLength, LabelValueMaxLength
_PREFIX_MAX = 253  # DNS1123SubdomainMaxLength


def qualified_name_problem(key: str) -> str | None:
    """Why `key` is not a valid label key (IsQualifiedName), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > _PREFIX_MAX or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        return f"{json.dumps(key)}: the prefix must be a lowercase DNS subdomain"
    if not name or len(name) > _NAME_MAX or not _NAME.fullmatch(name):
        return (
            f"{json.dumps(key)}: the name must be 1 to 63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return None


def label_key(value: object) -> str:
    """A node label key (`example.com/rack`)."""
    if not isinstance(value, str):
        raise OptionValueError(_kind(value))
    problem = qualified_name_problem(value)
    if problem is not None:
        raise OptionValueError(problem)
    return value


def label_keys(value: object) -> tuple[str, ...]:
    """A list of node label keys."""
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise OptionValueError(_kind(value))
    return tuple(label_key(item) for item in value)


def queue_name(value: object) -> str:
    """A Kueue LocalQueue name: an object name that is also a label value (kueue.x-k8s.io/queue-name), so a
    lowercase DNS subdomain of at most 63 characters."""
    if not isinstance(value, str):
        raise OptionValueError(_kind(value))
    if not value or len(value) > _NAME_MAX or not _DNS_SUBDOMAIN.fullmatch(value) or not _LABEL_VALUE.fullmatch(value):
        raise OptionValueError("not a LocalQueue name")
    return value
