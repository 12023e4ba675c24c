"""The generic custom constraints Heat ships, as plain checks.

Each check raises ``ValueError`` with the reason a value is invalid; the
registry turns that into ``Error validating value '<value>': <reason>``.
They follow the behaviour of Heat's checks (which come from netaddr,
neutron-lib, iso8601 and croniter) using only the standard library.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import re
import time
import zoneinfo
from typing import Any

from stoker.constraints.cron import check_cron

FQDN_MAX_LENGTH = 255
_DNS_LABEL = re.compile(r"[a-z0-9-]{1,63}")
_ALL_DIGITS = re.compile(r"[0-9]+")
_BAD_IP_CHARS = re.compile(r"\s|%")  # whitespace; IPv6 zone ids


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string")
    return value


# -- addresses ---------------------------------------------------------------------

def _ip_address(value: Any) -> None:
    """An IPv4 address in dotted-quad form (no leading zeros) or an IPv6 address."""
    text = _string(value, "an IP address")
    try:
        if _BAD_IP_CHARS.search(text) or (":" not in text and text.count(".") != 3):
            raise ValueError
        ipaddress.ip_address(text)
    except ValueError:
        raise ValueError(f"'{text}' is not a valid IP address") from None


#: an IPv4 CIDR already in canonical form (no leading zeros), the common case: checked without
#: building an ``ipaddress`` object (a template may hold hundreds of subnets)
_CANONICAL_IPV4_CIDR = re.compile(r"(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\."
                                  r"(0|[1-9][0-9]{0,2})/(0|[1-9][0-9]?)")


def _subnet(value: Any) -> None:
    """``address/prefix``; an IPv4 one must be written in its canonical form."""
    text = _string(value, "a CIDR")
    canonical = _CANONICAL_IPV4_CIDR.fullmatch(text)
    if canonical and max(map(int, canonical.groups()[:4])) <= 255 and int(canonical[5]) <= 32:
        return
    try:
        if _BAD_IP_CHARS.search(text) or "/" not in text:
            raise ValueError
        network = ipaddress.ip_interface(text)
        if network.version == 4 and str(network) != text:
            raise ValueError
    except ValueError:
        raise ValueError(f"'{text}' is not a valid IP subnet") from None


def ip_addr(value: Any) -> None:
    try:
        _ip_address(value)
    except ValueError:
        raise ValueError("Invalid IP address") from None


def net_cidr(value: Any) -> None:
    _subnet(value)


def ip_or_cidr(value: Any) -> None:
    if isinstance(value, str) and "/" in value:
        _subnet(value)
    else:
        _ip_address(value)


# six 1-2 digit groups, three 1-4 digit groups, two 5-6 digit groups, or bare
_MAC_FORMATS = [re.compile(p, re.IGNORECASE) for p in (
    r"[0-9a-f]{1,2}([:-])([0-9a-f]{1,2}\1){4}[0-9a-f]{1,2}",
    r"[0-9a-f]{1,4}([:.-])[0-9a-f]{1,4}\1[0-9a-f]{1,4}",
    r"[0-9a-f]{5,6}[:-][0-9a-f]{5,6}",
    r"[0-9a-f]{11,12}",
)]


def mac_addr(value: Any) -> None:
    text = value if isinstance(value, str) else ""
    if not any(p.fullmatch(text) for p in _MAC_FORMATS):
        raise ValueError("Invalid MAC address.")


# -- DNS names ---------------------------------------------------------------------

def dns_name(value: Any) -> None:
    """A host or domain name: lowercase labels of letters, digits and hyphens."""
    if not value:
        return
    text = _string(value, "a DNS name")
    trimmed = text[:-1] if text.endswith(".") else text
    if len(trimmed) > FQDN_MAX_LENGTH:
        raise ValueError(f"'{text}' is longer than the {FQDN_MAX_LENGTH} characters of a FQDN")
    labels = trimmed.split(".")
    for label in labels:
        if not label:
            raise ValueError(f"'{text}' has an empty label")
        if label.startswith("-") or label.endswith("-"):
            raise ValueError(f"the label '{label}' must not start or end with a hyphen")
        if not _DNS_LABEL.fullmatch(label):
            raise ValueError(f"the label '{label}' must be 1 to 63 lowercase letters, "
                             "digits or hyphens")
    if text.endswith(".") and len(labels) > 1 and _ALL_DIGITS.fullmatch(labels[-1]):
        raise ValueError(f"the top-level domain '{labels[-1]}' must not be all digits")


def rel_dns_name(value: Any) -> None:
    """A name relative to a domain: no final dot, room left to add a domain."""
    if not value:
        return
    text = _string(value, "a DNS name")
    if text.endswith("."):
        raise ValueError(f"'{text}' is a FQDN; it must be a relative name")
    if len(text) > FQDN_MAX_LENGTH - 3:
        raise ValueError(f"'{text}' has {len(text)} characters; adding a domain would exceed "
                         f"the {FQDN_MAX_LENGTH} characters of a FQDN")
    dns_name(text)


def dns_domain(value: Any) -> None:
    """A fully qualified domain: a DNS name ending with a dot."""
    if not value:
        return
    dns_name(value)
    if not value.endswith("."):
        raise ValueError(f"'{value}' must end with '.'")


# -- times -------------------------------------------------------------------------

# year, then optionally month (not compact alone), then day, then a time
_ISO_8601 = re.compile(r"""
    (?P<year>[0-9]{4})
    (?: (?: -(?P<month>[0-9]{1,2}) | (?P<cmonth>[0-9]{2})(?!$) )
        (?: (?: -(?P<day>[0-9]{1,2}) | (?P<cday>[0-9]{2}) )
            (?: [T\ ] (?P<hour>[0-9]{2}) (?: :?(?P<minute>[0-9]{2}) )?
                (?: :?(?P<second>[0-9]{1,2}) (?: [.,](?P<fraction>[0-9]+) )? )?
                (?: Z | (?P<sign>[-+])(?P<zone_hour>[0-9]{2}) :?(?P<zone_minute>[0-9]{2})? )?
            )?
        )?
    )?
    """, re.VERBOSE)


def parse_iso8601(text: Any) -> datetime.datetime:
    """A date and time as Heat reads it: parts may be left out (``2015``,
    ``2015-01-01``, ``20150101T0930``), and no zone means UTC."""
    match = _ISO_8601.fullmatch(_string(text, "an ISO 8601 time"))
    if match is None:
        raise ValueError(f"'{text}' is not an ISO 8601 date and time")
    part = match.groupdict()
    zone = datetime.timezone.utc
    if part["sign"]:
        offset = datetime.timedelta(hours=int(part["zone_hour"]),
                                    minutes=int(part["zone_minute"] or 0))
        zone = datetime.timezone(-offset if part["sign"] == "-" else offset)
    microseconds = int((part["fraction"] or "")[:6].ljust(6, "0"))  # digits beyond are cut
    return datetime.datetime(
        int(part["year"]),
        int(part["month"] or part["cmonth"] or 1),
        int(part["day"] or part["cday"] or 1),
        int(part["hour"] or 0),
        int(part["minute"] or 0),
        int(part["second"] or 0),
        microseconds,
        tzinfo=zone,
    )


def iso_8601(value: Any) -> None:
    parse_iso8601(value)


def expiration(value: Any) -> None:
    """An ISO 8601 time in the future."""
    if not value:
        return
    text = _string(value, "an expiration time")
    if parse_iso8601(text.strip()) <= datetime.datetime.now(datetime.timezone.utc):
        raise ValueError(f"the expiration time {text} is in the past")


def cron_expression(value: Any) -> None:
    if value:
        check_cron(value)


def timezone(value: Any) -> None:
    if not value:
        return
    try:
        zoneinfo.ZoneInfo(_string(value, "a time zone"))
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        raise ValueError(f"'{value}' is not a known time zone") from None


# -- others ------------------------------------------------------------------------

def json_string(value: Any) -> None:
    if not value:
        return
    try:
        json.loads(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the JSON string is invalid: {exc}") from None


#: longest delay test_constr may cause: a template must not stall validation for a day
TEST_CONSTR_MAX_SECONDS = 2.0


def test_constr(value: Any) -> None:
    """Heat's test constraint: it delays the check by ``value`` seconds (at most 2)."""
    if float(value) < 0:
        raise ValueError("sleep length must be non-negative")
    time.sleep(min(float(value), TEST_CONSTR_MAX_SECONDS))


COMMON_CHECKS = {
    "cron_expression": cron_expression,
    "dns_domain": dns_domain,
    "dns_name": dns_name,
    "expiration": expiration,
    "ip_addr": ip_addr,
    "ip_or_cidr": ip_or_cidr,
    "iso_8601": iso_8601,
    "json_string": json_string,
    "mac_addr": mac_addr,
    "net_cidr": net_cidr,
    "rel_dns_name": rel_dns_name,
    "test_constr": test_constr,
    "timezone": timezone,
}
