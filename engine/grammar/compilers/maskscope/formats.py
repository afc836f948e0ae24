"""`format` as regular expressions that say what jsonschema's format checker accepts.

Each format is written as a Python regex, read by the same translator as `pattern`, so that
the grammar and a plain `re` test of it mean the same thing. The judge is jsonschema with the
checkers installed here (`engine/schema/validate.py`): rfc3339-validator for date-time,
`date.fromisoformat`, isoduration, `uuid.UUID`, fqdn, `ipaddress`, rfc3986-validator.
Their quirks are kept: date-time and time take lowercase `t`/`z` and a final newline
(rfc3339-validator upper-cases the text and ends its regex with `$`), a duration may carry
number characters before `T` that the parser skips.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.schema.parse import validator_class

_D = "[0-9]"  # ASCII digits: `\d` is Unicode in a Python pattern
_YEAR = "(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"  # 0001..9999
_LEAP4 = "(?:0[48]|[2468][048]|[13579][26])"  # two digits divisible by 4, not 00
_LEAP_YEAR = f"(?:[0-9]{{2}}{_LEAP4}|{_LEAP4}00)"
_MONTH_DAY = (
    "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    "|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
_DATE = f"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_OFFSET = "(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
_TIME = f"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.{_D}+)?{_OFFSET}"

# isoduration: numbers as Decimal reads them (`,` for `.` too), designators in order.
# Exponents stop at 5 digits: past Decimal's range isoduration refuses some and overflows
# (an exception out of jsonschema) on others.
_EXP = "(?:[eE][+-]?[0-9]{1,5})?"
_NUM = f"[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+){_EXP}"
_ZERO = f"[+-]?(?:0+(?:[.,]0*)?|[.,]0+){_EXP}"
_YMD = f"(?:{_NUM}Y(?:{_NUM}M)?(?:{_NUM}D)?|{_NUM}M(?:{_NUM}D)?|{_NUM}D)"
_WEEKS = f"(?:{_ZERO}Y)?(?:{_ZERO}M)?(?:{_ZERO}D)?{_NUM}W"  # weeks only beside zeros
_HMS = f"T(?:{_NUM}H(?:{_NUM}M)?(?:{_NUM}S)?|{_NUM}M(?:{_NUM}S)?|{_NUM}S)"
_DURATION = f"^[+-]?P(?:(?:{_YMD}|{_WEEKS})(?:[-+0-9.,eE]*{_HMS})?|{_HMS})\\Z"

_HEX = "[0-9a-fA-F]"
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"  # no leading zeros, as ipaddress
_IPV4 = f"{_OCTET}(?:\\.{_OCTET}){{3}}"
_H16 = f"{_HEX}{{1,4}}"
_LS32 = f"(?:{_H16}:{_H16}|{_IPV4})"
# RFC 3986's IPv6address: `::` stands for one or more groups, as ipaddress has it.
_IPV6 = (
    "(?:"
    + "|".join(
        [
            f"(?:{_H16}:){{6}}{_LS32}",
            f"::(?:{_H16}:){{5}}{_LS32}",
            f"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
            f"(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}",
            f"(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}",
            f"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
            f"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
            f"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
            f"(?:(?:{_H16}:){{0,6}}{_H16})?::",
        ]
    )
    + ")"
)
# fqdn matches `[-A-Z\\d]` case-insensitively on the lowered text: its `\\d` is Unicode, and
# ı, ſ and the Kelvin sign pass as i, s and k.
_LETTER = "[A-Za-z\\d\u0131\u017f\u212a]"
_LABEL = f"{_LETTER}(?:[-A-Za-z\\d\u0131\u017f\u212a]{{0,61}}{_LETTER})?"


@dataclass(frozen=True, slots=True)
class FormatRegex:
    """A format as a Python regex (searched, as `pattern` is) and what it leaves out."""

    regex: str
    flags: int = 0
    gap: str | None = None  # what the grammar does not hold, when it accepts more


FORMATS: dict[str, FormatRegex] = {
    "date": FormatRegex(f"^{_DATE}\\Z"),
    "time": FormatRegex(f"^{_TIME}$"),
    "date-time": FormatRegex(f"^{_DATE}[Tt]{_TIME}$"),
    "duration": FormatRegex(_DURATION),
    # uuid.UUID also takes odd spellings with the dashes in place (extra dashes, `0x`, `_`);
    # the grammar holds the canonical 8-4-4-4-12 form.
    "uuid": FormatRegex(f"^{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}\\Z"),
    # jsonschema's email check is only that the text holds an `@`.
    "email": FormatRegex("@"),
    "idn-email": FormatRegex("@"),
    "hostname": FormatRegex(
        f"^(?:{_LABEL}\\.)*{_LABEL}\\.?$",
        gap="the 253-character limit on the whole name is not enforced",
    ),
    "ipv4": FormatRegex(f"^{_IPV4}\\Z"),
    "ipv6": FormatRegex(f"^{_IPV6}\\Z"),
}


def _rfc3986(name: str, rule: str) -> FormatRegex | None:
    """uri and uri-reference: rfc3986-validator's own regex, when jsonschema uses it."""
    try:
        import rfc3986_validator
        from jsonschema import _format
    except ImportError:  # pragma: no cover - a dependency of jsonschema[format-nongpl]
        return None
    if getattr(_format, "validate_rfc3986", None) is not rfc3986_validator.validate_rfc3986:
        return None
    compiled = {
        "URI": rfc3986_validator.URI_RE_COMP,
        "URI_reference": rfc3986_validator.URI_REF_RE_COMP,
    }[rule]
    return FormatRegex(compiled.pattern, compiled.flags & ~32)  # 32: re.UNICODE, the default


for _name, _rule in (("uri", "URI"), ("uri-reference", "URI_reference")):
    _found = _rfc3986(_name, _rule)
    if _found is not None:
        FORMATS[_name] = _found


def asserted_formats(schema: Any) -> frozenset[str]:
    """The formats jsonschema checks for the schema's draft (draft-04 does not check `date`,
    for one): a format outside them is an annotation, and the grammar leaves it alone."""
    return frozenset(validator_class(schema).FORMAT_CHECKER.checkers)
