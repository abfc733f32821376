"""The personal-data and secrets scanner: what kind of personal data or secret a text holds, and
exactly where.

Pure Python (no Django, no database), called inside the write transaction like the injection
scanner, so every check is a bounded regular expression that finds candidates, then a validator
that must accept them (a checksum, a library's verdict, a decoded header):

- ``email``: local part @ a domain with a letter-only top-level label (letters of any script).
- ``phone``: candidates with a phone's shape (``+`` or ``00``, or separators, or a word such as
  "phone" or "tel" just before), validated by Google's libphonenumber (``phonenumbers``):
  international numbers in any region, national ones in ``DEFAULT_REGIONS``.
- ``card``: 13-19 digits (in groups or one run) with a known issuer prefix and the Luhn check.
- ``iban``: the country's length and the ISO 13616 mod-97 check.
- ``national_id``: US SSN (formatted ``AAA-GG-SSSS``, the SSA's allocation rules), UK National
  Insurance number (HMRC's prefix and suffix rules), and, only next to their name because a
  bare run of digits is too often something else, the Dutch BSN (11-proof) and the German
  Steuer-ID (digit-repetition rule and the ISO 7064 MOD 11,10 check digit).
- ``ip_address``: IPv4 and IPv6 as ``ipaddress`` parses them, except loopback and unspecified
  addresses (they identify no one); dotted numbers after "v" or "version" are versions.
- secrets: ``api_key`` (known prefixes: AWS, GitHub, Slack, Stripe, OpenAI/Anthropic-style
  ``sk-``, Google), ``private_key`` (a PEM private-key block), ``jwt`` (three base64url parts
  whose header decodes to JSON with ``alg``), and ``token``: a high-entropy value assigned to a
  name like key, token, secret or password (conservative: context, length, entropy and mixed
  character classes are all required).

Every finding is ``(start, end, type, kind)`` in Python ``str`` indices of the text, so
``text[start:end]`` is exactly what was found. Overlapping findings keep the most specific one
(a card number is not also a phone number). Each pattern bounds its repetitions, so the cost is
linear in the length of the text.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import phonenumbers

VERSION = "pii-1"

#: Types of personal data, and of secrets (secrets have their own policy: never stored in clear).
PERSONAL_TYPES = ("email", "phone", "card", "iban", "national_id", "ip_address")
SECRET_TYPES = ("api_key", "private_key", "jwt", "token")
TYPES = PERSONAL_TYPES + SECRET_TYPES

#: Plain words for each type (the item list's filter and labels).
TYPE_NAMES: dict[str, str] = {
    "email": "E-mail address", "phone": "Phone number", "card": "Payment card number",
    "iban": "IBAN", "national_id": "National identifier", "ip_address": "IP address",
    "api_key": "API key", "private_key": "Private key", "jwt": "JSON Web Token",
    "token": "Secret token",
}

#: Regions whose national phone formats are recognised without a ``+`` prefix.
DEFAULT_REGIONS = ("US", "GB", "DE", "FR", "NL")

#: Priority when findings overlap: the lower, the more specific.
_PRIORITY = {t: i for i, t in enumerate(
    ("private_key", "jwt", "api_key", "iban", "card", "national_id", "email", "ip_address",
     "phone", "token"))}

MAX_FINDINGS = 500


@dataclass(frozen=True, order=True)
class Finding:
    start: int
    end: int
    type: str
    kind: str = ""        # e.g. "aws", "us_ssn", "ipv6"; "" when the type says it all
    normal: str = ""      # e-mail lower-cased, phone in E.164 (for matching a subject id)


@dataclass(frozen=True)
class PiiVerdict:
    types: tuple[str, ...]            # the types found, sorted, unique
    findings: tuple[Finding, ...]     # sorted by start
    version: str = VERSION

    @property
    def secrets(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.type in SECRET_TYPES)

    @property
    def spans(self) -> tuple[tuple[int, int, str], ...]:
        return tuple((f.start, f.end, f.type) for f in self.findings)


def detect(text: str, *, regions: Iterable[str] = DEFAULT_REGIONS) -> PiiVerdict:
    """Every personal-data and secret finding in ``text``."""
    if not isinstance(text, str):
        raise TypeError(f"detect() takes a str, not {type(text).__name__}")
    regions = tuple(regions)
    lowered = text.lower()
    # One pass finds every run of digits (with the separators numbers are written with); the
    # numeric checks then run only there. Every other family starts from a literal.
    clusters = [(m.start(), m.end()) for m in _CLUSTER.finditer(text)]
    found: list[Finding] = []
    found.extend(_private_keys(text))
    found.extend(_api_keys(text))
    found.extend(_jwts(text))
    found.extend(_emails(text))
    found.extend(_capitals(text))
    found.extend(_tokens(text, lowered))
    found.extend(_ipv6(text))
    found.extend(_numbers(text, lowered, clusters, regions))
    kept: list[Finding] = []
    taken: list[tuple[int, int]] = []
    for finding in sorted(found, key=lambda f: (_PRIORITY[f.type], f.start)):
        if any(finding.start < end and start < finding.end for start, end in taken):
            continue
        kept.append(finding)
        taken.append((finding.start, finding.end))
        if len(kept) >= MAX_FINDINGS:
            break
    kept.sort()
    return PiiVerdict(types=tuple(sorted({f.type for f in kept})), findings=tuple(kept))


def redact(text: str, findings: Iterable[Finding | tuple[int, int, str]],
           types: Iterable[str] | None = None) -> str:
    """``text`` with each finding's span replaced by ``[type]`` (only ``types``, if given).
    Findings must not overlap (``detect``'s do not)."""
    wanted = None if types is None else set(types)
    spans: list[tuple[int, int, str]] = sorted(
        (f.start, f.end, f.type) if isinstance(f, Finding) else (int(f[0]), int(f[1]), str(f[2]))
        for f in findings)
    parts: list[str] = []
    at = 0
    for start, end, kind in spans:
        if (wanted is not None and kind not in wanted) or start < at or end > len(text):
            continue
        parts.append(text[at:start])
        parts.append(f"[{kind}]")
        at = end
    parts.append(text[at:])
    return "".join(parts)


# -- e-mail -----------------------------------------------------------------------------------

_CLUSTER = re.compile(r"[+(0-9][0-9 ()./-]{5,}[0-9]")  # 7+ characters: shorter runs hold nothing
# Letters of any script (internationalised addresses: zoë@exämple.de).
_LOCAL = re.compile(r"[^\W_](?:[\w.%+-]{0,62}[\w%+-])?\Z")
_DOMAIN = re.compile(r"(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.){1,8}[^\W\d_]{2,24}"
                     r"(?![\w-])(?!\.[^\W_])")


def normal_email(value: str) -> str:
    return value.strip().lower()


def _emails(text: str) -> Iterator[Finding]:
    at = text.find("@")
    while at > 0:
        local = _LOCAL.search(text, max(0, at - 64), at)
        domain = _DOMAIN.match(text, at + 1) if local else None
        if local and domain:
            start = local.start()
            # The local part is the longest one that starts on a boundary.
            while start < at and (start > 0 and (text[start - 1].isalnum()
                                                 or text[start - 1] in "._%+-")):
                start += 1
            value = text[start:domain.end()]
            if start < at and ".." not in value and text[start].isalnum():
                yield Finding(start, domain.end(), "email", "", normal_email(value))
        at = text.find("@", at + 1)


# -- phone numbers ----------------------------------------------------------------------------

_PHONE = re.compile(r"(?<![\w+./-])(?:\+|00)?\(?\d[\d ()./-]{5,20}\d(?![\w/]|[.-]\d)")
_PHONE_WORDS = re.compile(
    r"(?:phone|tel|mobil|cell|call|fax|whatsapp|telefon|handy|téléphone|portable|bel)\w*"
    r"\.?[\s:#]{0,4}(?:no\.?|nr\.?|number|nummer)?[\s:#]{0,3}\Z", re.IGNORECASE)
_PHONE_SEPARATORS = re.compile(r"[ ()./-]+")
_SSN_SHAPE = re.compile(r"\d{3}-\d{2}-\d{4}")
_DATE_LIKE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")


def normal_phone(value: str, regions: Iterable[str] = DEFAULT_REGIONS) -> str:
    """``value`` in E.164 if it is a valid phone number, else ""."""
    number = _parse_phone(value, tuple(regions))
    if number is None:
        return ""
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _parse_phone(raw: str, regions: tuple[str, ...]) -> phonenumbers.PhoneNumber | None:
    """The number if libphonenumber holds it valid: an international one in any region of its
    country code, a national one in one of ``regions`` (the regions whose trunk prefix it
    starts with, or that have none, first: the library's full check is the costly part)."""
    value = raw.strip()
    if value.startswith("00"):
        value = "+" + value[2:]
    if value.startswith("+"):
        try:
            number = phonenumbers.parse(value, None)
        except phonenumbers.NumberParseException:
            return None
        if not phonenumbers.is_possible_number(number):
            return None
        return number if phonenumbers.is_valid_number(number) else None
    leading_zero = value.lstrip("(").startswith("0")
    for region in regions:
        if (region in _NO_TRUNK_ZERO) == leading_zero:
            continue  # a national number starts with 0 exactly where the trunk prefix is 0
        try:
            number = phonenumbers.parse(value, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_possible_number(number) and \
                phonenumbers.is_valid_number_for_region(number, region):
            return number
    return None


#: Regions (of those one would configure) whose national numbers have no trunk prefix 0.
_NO_TRUNK_ZERO = frozenset({"US", "CA", "ES", "PT", "DK", "NO", "GR", "LU", "IS"})


def _phones(text: str, regions: tuple[str, ...], start: int, end: int) -> Iterator[Finding]:
    for m in _PHONE.finditer(text, start, end):
        raw = m.group()
        digits = len(raw) - len(raw.translate(_DROP_DIGITS))
        if not 7 <= digits <= 15 or _DATE_LIKE.fullmatch(raw):
            continue
        international = raw.startswith(("+", "00"))
        shaped = any(ch in raw for ch in " ()-./")
        context = bool(_PHONE_WORDS.search(text[max(0, m.start() - 30):m.start()]))
        if not (international or context or (shaped and _phone_groups(raw))):
            continue
        if raw.count(".") and not (international or context) and raw.count(".") != 2:
            continue
        number = _parse_phone(raw, regions)
        if number is None:
            continue
        yield Finding(m.start(), m.end(), "phone", "",
                      phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))


def _phone_groups(raw: str) -> bool:
    """A national number with separators looks like a phone when its groups are phone-sized
    (2-5 digits, the first maybe in parentheses), not like 1.2.3 or 12-345678-9."""
    groups = [g for g in _PHONE_SEPARATORS.split(raw) if g]
    if _SSN_SHAPE.fullmatch(raw) or (len(groups[0]) <= 3 and len(groups) > 2
                                     and all(len(g) == 3 for g in groups[1:])):
        return False  # an SSN's shape, or a count grouped in thousands (8 336 817)
    return 2 <= len(groups) <= 5 and all(1 <= len(g) <= 8 for g in groups[1:]) \
        and len(groups[0]) <= 5


# -- payment cards ----------------------------------------------------------------------------

_CARD = re.compile(r"(?<![\d.,-])\d(?:[ -]?\d){12,18}(?![\d]|[.,-]\d)")


_CARD_SEPARATORS = re.compile(r"[ -]")


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _card_issuer(d: str) -> str:
    n = len(d)
    two, four, six = int(d[:2]), int(d[:4]), int(d[:6])
    if d[0] == "4" and n in (13, 16, 19):
        return "visa"
    if (51 <= two <= 55 or 222100 <= six <= 272099) and n == 16:
        return "mastercard"
    if two in (34, 37) and n == 15:
        return "amex"
    if (four == 6011 or two == 65 or 644 <= int(d[:3]) <= 649) and n in (16, 19):
        return "discover"
    if 3528 <= four <= 3589 and 16 <= n <= 19:
        return "jcb"
    if (300 <= int(d[:3]) <= 305 or two in (36, 38)) and 14 <= n <= 19:
        return "diners"
    if two == 62 and 16 <= n <= 19:
        return "unionpay"
    if (two == 50 or 56 <= two <= 69) and 12 <= n <= 19:
        return "maestro"
    return ""


def _cards(text: str, start: int, end: int) -> Iterator[Finding]:
    for m in _CARD.finditer(text, start, end):
        raw = m.group()
        seps = {ch for ch in raw if not ch.isdigit()}
        if len(seps) > 1:
            continue
        digits = raw.replace(" ", "").replace("-", "")
        if seps and not _card_groups(raw):
            continue
        issuer = _card_issuer(digits)
        if issuer and luhn(digits):
            yield Finding(m.start(), m.end(), "card", issuer)


def _card_groups(raw: str) -> bool:
    sizes = [len(g) for g in _CARD_SEPARATORS.split(raw)]
    return sizes[:-1] == [4] * (len(sizes) - 1) and 1 <= sizes[-1] <= 4 or sizes in (
        [4, 6, 5], [4, 6, 4])


# -- IBAN -------------------------------------------------------------------------------------

#: ISO 13616 lengths by country (SWIFT's IBAN registry).
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])")


def iban_valid(value: str) -> bool:
    compact = value.replace(" ", "").upper()
    if IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in moved)
    return int(number) % 97 == 1


_CAPS = re.compile(r"[A-Z][A-Z] ?[0-9][0-9]")


def _capitals(text: str) -> Iterator[Finding]:
    """IBANs and UK NI numbers: both start with two capitals and two digits."""
    for m in _CAPS.finditer(text):
        yield from _iban_at(text, m.start())
        nino = _NINO.match(text, m.start())
        if nino is not None and nino.group(1) not in _NINO_BAD_PREFIXES:
            yield Finding(nino.start(), nino.end(), "national_id", "uk_nino")


def _iban_at(text: str, at: int) -> Iterator[Finding]:
    m = _IBAN.match(text, at)
    length = IBAN_LENGTHS.get(text[at:at + 2])
    if m is None or length is None:
        return
    # The match may run on into the next word: the country's length decides where it ends.
    compact_len = 0
    for i, ch in enumerate(m.group()):
        if ch != " ":
            compact_len += 1
        if compact_len == length:
            end = at + i + 1
            if (end == len(text) or not text[end].isalnum()) and iban_valid(text[at:end]):
                yield Finding(at, end, "iban", text[at:at + 2].lower())
            return


# -- national identifiers ---------------------------------------------------------------------

_SSN = re.compile(r"(?<![\w-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\w]|-\d)")
_SSN_BARE = re.compile(r"(?<![\w-])(\d{3})(\d{2})(\d{4})(?![\w-])")
_SSN_WORDS = re.compile(r"(?:ssn|social security(?: number| no\.?)?)[\s:#]{0,4}\Z",
                        re.IGNORECASE)
_NINO = re.compile(r"(?<![A-Za-z0-9])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?(\d{2}) ?(\d{2}) ?"
                   r"(\d{2}) ?([A-D])(?![A-Za-z0-9])")
_NINO_BAD_PREFIXES = frozenset({"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"})
_BSN = re.compile(r"(?<![\w.-])(\d{4}\.?\d{2}\.?\d{3}|\d{9})(?![\w]|[.-]\d)")
_BSN_WORDS = re.compile(r"(?:bsn|burgerservicenummer|sofinummer|sofi-nummer)\w*[\s:#.-]{0,4}"
                        r"(?:nummer|nr\.?)?[\s:#]{0,3}\Z", re.IGNORECASE)
_STEUER = re.compile(r"(?<![\w.-])(\d{2} ?\d{3} ?\d{3} ?\d{3})(?![\w]|[.-]\d)")
_STEUER_WORDS = re.compile(
    r"(?:steuer-?id|steuerid|steuer-identifikationsnummer|steueridentifikationsnummer|"
    r"identifikationsnummer|idnr|tax id|tin)\w*[\s:#.-]{0,4}(?:nr\.?)?[\s:#]{0,3}\Z",
    re.IGNORECASE)
_CONTEXT = 40


def ssn_valid(area: str, group: str, serial: str) -> bool:
    """The SSA's rules: no area 000, 666 or 900-999, no group 00, no serial 0000, and not one
    of the numbers published in advertising."""
    if area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000":
        return False
    return f"{area}{group}{serial}" not in ("078051120", "219099999", "123456789")


def bsn_valid(digits: str) -> bool:
    """The Dutch 11-proof: 9*d1 + 8*d2 + ... + 2*d8 - d9 is a multiple of 11 (and not 0)."""
    if len(digits) != 9 or not digits.isdigit():
        return False
    total = sum(int(d) * w for d, w in zip(digits[:8], range(9, 1, -1), strict=True))
    total -= int(digits[8])
    return total % 11 == 0 and total != 0


def steuer_id_valid(digits: str) -> bool:
    """The German tax id: 11 digits, no leading 0; among the first ten exactly one digit occurs
    two or three times (three never in a row) and the rest once; ISO 7064 MOD 11,10 check."""
    if len(digits) != 11 or not digits.isdigit() or digits[0] == "0":
        return False
    counts = Counter(digits[:10])
    repeated = [d for d, n in counts.items() if n > 1]
    if len(repeated) != 1 or counts[repeated[0]] > 3 or len(counts) not in (8, 9):
        return False
    if counts[repeated[0]] == 3 and repeated[0] * 3 in digits[:10]:
        return False
    product = 10
    for ch in digits[:10]:
        total = (int(ch) + product) % 10 or 10
        product = (total * 2) % 11
    check = 11 - product
    return (0 if check == 10 else check) == int(digits[10])


def _before(text: str, start: int) -> str:
    return text[max(0, start - _CONTEXT):start]


_DROP_DIGITS = str.maketrans("", "", "0123456789")


def _numbers(text: str, lowered: str, clusters: list[tuple[int, int]],
             regions: tuple[str, ...]) -> Iterator[Finding]:
    """Cards, SSNs, BSNs, Steuer-IDs, IPv4 addresses and phone numbers, each looked for only
    inside the runs of digits the one pass found (with two characters after, for the checks
    of what follows a number), and only the checks a run's digit count allows."""
    ssn_words = "ssn" in lowered or "social security" in lowered
    bsn_words = "bsn" in lowered or "sofi" in lowered or "burgerservice" in lowered
    steuer_words = any(w in lowered for w in ("steuer", "idnr", "identifikation", "tax id",
                                              "tin"))
    size = len(text)
    for start, end in clusters:
        if end - start < 7:
            continue  # fewer than 7 characters: no identifier, phone or IPv4 address
        raw = text[start:end]
        digits = len(raw) - len(raw.translate(_DROP_DIGITS))
        stop = min(size, end + 2)
        if raw.count(".") >= 3:
            for m in _IPV4.finditer(text, start, stop):
                if _VERSION_BEFORE.search(text[max(0, m.start() - 9):m.start()]):
                    continue
                if _ip_kept(m.group()):
                    yield Finding(m.start(), m.end(), "ip_address", "ipv4")
        if digits < 7 or _DATE_LIKE.fullmatch(raw):
            continue
        here: list[Finding] = []
        if digits >= 13:
            here += _cards(text, start, stop)
        if digits >= 9:
            if not raw.isdigit():
                here += (Finding(m.start(), m.end(), "national_id", "us_ssn")
                         for m in _SSN.finditer(text, start, stop)
                         if ssn_valid(m.group(1), m.group(3), m.group(4)))
            here += _word_ids(text, start, stop, digits, ssn_words, bsn_words, steuer_words)
        yield from here
        # The phone check (the library's) is the costly one: not where an id already is, and
        # a bare run of digits only after a word such as "phone" or "tel".
        if any(f.start <= start and f.end >= end for f in here):
            continue
        if raw.isdigit() and not raw.startswith("00") and not _PHONE_WORDS.search(
                text[max(0, start - 30):start]):
            continue
        yield from _phones(text, regions, start, stop)


def _word_ids(text: str, start: int, stop: int, digits: int, ssn_words: bool, bsn_words: bool,
              steuer_words: bool) -> Iterator[Finding]:
    """The identifiers recognised only next to their name: bare SSNs, BSNs, Steuer-IDs."""
    if ssn_words:
        for m in _SSN_BARE.finditer(text, start, stop):
            if _SSN_WORDS.search(_before(text, m.start())) and ssn_valid(*m.groups()):
                yield Finding(m.start(), m.end(), "national_id", "us_ssn")
    if bsn_words:
        for m in _BSN.finditer(text, start, stop):
            if _BSN_WORDS.search(_before(text, m.start())) and \
                    bsn_valid(m.group(1).replace(".", "")):
                yield Finding(m.start(), m.end(), "national_id", "nl_bsn")
    if steuer_words and digits >= 11:
        for m in _STEUER.finditer(text, start, stop):
            if _STEUER_WORDS.search(_before(text, m.start())) and \
                    steuer_id_valid(m.group(1).replace(" ", "")):
                yield Finding(m.start(), m.end(), "national_id", "de_steuer_id")


# -- IP addresses -----------------------------------------------------------------------------

_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:|:){2,7}(?:[0-9A-Fa-f]{1,4}|:)"
                   r"(?:(?<=:)(?:\d{1,3}\.){3}\d{1,3})?(?![\w:])")
_VERSION_BEFORE = re.compile(r"(?:\bv|version\s?|release\s?|\bver\.?\s?)\Z", re.IGNORECASE)


def _ip_kept(value: str) -> bool:
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return False
    return not (address.is_loopback or address.is_unspecified)


_HEX_COLON = frozenset("0123456789abcdefABCDEF:")


def _ipv6(text: str) -> Iterator[Finding]:
    """IPv6 addresses, looked for only around colons that have a hex digit or a colon on
    both sides."""
    at = text.find(":")
    covered = -1
    while at >= 0:
        if (at > covered and 0 < at < len(text) - 1 and text[at - 1] in _HEX_COLON
                and text[at + 1] in _HEX_COLON):
            start = at
            while start > 0 and at - start < 40 and text[start - 1] in _HEX_COLON:
                start -= 1
            m = _IPV6.match(text, start)
            if m is not None:
                covered = m.end()
                value = m.group()
                if sum(ch in "0123456789abcdefABCDEF" for ch in value) >= 3 and _ip_kept(value):
                    yield Finding(m.start(), m.end(), "ip_address", "ipv6")
        at = text.find(":", at + 1)


# -- secrets ----------------------------------------------------------------------------------

#: (kind, the literal a key starts with, the key's pattern from there, characters that may not
#: come right before it). Each pattern starts with its literal, so the regex engine searches
#: for that literal and a text without it costs one substring search per prefix.
_API_KEYS: list[tuple[str, str, re.Pattern[str], str]] = [
    *[("aws", p, re.compile(p + r"[0-9A-Z]{16}(?![A-Za-z0-9])"), "")
      for p in ("AKIA", "ASIA", "ABIA", "ACCA")],
    *[("github", p, re.compile(p + r"[A-Za-z0-9]{36,251}(?![A-Za-z0-9_])"), "_")
      for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")],
    ("github", "github_pat_", re.compile(r"github_pat_[A-Za-z0-9_]{22,251}(?![A-Za-z0-9_])"),
     "_"),
    ("slack", "xox", re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,250}(?![A-Za-z0-9-])"), "_"),
    *[("stripe", p, re.compile(p + r"[A-Za-z0-9]{16,247}(?![A-Za-z0-9])"), "_")
      for p in ("sk_live_", "rk_live_", "sk_test_", "rk_test_")],
    ("openai", "sk-", re.compile(r"sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d\d-)?"
                                 r"[A-Za-z0-9_-]{20,250}(?![A-Za-z0-9_-])"), "_-"),
    ("google", "AIza", re.compile(r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"), "_-"),
]
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_JWT = re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,2000}\.eyJ[A-Za-z0-9_-]{5,8000}"
                  r"\.[A-Za-z0-9_-]{0,2000}(?![A-Za-z0-9_-])")
_TOKEN = re.compile(
    r"(?:key|token|secret|passw(?:or)?d|passw|pwd|auth|bearer|credential)\w{0,12}[\"']?"
    r"(?:\s{0,3}[:=]\s{0,3}|\s{1,3})[\"']?([A-Za-z0-9+/_.~-]{20,512}={0,2})(?![A-Za-z0-9+/_.~=-])",
    re.IGNORECASE)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _mixed(value: str) -> bool:
    return (any(ch.isdigit() for ch in value) and any(ch.islower() for ch in value)
            and any(ch.isupper() for ch in value))


def _api_keys(text: str) -> Iterator[Finding]:
    for kind, prefix, pattern, joins in _API_KEYS:
        if prefix not in text:
            continue
        for m in pattern.finditer(text):
            start = m.start()
            if start and (text[start - 1].isalnum() or text[start - 1] in joins):
                continue  # inside a longer word
            value = m.group()
            if kind == "openai" and not (any(ch.isdigit() for ch in value)
                                         and entropy(value) >= 3.5):
                continue  # "sk-learn-style-package-name-here" is not a key
            yield Finding(start, m.end(), "api_key", kind)


def _private_keys(text: str) -> Iterator[Finding]:
    if "PRIVATE KEY" not in text:
        return
    at = 0
    while (begin := _PEM_BEGIN.search(text, at)) is not None:
        end = _PEM_END.search(text, begin.end())
        # An unterminated block is still a key: it is taken to the end of the text.
        stop = end.end() if end is not None else len(text)
        yield Finding(begin.start(), stop, "private_key", "pem")
        at = stop


def _jwts(text: str) -> Iterator[Finding]:
    if "eyJ" not in text:
        return
    for m in _JWT.finditer(text):
        header = m.group().split(".", 1)[0]
        try:
            decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
        except (ValueError, binascii.Error):
            continue
        if isinstance(decoded, dict) and "alg" in decoded:
            yield Finding(m.start(), m.end(), "jwt")


_TOKEN_WORDS = ("key", "token", "secret", "passw", "pwd", "auth", "bearer", "credential")


def _tokens(text: str, lowered: str) -> Iterator[Finding]:
    """High-entropy values right after a word that names a secret (``api_key = ...``)."""
    for word in _TOKEN_WORDS:
        at = lowered.find(word)
        while at >= 0:
            m = _TOKEN.match(text, at)
            if m is not None:
                value = m.group(1)
                if len(value) >= 20 and _mixed(value) and entropy(value) >= 3.7:
                    yield Finding(m.start(1), m.end(1), "token")
            at = lowered.find(word, at + 1)
