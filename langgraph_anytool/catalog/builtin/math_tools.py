"""Arithmetic, number theory, fractions and number notations."""

from __future__ import annotations

import decimal
import math
import random
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from . import _safe_math
from ._common import MAX_NUMBER_DIGITS, as_float, as_floats, check_number_text, clean_number, require_range
from ._registry import ARRAY, ENUM, INTEGER, NUMBER, STRING, ApiSpec, CategorySpec, P, ToolSpec

# ------------------------------------------------------------------------------ quick calculator


def evaluate_expression(expression: str, angle_unit: str = "radians") -> dict[str, Any]:
    """Value of an arithmetic expression, computed by a whitelisted AST walk (no code execution)."""
    value = _safe_math.evaluate(expression, degrees=angle_unit == "degrees")
    out = clean_number(value) if isinstance(value, float) else value
    return {"expression": expression, "result": out, "angle_unit": angle_unit}


def percentage(operation: str, a: float, b: float) -> dict[str, Any]:
    """Everyday percentage questions (a% of b, a is what % of b, change from a to b, b plus/minus a%)."""
    x, y = as_float(a, "a"), as_float(b, "b")
    if operation == "percent_of":
        result, text = x / 100 * y, f"{clean_number(x)}% of {clean_number(y)}"
    elif operation == "what_percent":
        if y == 0:
            raise ValueError("b must not be zero")
        result, text = x / y * 100, f"{clean_number(x)} is this % of {clean_number(y)}"
    elif operation == "percent_change":
        if x == 0:
            raise ValueError("a (the starting value) must not be zero")
        result, text = (y - x) / abs(x) * 100, f"% change from {clean_number(x)} to {clean_number(y)}"
    elif operation == "add_percent":
        result, text = y * (1 + x / 100), f"{clean_number(y)} plus {clean_number(x)}%"
    else:
        result, text = y * (1 - x / 100), f"{clean_number(y)} minus {clean_number(x)}%"
    return {"operation": operation, "question": text, "result": clean_number(result)}


def average(numbers: list[Any]) -> dict[str, Any]:
    """Arithmetic mean, sum and count of a list of numbers."""
    xs = as_floats(numbers, "numbers")
    return {"count": len(xs), "sum": clean_number(math.fsum(xs)), "mean": clean_number(math.fsum(xs) / len(xs))}


_ROUNDING = MappingProxyType({
    "half_up": decimal.ROUND_HALF_UP, "half_even": decimal.ROUND_HALF_EVEN, "down": decimal.ROUND_DOWN,
    "up": decimal.ROUND_UP, "floor": decimal.ROUND_FLOOR, "ceiling": decimal.ROUND_CEILING,
})


def round_number(number: float, decimals: int = 0, mode: str = "half_up") -> dict[str, Any]:
    """Round to a number of decimal places with an explicit rounding rule."""
    require_range(decimals, "decimals", -15, 15)
    d = decimal.Decimal(str(as_float(number, "number")))
    q = decimal.Decimal(1).scaleb(-decimals)
    try:
        out = d.quantize(q, rounding=_ROUNDING[mode]) if decimals >= 0 else (d / q).quantize(
            decimal.Decimal(1), rounding=_ROUNDING[mode]) * q
    except decimal.InvalidOperation:
        raise ValueError(f"{number} has too many digits to round to {decimals} decimals") from None
    return {"number": number, "decimals": decimals, "mode": mode, "result": clean_number(float(out))}


def scientific_notation(number: float, significant_digits: int = 4) -> dict[str, Any]:
    """A number in scientific and engineering notation."""
    require_range(significant_digits, "significant_digits", 1, 17)
    x = as_float(number, "number")
    exp = 0 if x == 0 else math.floor(math.log10(abs(x)))
    mant = 0.0 if x == 0 else x / 10**exp
    mant = round(mant, significant_digits - 1)
    if abs(mant) >= 10:
        mant, exp = mant / 10, exp + 1
    eng_exp = exp - exp % 3
    eng = round(x / 10**eng_exp, max(0, significant_digits - 1 - (exp - eng_exp)))
    return {"number": number, "scientific": f"{mant:.{significant_digits - 1}f}e{exp:+d}", "mantissa": mant,
            "exponent": exp, "engineering": f"{clean_number(eng)}e{eng_exp:+d}"}


# ------------------------------------------------------------------------------ number theory
_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)


def _is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin for n < 3.3e24."""
    if n < 2:
        return False
    for p in _MR_BASES:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def _pollard_rho(n: int) -> int:
    if n % 2 == 0:
        return 2
    rng = random.Random(n)  # deterministic per input
    while True:
        x = y = rng.randrange(2, n)
        c, d = rng.randrange(1, n), 1
        while d == 1:
            x = (x * x + c) % n
            y = (y * y + c) % n
            y = (y * y + c) % n
            d = math.gcd(abs(x - y), n)
        if d != n:
            return d


def _factor(n: int) -> list[int]:
    out: list[int] = []
    for p in (2, 3, 5, 7, 11, 13):
        while n % p == 0:
            out.append(p)
            n //= p
    stack = [n] if n > 1 else []
    while stack:
        m = stack.pop()
        if _is_prime(m):
            out.append(m)
            continue
        d = _pollard_rho(m)
        stack.extend((d, m // d))
    return sorted(out)


def _int_arg(value: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(check_number_text(value, name, max_digits=len(str(max(abs(lo), abs(hi)))) + 1))
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    require_range(value, name, lo, hi)
    return value


def prime_check(n: int) -> dict[str, Any]:
    """Whether n is prime (deterministic Miller-Rabin), with its smallest factor otherwise."""
    n = _int_arg(n, "n", 0, 10**24)
    prime = _is_prime(n)
    smallest = None if prime or n < 2 else _factor(n)[0]
    return {"n": n, "is_prime": prime, "smallest_factor": smallest}


def prime_factors(n: int) -> dict[str, Any]:
    """Prime factorisation of n (up to 10^18)."""
    n = _int_arg(n, "n", 2, 10**18)
    factors = _factor(n)
    counts: dict[int, int] = {}
    for f in factors:
        counts[f] = counts.get(f, 0) + 1
    text = " × ".join(f"{p}^{e}" if e > 1 else str(p) for p, e in counts.items())
    return {"n": n, "factors": factors, "powers": [{"prime": p, "exponent": e} for p, e in counts.items()],
            "text": text}


def gcd_lcm(numbers: list[Any]) -> dict[str, Any]:
    """Greatest common divisor and least common multiple of integers."""
    if not isinstance(numbers, list) or len(numbers) < 2:
        raise ValueError("numbers must list at least two integers")
    ints = [_int_arg(v, f"numbers[{i}]", -(10**18), 10**18) for i, v in enumerate(numbers)]
    return {"numbers": ints, "gcd": math.gcd(*ints), "lcm": math.lcm(*ints)}


def fibonacci(n: int) -> dict[str, Any]:
    """The n-th Fibonacci number (F0 = 0, F1 = 1), as a decimal string."""
    n = _int_arg(n, "n", 0, 20000)
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    text = str(a)
    return {"n": n, "value": text, "digits": len(text)}


def next_prime(n: int) -> dict[str, Any]:
    """The smallest prime greater than n, and the largest prime smaller than n."""
    n = _int_arg(n, "n", 0, 10**18)
    up = n + 1
    while not _is_prime(up):
        up += 1
    down = n - 1
    while down >= 2 and not _is_prime(down):
        down -= 1
    return {"n": n, "next_prime": up, "previous_prime": down if down >= 2 else None}


def divisors(n: int) -> dict[str, Any]:
    """All positive divisors of n (up to 10^12), their count and sum; says whether n is perfect."""
    n = _int_arg(n, "n", 1, 10**12)
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    divs = sorted(set(small + [n // d for d in small]))
    return {"n": n, "divisors": divs, "count": len(divs), "sum": sum(divs), "is_perfect": sum(divs) == 2 * n}


def primes_in_range(start: int, end: int) -> dict[str, Any]:
    """Primes p with start ≤ p ≤ end (range width at most 1,000,000)."""
    lo, hi = _int_arg(start, "start", 0, 10**12), _int_arg(end, "end", 0, 10**12)
    if hi < lo:
        lo, hi = hi, lo
    if hi - lo > 1_000_000:
        raise ValueError("the range may be at most 1,000,000 wide")
    sieve = bytearray([1]) * (hi - lo + 1)
    for p in range(2, math.isqrt(hi) + 1):
        first = max(p * p, (lo + p - 1) // p * p)
        sieve[first - lo:: p] = bytes(len(range(first, hi + 1, p)))
    primes = [lo + i for i, flag in enumerate(sieve) if flag and lo + i >= 2]
    return {"start": lo, "end": hi, "count": len(primes), "primes": primes[:1000], "truncated": len(primes) > 1000}


# ------------------------------------------------------------------------------ fractions
def _fraction(text: Any, name: str) -> Fraction:
    s = check_number_text(str(text).strip(), name)
    try:
        if " " in s and "/" in s:  # mixed number "1 3/4"
            whole, frac = s.split(None, 1)
            w, f = Fraction(whole), Fraction(frac)
            return w - f if w < 0 or whole.startswith("-") else w + f
        return Fraction(s)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{name} must be a fraction like '3/4', '-2', '1 1/2' or '0.75', got {text!r}") from None


def _frac_out(f: Fraction) -> dict[str, Any]:
    whole, rest = divmod(abs(f.numerator), f.denominator)
    sign = "-" if f < 0 else ""
    mixed = f"{sign}{whole} {rest}/{f.denominator}" if whole and rest else str(f)
    return {"fraction": str(f), "numerator": f.numerator, "denominator": f.denominator, "mixed": mixed,
            "decimal": clean_number(float(f))}


def simplify_fraction(numerator: int, denominator: int) -> dict[str, Any]:
    """Reduce a fraction to lowest terms."""
    num = _int_arg(numerator, "numerator", -(10**MAX_NUMBER_DIGITS), 10**MAX_NUMBER_DIGITS)
    den = _int_arg(denominator, "denominator", -(10**MAX_NUMBER_DIGITS), 10**MAX_NUMBER_DIGITS)
    if den == 0:
        raise ValueError("denominator must not be zero")
    return {"input": f"{numerator}/{denominator}", "gcd": math.gcd(num, den), **_frac_out(Fraction(num, den))}


def fraction_arithmetic(a: str, operation: str, b: str) -> dict[str, Any]:
    """Exact arithmetic on fractions: add, subtract, multiply, divide."""
    x, y = _fraction(a, "a"), _fraction(b, "b")
    if operation == "divide" and y == 0:
        raise ValueError("division by zero")
    result = {"add": x + y, "subtract": x - y, "multiply": x * y, "divide": x / y if y else Fraction(0)}[operation]
    return {"a": str(x), "operation": operation, "b": str(y), **_frac_out(result)}


def decimal_to_fraction(decimal_value: str, max_denominator: int = 1000000) -> dict[str, Any]:
    """The exact (or best rational approximation within max_denominator) fraction of a decimal."""
    require_range(max_denominator, "max_denominator", 1, 10**12)
    f = _fraction(decimal_value, "decimal_value")
    approx = f.limit_denominator(int(max_denominator))
    return {"input": str(decimal_value), "exact": approx == f, **_frac_out(approx)}


def fraction_to_decimal(fraction: str) -> dict[str, Any]:
    """Decimal expansion of a fraction with the repeating part shown in parentheses (1/7 = 0.(142857))."""
    f = _fraction(fraction, "fraction")
    sign = "-" if f < 0 else ""
    num, den = abs(f.numerator), f.denominator
    whole, rem = divmod(num, den)
    digits: list[str] = []
    seen: dict[int, int] = {}
    while rem and rem not in seen and len(digits) < 1000:
        seen[rem] = len(digits)
        rem *= 10
        digits.append(str(rem // den))
        rem %= den
    if rem and rem in seen:
        i = seen[rem]
        text = f"{sign}{whole}." + "".join(digits[:i]) + "(" + "".join(digits[i:]) + ")"
        repeating = "".join(digits[i:])
    else:
        text = f"{sign}{whole}" + ("." + "".join(digits) if digits else "")
        repeating = ""
    return {"fraction": str(f), "decimal": text, "repeating": repeating, "approximate": clean_number(float(f))}


# ------------------------------------------------------------------------------ number notations
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def convert_base(number: str, from_base: int = 10, to_base: int = 2) -> dict[str, Any]:
    """An integer written in one base (2-36) rewritten in another."""
    require_range(from_base, "from_base", 2, 36)
    require_range(to_base, "to_base", 2, 36)
    text = str(number).strip().lower().replace("_", "")
    for prefix, base in (("0x", 16), ("0b", 2), ("0o", 8)):
        if text.lstrip("-").startswith(prefix) and from_base == base:
            text = text.replace(prefix, "", 1)
    if len(text) > 200:
        raise ValueError("number is too long")
    try:
        value = int(text, from_base)
    except ValueError:
        raise ValueError(f"{number!r} is not a base-{from_base} integer") from None
    n, out = abs(value), ""
    while n:
        n, r = divmod(n, to_base)
        out = _DIGITS[r] + out
    out = ("-" if value < 0 else "") + (out or "0")
    return {"input": str(number), "from_base": from_base, "to_base": to_base, "result": out, "decimal": str(value)}


_ROMAN = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
          (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))


def to_roman(number: int) -> dict[str, Any]:
    """An integer from 1 to 3999 in Roman numerals."""
    n = _int_arg(number, "number", 1, 3999)
    out, rest = "", n
    for value, sym in _ROMAN:
        count, rest = divmod(rest, value)
        out += sym * count
    return {"number": n, "roman": out}


def from_roman(roman: str) -> dict[str, Any]:
    """The integer value of a (canonical) Roman numeral."""
    text = str(roman).strip().upper()
    values = dict((sym, v) for v, sym in _ROMAN if len(sym) == 1)
    if not text or any(ch not in values for ch in text):
        raise ValueError(f"{roman!r} is not a Roman numeral")
    total = 0
    for i, ch in enumerate(text):
        v = values[ch]
        total += -v if i + 1 < len(text) and values[text[i + 1]] > v else v
    if not 1 <= total <= 3999 or to_roman(total)["roman"] != text:
        raise ValueError(f"{roman!r} is not a canonical Roman numeral")
    return {"roman": text, "number": total}


_ONES = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"
)
_TENS = (
    "_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"
)
_SCALES = ((10**15, "quadrillion"), (10**12, "trillion"), (10**9, "billion"), (10**6, "million"),
           (1000, "thousand"))


def _words(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("-" + _ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return _ONES[n // 100] + " hundred" + (" " + _words(n % 100) if n % 100 else "")
    for scale, name in _SCALES:
        if n >= scale:
            return _words(n // scale) + " " + name + (" " + _words(n % scale) if n % scale else "")
    raise AssertionError(n)  # pragma: no cover


def number_to_words(number: int) -> dict[str, Any]:
    """An integer written out in English words (|n| < 10^18)."""
    n = _int_arg(number, "number", -(10**18) + 1, 10**18 - 1)
    text = ("minus " if n < 0 else "") + _words(abs(n))
    return {"number": n, "words": text}


# ------------------------------------------------------------------------------ declarations
def category() -> CategorySpec:
    """The Mathematics category."""
    calculator = ToolSpec(
        name="Quick Calculator",
        key="quick_calculator",
        description="A fast calculator: evaluate arithmetic expressions with functions (sqrt, sin, log, "
                    "factorial...), percentages, the average of a few numbers, rounding and scientific notation.",
        apis=(
            ApiSpec(evaluate_expression, "Evaluate Expression",
                    "Compute an arithmetic expression such as '(3+4)*2^5 - sqrt(16)'. Supports + - * / // % ** "
                    "(or ^), parentheses, constants pi, e, tau, phi and functions "
                    f"{', '.join(_safe_math.FUNCTION_NAMES)}.",
                    (P("expression", STRING, "Arithmetic expression.", "(3 + 4) * 2^5 - sqrt(16)"),
                     P("angle_unit", ENUM, "Angle unit of trigonometric functions.", None, ("radians", "degrees"))),
                    {"expression": "str", "result": "float", "angle_unit": "str"}),
            ApiSpec(percentage, "Percentage Calculator",
                    "Percentage questions: percent_of (a% of b), what_percent (a is what % of b), percent_change "
                    "(from a to b), add_percent (b + a%), subtract_percent (b - a%, e.g. a discount).",
                    (P("operation", ENUM, "Which question.", "percent_of",
                       ("percent_of", "what_percent", "percent_change", "add_percent", "subtract_percent")),
                     P("a", NUMBER, "First number (usually the percentage).", 15),
                     P("b", NUMBER, "Second number (usually the base value).", 80)),
                    {"operation": "str", "question": "str", "result": "float"}),
            ApiSpec(average, "Average of Numbers", "The arithmetic mean (average), sum and count of a list of numbers.",
                    (P("numbers", ARRAY, "Numbers.", [4, 8, 15, 16, 23, 42]),),
                    {"count": "int", "sum": "float", "mean": "float"}),
            ApiSpec(round_number, "Round Number",
                    "Round a number to a number of decimals (negative = tens, hundreds...) with an explicit rule.",
                    (P("number", NUMBER, "Number to round.", 2.675), P("decimals", INTEGER, "Decimal places."),
                     P("mode", ENUM, "Rounding rule.", None, tuple(_ROUNDING))),
                    {"number": "float", "decimals": "int", "mode": "str", "result": "float"}),
            ApiSpec(scientific_notation, "Scientific Notation",
                    "Write a number in scientific (1.234e+05) and engineering (123.4e+03) notation.",
                    (P("number", NUMBER, "Number.", 123456.789),
                     P("significant_digits", INTEGER, "Significant digits (1-17).")),
                    {"number": "float", "scientific": "str", "mantissa": "float", "exponent": "int",
                     "engineering": "str"}),
        ),
    )
    number_theory = ToolSpec(
        name="Number Theory Toolkit",
        key="number_theory_toolkit",
        description="Integer functions: primality tests, prime factorisation, GCD/LCM, Fibonacci numbers, "
                    "next/previous prime, divisors and perfect numbers, primes in a range.",
        apis=(
            ApiSpec(prime_check, "Prime Check", "Whether an integer is prime; gives its smallest factor otherwise.",
                    (P("n", INTEGER, "Integer to test (up to 10^24).", 2147483647),),
                    {"n": "int", "is_prime": "bool", "smallest_factor": "int"}),
            ApiSpec(prime_factors, "Prime Factorization", "The prime factors of an integer (2 to 10^18).",
                    (P("n", INTEGER, "Integer to factor.", 360),),
                    {"n": "int", "factors": ["list of int with length 6"],
                     "powers": [{"prime": "int", "exponent": "int", "_list_length": 3}], "text": "str"}),
            ApiSpec(gcd_lcm, "GCD and LCM", "Greatest common divisor and least common multiple of several integers.",
                    (P("numbers", ARRAY, "Integers.", [12, 18, 30]),),
                    {"numbers": ["list of int with length 3"], "gcd": "int", "lcm": "int"}),
            ApiSpec(fibonacci, "Fibonacci Number", "The n-th Fibonacci number (exact, as a string of digits).",
                    (P("n", INTEGER, "Index n (0-20000).", 90),), {"n": "int", "value": "str", "digits": "int"}),
            ApiSpec(next_prime, "Next Prime", "The nearest primes above and below an integer.",
                    (P("n", INTEGER, "Integer.", 1000),),
                    {"n": "int", "next_prime": "int", "previous_prime": "int"}),
            ApiSpec(divisors, "List Divisors", "All divisors of an integer, their count and sum, perfect-number check.",
                    (P("n", INTEGER, "Integer 1 to 10^12.", 28),),
                    {"n": "int", "divisors": ["list of int with length 6"], "count": "int", "sum": "int",
                     "is_perfect": "bool"}),
            ApiSpec(primes_in_range, "Primes in Range", "All primes between two integers (at most 1,000 listed).",
                    (P("start", INTEGER, "Lower bound.", 100), P("end", INTEGER, "Upper bound.", 150)),
                    {"start": "int", "end": "int", "count": "int", "primes": ["list of int with length 10"],
                     "truncated": "bool"}),
        ),
    )
    fractions_tool = ToolSpec(
        name="Fraction Calculator",
        key="fraction_calculator",
        description="Exact rational arithmetic: simplify fractions, add/subtract/multiply/divide fractions and "
                    "mixed numbers, convert decimals to fractions and fractions to (repeating) decimals.",
        apis=(
            ApiSpec(simplify_fraction, "Simplify Fraction", "Reduce a fraction to lowest terms.",
                    (P("numerator", INTEGER, "Numerator.", 42), P("denominator", INTEGER, "Denominator.", 56)),
                    {"input": "str", "gcd": "int", "fraction": "str", "numerator": "int", "denominator": "int",
                     "mixed": "str", "decimal": "float"}),
            ApiSpec(fraction_arithmetic, "Fraction Arithmetic",
                    "Add, subtract, multiply or divide two fractions or mixed numbers ('1 1/2').",
                    (P("a", STRING, "First fraction.", "3/4"),
                     P("operation", ENUM, "Operation.", "add", ("add", "subtract", "multiply", "divide")),
                     P("b", STRING, "Second fraction.", "5/6")),
                    {"a": "str", "operation": "str", "b": "str", "fraction": "str", "numerator": "int",
                     "denominator": "int", "mixed": "str", "decimal": "float"}),
            ApiSpec(decimal_to_fraction, "Decimal to Fraction",
                    "The fraction equal to a decimal, or its best approximation with a bounded denominator.",
                    (P("decimal_value", STRING, "Decimal number as text.", "0.875"),
                     P("max_denominator", INTEGER, "Largest denominator allowed.")),
                    {"input": "str", "exact": "bool", "fraction": "str", "numerator": "int", "denominator": "int",
                     "mixed": "str", "decimal": "float"}),
            ApiSpec(fraction_to_decimal, "Fraction to Decimal",
                    "Exact decimal expansion of a fraction, marking the repeating block: 1/7 → 0.(142857).",
                    (P("fraction", STRING, "Fraction.", "5/12"),),
                    {"fraction": "str", "decimal": "str", "repeating": "str", "approximate": "float"}),
        ),
    )
    notation = ToolSpec(
        name="Number Notation Converter",
        key="number_notation_converter",
        description="Write numbers differently: any base from 2 to 36 (binary, octal, hex...), Roman numerals "
                    "both ways, and integers spelled out in English words.",
        apis=(
            ApiSpec(convert_base, "Convert Number Base", "Rewrite an integer from one base (2-36) into another.",
                    (P("number", STRING, "Integer in the source base.", "255"),
                     P("from_base", INTEGER, "Source base."), P("to_base", INTEGER, "Target base.")),
                    {"input": "str", "from_base": "int", "to_base": "int", "result": "str", "decimal": "str"}),
            ApiSpec(to_roman, "To Roman Numerals", "Write an integer (1-3999) in Roman numerals.",
                    (P("number", INTEGER, "Integer 1-3999.", 1994),), {"number": "int", "roman": "str"}),
            ApiSpec(from_roman, "From Roman Numerals", "Read a Roman numeral as an integer.",
                    (P("roman", STRING, "Roman numeral.", "MCMXCIV"),), {"roman": "str", "number": "int"}),
            ApiSpec(number_to_words, "Number to Words", "Spell an integer out in English words.",
                    (P("number", INTEGER, "Integer.", 1234567),), {"number": "int", "words": "str"}),
        ),
    )
    return CategorySpec(name="Mathematics",
                        description="Calculators, number theory, fractions and number notations.",
                        tools=(calculator, number_theory, fractions_tool, notation))
