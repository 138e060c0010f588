"""Units and quantities: a general pint-based converter and smaller fixed-table converters."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ._common import as_float, check_number_text, clean_number, require_range
from ._registry import ENUM, INTEGER, NUMBER, STRING, ApiSpec, CategorySpec, P, ToolSpec


@functools.lru_cache(maxsize=1)
def _ureg() -> Any:
    import pint

    ureg: Any = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
    for name, definition in RACE_DISTANCES.items():
        ureg.define(f"{name} = {definition}")
    return ureg


# Road-race distances as length units (World Athletics: the marathon is 42.195 km, the half marathon half of it).
RACE_DISTANCES: Mapping[str, str] = MappingProxyType({"marathon": "42195 * meter",
                                                      "half_marathon": "21097.5 * meter"})


# Unit texts and quantity expressions are evaluated by pint with Python numbers: "10**99999999 m" would compute a
# 100-million-digit integer (holding the GIL). `_check_size` bounds them first, from pint's own parse tree.
MAX_EXPRESSION_BITS = 4096  # an upper bound of the size of any number the expression computes
MAX_EXPONENT = 1000  # |exponent| of a power


class _Size:
    """An upper bound of a value's size in bits, and the value itself when it is a plain number (for exponents)."""

    def __init__(self, bits: float, value: float | None = None) -> None:
        if bits > MAX_EXPRESSION_BITS:
            raise ValueError(f"the numbers are too large (more than {MAX_EXPRESSION_BITS} bits)")
        self.bits, self.value = bits, value


def _size_of_token(token: Any) -> _Size:
    import tokenize

    if token.type != tokenize.NUMBER:
        return _Size(0)  # a unit or constant name: pint keeps unit powers as exponents, factors as floats
    text = check_number_text(token.string, "a number", max_digits=300, max_exponent=400)
    mantissa, _, exponent = text.lower().replace("_", "").partition("e")
    digits = len(mantissa.split(".")[0].lstrip("0")) + max(0, int(exponent or 0))
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        value = None
    return _Size(digits * 3.33, value)


def _plain(op: str, x: float, y: float) -> float | None:
    """`x op y` for plain numbers (floats: nothing here can grow without bound), None when undefined."""
    try:
        out = {"+": x + y, "-": x - y, "*": x * y, "": x * y}.get(op)
        if out is None and op in ("/", "//", "%"):
            out = x / y
        if op == "**":
            power = float(x) ** y
            out = power if isinstance(power, float) else None  # not a complex root
    except (OverflowError, ZeroDivisionError):
        return None
    return out


def _size_op(op: str) -> Any:
    def apply(a: _Size, b: _Size) -> _Size:
        value = _plain(op, a.value, b.value) if a.value is not None and b.value is not None else None
        if op == "**":
            if b.value is None or not abs(b.value) <= MAX_EXPONENT:
                raise ValueError(f"an exponent must be a number of at most {MAX_EXPONENT}")
            return _Size(a.bits * max(1.0, abs(b.value)), value)
        if op in ("+", "-", "+/-"):
            return _Size(max(a.bits, b.bits) + 1, value)
        return _Size(a.bits + b.bits, value)

    return apply


def _check_size(text: str, name: str) -> str:
    """`text` when the numbers its evaluation computes stay small (see `MAX_EXPRESSION_BITS`); else ValueError.
    Text that pint cannot parse is passed on (pint says what is wrong with it)."""
    from pint import pint_eval
    from pint.util import string_preprocessor

    check_number_text(text, name, max_digits=300, max_exponent=400)
    source = text
    for pre in _ureg().preprocessors:
        source = pre(source)
    try:
        tree = pint_eval.build_eval_tree(pint_eval.tokenizer(string_preprocessor(source)))
    except Exception:  # a syntax error: pint reports it when it reads the text
        return text
    binary = {op: _size_op(op) for op in ("+/-", "**", "*", "", "/", "+", "-", "%", "//")}
    unary = {"+": lambda a: a, "-": lambda a: _Size(a.bits, None if a.value is None else -a.value)}
    try:
        tree.evaluate(_size_of_token, binary, unary)
    except ValueError as exc:
        raise ValueError(f"{name} {text[:60]!r}: {exc}") from None
    except Exception:  # pint's own evaluation reports a malformed tree
        return text
    return text


def _quantity(value: float, unit: str) -> Any:
    import pint

    ureg = _ureg()
    try:
        return ureg.Quantity(as_float(value, "value"), _check_size(str(unit).strip(), "unit"))
    except (pint.errors.PintError, AttributeError, TypeError, AssertionError) as exc:
        raise ValueError(f"unknown unit {unit!r}: {exc}") from None


def _units(unit: str) -> Any:
    import pint

    try:
        return _ureg().parse_units(_check_size(str(unit).strip(), "unit"))
    except (pint.errors.PintError, AttributeError, TypeError, AssertionError) as exc:
        raise ValueError(f"unknown unit {unit!r}: {exc}") from None


def _to(q: Any, unit: str) -> Any:
    import pint

    target = _units(unit)
    try:
        return q.to(target)
    except pint.errors.DimensionalityError as exc:
        raise ValueError(f"cannot convert: {exc}") from None


def _fmt(value: float, unit: Any) -> str:
    return f"{clean_number(value)} {unit:~}" if str(unit) else str(clean_number(value))


# ------------------------------------------------------------------------------ pint-based converter
def convert_units(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert a value between any two compatible units."""
    q = _quantity(value, from_unit)
    out = _to(q, to_unit)
    return {"value": clean_number(q.magnitude), "from_unit": str(q.units), "to_unit": str(out.units),
            "result": clean_number(float(out.magnitude)), "text": f"{_fmt(q.magnitude, q.units)} = "
            f"{_fmt(float(out.magnitude), out.units)}"}


def convert_expression(expression: str, to_unit: str) -> dict[str, Any]:
    """Evaluate a quantity expression such as '3 ft + 2 in' and express it in `to_unit`."""
    import pint

    text = str(expression).strip()
    if not text or len(text) > 200:
        raise ValueError("expression must be 1-200 characters")
    if any(tok in text for tok in ("__", "lambda", "[", "{")):
        raise ValueError(f"not a quantity expression: {text!r}")
    _check_size(text, "expression")
    try:
        q = _ureg().Quantity(text)
    except (pint.errors.PintError, AttributeError, TypeError, SyntaxError, ValueError, AssertionError) as exc:
        raise ValueError(f"cannot read quantity expression {text!r}: {exc}") from None
    if not hasattr(q, "units"):
        raise ValueError(f"{text!r} has no unit")
    out = _to(q, to_unit)
    return {"expression": text, "result": clean_number(float(out.magnitude)), "unit": str(out.units),
            "text": _fmt(float(out.magnitude), out.units)}


def unit_info(unit: str) -> dict[str, Any]:
    """Name, symbol, dimensionality and SI base equivalent of a unit."""
    u = _units(unit)
    base = _ureg().Quantity(1, u).to_base_units()
    return {"unit": str(u), "symbol": f"{u:~}", "dimensionality": str(u.dimensionality) or "dimensionless",
            "base_value": clean_number(float(base.magnitude)), "base_unit": str(base.units)}


def compatible_units(unit: str, limit: int = 20) -> dict[str, Any]:
    """Units with the same dimensionality as `unit` (alphabetical, at most `limit`)."""
    require_range(limit, "limit", 1, 500)
    u = _units(unit)
    names = sorted(str(c) for c in _ureg().get_compatible_units(u))
    return {"unit": str(u), "dimensionality": str(u.dimensionality), "count": len(names), "units": names[:limit]}


def simplify_quantity(value: float, unit: str) -> dict[str, Any]:
    """Express a quantity in SI base units and with the most readable prefix."""
    q = _quantity(value, unit)
    base = q.to_base_units()
    compact = base.to_compact()
    return {"input": _fmt(q.magnitude, q.units), "base": _fmt(float(base.magnitude), base.units),
            "compact": _fmt(float(compact.magnitude), compact.units)}


def compare_quantities(value_a: float, unit_a: str, value_b: float, unit_b: str) -> dict[str, Any]:
    """Which of two quantities of the same kind is larger, and their ratio."""
    a = _quantity(value_a, unit_a)
    b = _to(_quantity(value_b, unit_b), str(a.units))
    ratio = float(a.magnitude) / float(b.magnitude) if b.magnitude else None
    larger = "equal" if clean_number(float(a.magnitude)) == clean_number(float(b.magnitude)) else (
        "a" if a.magnitude > b.magnitude else "b")
    return {"a": _fmt(a.magnitude, a.units), "b_in_a_units": _fmt(float(b.magnitude), b.units), "larger": larger,
            "ratio_a_to_b": None if ratio is None else clean_number(ratio)}


# ------------------------------------------------------------------------------ fixed-table converter
_LENGTH_M = MappingProxyType({
    "mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048, "yd": 0.9144, "mi": 1609.344,
    "nmi": 1852.0,
})
_MASS_KG = MappingProxyType({
    "mg": 1e-6, "g": 0.001, "kg": 1.0, "t": 1000.0, "oz": 0.028349523125, "lb": 0.45359237, "st": 6.35029318,
    "us_ton": 907.18474,
})
_VOLUME_L = MappingProxyType({
    "ml": 0.001, "cl": 0.01, "l": 1.0, "m3": 1000.0, "tsp": 0.00492892159375, "tbsp": 0.01478676478125,
    "fl_oz": 0.0295735295625, "cup": 0.2365882365, "pt": 0.473176473, "qt": 0.946352946, "gal": 3.785411784,
    "imp_gal": 4.54609,
})
_SPEED_MS = MappingProxyType({"m/s": 1.0, "km/h": 1 / 3.6, "mph": 0.44704, "knot": 1852 / 3600, "ft/s": 0.3048})
_AREA_M2 = MappingProxyType({
    "mm2": 1e-6, "cm2": 1e-4, "m2": 1.0, "ha": 1e4, "km2": 1e6, "in2": 0.00064516, "ft2": 0.09290304,
    "yd2": 0.83612736, "acre": 4046.8564224, "mi2": 2589988.110336,
})


def _table_convert(table: Mapping[str, float], kind: str, value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    for u in (from_unit, to_unit):
        if u not in table:
            raise ValueError(f"unknown {kind} unit {u!r}; known: {', '.join(table)}")
    v = as_float(value, "value")
    result = v * table[from_unit] / table[to_unit]
    return {"value": clean_number(v), "from": from_unit, "to": to_unit, "result": clean_number(result)}


def convert_length(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Length between metric and imperial units."""
    return _table_convert(_LENGTH_M, "length", value, from_unit, to_unit)


def convert_weight(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Mass between metric and imperial units."""
    return _table_convert(_MASS_KG, "weight", value, from_unit, to_unit)


def convert_volume(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Volume between metric, US customary and imperial-gallon units."""
    return _table_convert(_VOLUME_L, "volume", value, from_unit, to_unit)


def convert_speed(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Speed between m/s, km/h, mph, knots and ft/s."""
    return _table_convert(_SPEED_MS, "speed", value, from_unit, to_unit)


def convert_area(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Area between metric and imperial units."""
    return _table_convert(_AREA_M2, "area", value, from_unit, to_unit)


def _to_kelvin(v: float, scale: str) -> float:
    return {"C": v + 273.15, "F": (v - 32) * 5 / 9 + 273.15, "K": v, "R": v * 5 / 9}[scale]


def _from_kelvin(k: float, scale: str) -> float:
    return {"C": k - 273.15, "F": (k - 273.15) * 9 / 5 + 32, "K": k, "R": k * 9 / 5}[scale]


def convert_temperature(value: float, from_scale: str, to_scale: str) -> dict[str, Any]:
    """Temperature between Celsius, Fahrenheit, Kelvin and Rankine."""
    v = as_float(value, "value")
    kelvin = _to_kelvin(v, from_scale)
    if kelvin < -1e-9:
        raise ValueError(f"{v} {from_scale} is below absolute zero")
    return {"value": clean_number(v), "from": from_scale, "to": to_scale,
            "result": clean_number(_from_kelvin(kelvin, to_scale))}


# ------------------------------------------------------------------------------ cooking
# grams per US cup (approximate, spooned and levelled)
_GRAMS_PER_CUP = MappingProxyType({
    "all-purpose flour": 125.0, "bread flour": 127.0, "granulated sugar": 200.0, "brown sugar": 213.0,
    "powdered sugar": 120.0, "butter": 227.0, "water": 236.6, "milk": 242.0, "honey": 340.0, "white rice": 185.0,
    "rolled oats": 90.0, "cocoa powder": 85.0, "table salt": 292.0, "vegetable oil": 218.0,
})
_COOK_ML = MappingProxyType({
    "tsp": 4.92892159375, "tbsp": 14.78676478125, "fl_oz": 29.5735295625, "cup": 236.5882365, "pint": 473.176473,
    "quart": 946.352946, "gallon": 3785.411784, "ml": 1.0, "l": 1000.0,
})
_GAS_MARKS = ((1, 140), (2, 150), (3, 170), (4, 180), (5, 190), (6, 200), (7, 220), (8, 230), (9, 240))


def cooking_volume(amount: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Kitchen volume measures (US customary spoons/cups and metric)."""
    out = _table_convert(_COOK_ML, "cooking", amount, from_unit, to_unit)
    return {"amount": out["value"], "from": from_unit, "to": to_unit, "result": out["result"]}


def ingredient_to_grams(ingredient: str, amount: float, unit: str = "cup") -> dict[str, Any]:
    """Approximate weight in grams of a volume of a common ingredient."""
    if ingredient not in _GRAMS_PER_CUP:
        raise ValueError(f"unknown ingredient {ingredient!r}; known: {', '.join(_GRAMS_PER_CUP)}")
    if unit not in _COOK_ML:
        raise ValueError(f"unknown unit {unit!r}; known: {', '.join(_COOK_ML)}")
    a = as_float(amount, "amount")
    require_range(a, "amount", 0)
    grams = a * _COOK_ML[unit] / _COOK_ML["cup"] * _GRAMS_PER_CUP[ingredient]
    return {"ingredient": ingredient, "amount": clean_number(a), "unit": unit, "grams": round(grams, 1),
            "ounces": round(grams / 28.349523125, 2)}


def oven_temperature(value: float, scale: str = "C") -> dict[str, Any]:
    """An oven setting in Celsius, Fahrenheit and the nearest British gas mark."""
    v = as_float(value, "value")
    if scale == "gas_mark":
        marks = dict(_GAS_MARKS)
        if int(v) != v or int(v) not in marks:
            raise ValueError("gas_mark must be a whole number from 1 to 9")
        celsius = float(marks[int(v)])
    elif scale == "F":
        celsius = (v - 32) * 5 / 9
    else:
        celsius = v
    nearest = min(_GAS_MARKS, key=lambda m: abs(m[1] - celsius))
    return {"celsius": round(celsius), "fahrenheit": round(celsius * 9 / 5 + 32), "gas_mark": nearest[0]}


# ------------------------------------------------------------------------------ data sizes
_BYTES = MappingProxyType({
    "bit": 0.125, "B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15, "KiB": 1024.0,
    "MiB": 1024.0**2, "GiB": 1024.0**3, "TiB": 1024.0**4, "PiB": 1024.0**5, "Kbit": 125.0, "Mbit": 125e3,
    "Gbit": 125e6,
})


def convert_data_size(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Data sizes between bits, decimal (KB, MB…) and binary (KiB, MiB…) units."""
    return _table_convert(_BYTES, "data size", value, from_unit, to_unit)


def human_readable_size(num_bytes: float, binary: bool = False) -> dict[str, Any]:
    """A byte count as a short human-readable string (decimal or binary prefixes)."""
    n = as_float(num_bytes, "num_bytes")
    require_range(n, "num_bytes", 0)
    base, units = (1024.0, ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]) if binary else (
        1000.0, ["B", "KB", "MB", "GB", "TB", "PB", "EB"])
    size, i = n, 0
    while size >= base and i < len(units) - 1:
        size /= base
        i += 1
    return {"bytes": clean_number(n), "text": f"{size:.2f} {units[i]}" if i else f"{clean_number(n)} B",
            "value": round(size, 2), "unit": units[i]}


def transfer_time(size: float, size_unit: str, bandwidth_mbps: float) -> dict[str, Any]:
    """How long a transfer of `size` takes at `bandwidth_mbps` megabits per second."""
    if size_unit not in _BYTES:
        raise ValueError(f"unknown size unit {size_unit!r}; known: {', '.join(_BYTES)}")
    bw = as_float(bandwidth_mbps, "bandwidth_mbps")
    if bw <= 0:
        raise ValueError("bandwidth_mbps must be positive")
    seconds = as_float(size, "size") * _BYTES[size_unit] * 8 / (bw * 1e6)
    if not 0 <= seconds < 1e15:
        raise ValueError("size must be non-negative and the transfer shorter than 10^15 s")
    whole = round(seconds)
    return {"seconds": round(seconds, 3), "hms": f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"}


# ------------------------------------------------------------------------------ declarations
def _pair_params(table: Mapping[str, float], kind: str, a: str, b: str) -> tuple[P, ...]:
    units = tuple(table)
    return (
        P("value", NUMBER, f"The {kind} value to convert.", 1),
        P("from_unit", ENUM, f"Unit of the value: {', '.join(units)}.", a, units),
        P("to_unit", ENUM, f"Unit to convert to: {', '.join(units)}.", b, units),
    )


_TABLE_TEMPLATE = MappingProxyType({"value": "float", "from": "str", "to": "str", "result": "float"})


def category() -> CategorySpec:
    """The Units_Conversion category."""
    general = ToolSpec(
        name="Universal Unit Converter",
        key="universal_unit_converter",
        description="Converts between thousands of physical units (SI, imperial, US customary, CGS, "
                    "astronomical, energy, pressure, currency-free) using the pint units library. Accepts "
                    "unit names, symbols and compound units such as 'km/h', 'kWh', 'N*m' or 'mile/gallon'.",
        apis=(
            ApiSpec(convert_units, "Convert Units",
                    "Convert a numeric value from one unit to another compatible unit (e.g. miles to kilometers, "
                    "kWh to joule, psi to bar, degC to degF). Lengths include race distances: 'marathon' "
                    "(how far a marathon is) and 'half_marathon'.",
                    (P("value", NUMBER, "Numeric value to convert.", 1),
                     P("from_unit", STRING, "Unit of the value (name or symbol, e.g. 'mile', 'degC', 'km/h').",
                       "mile"),
                     P("to_unit", STRING, "Target unit, same dimension as from_unit.", "km")),
                    {"value": "float", "from_unit": "str", "to_unit": "str", "result": "float", "text": "str"}, max_argument_chars=200),
            ApiSpec(convert_expression, "Convert Quantity Expression",
                    "Evaluate an arithmetic expression of quantities with units (e.g. '3 ft + 2 in', "
                    "'60 mi / 1.5 h') and express the result in a target unit.",
                    (P("expression", STRING, "Quantity expression with units.", "3 ft + 2 in"),
                     P("to_unit", STRING, "Unit of the result.", "cm")),
                    {"expression": "str", "result": "float", "unit": "str", "text": "str"}, max_argument_chars=500),
            ApiSpec(unit_info, "Unit Information",
                    "Describe a unit: canonical name, symbol, physical dimensionality and the value of one "
                    "unit in SI base units.",
                    (P("unit", STRING, "Unit name or symbol.", "horsepower"),),
                    {"unit": "str", "symbol": "str", "dimensionality": "str", "base_value": "float",
                     "base_unit": "str"}),
            ApiSpec(compatible_units, "List Compatible Units",
                    "List the units that measure the same physical dimension as a given unit.",
                    (P("unit", STRING, "Unit name or symbol.", "pascal"),
                     P("limit", INTEGER, "Maximum number of units returned (1-500).")),
                    {"unit": "str", "dimensionality": "str", "count": "int",
                     "units": ["list of str with length 20"]}),
            ApiSpec(simplify_quantity, "Simplify Quantity",
                    "Rewrite a quantity in SI base units and with the most readable metric prefix "
                    "(e.g. 1500 m → 1.5 km).",
                    (P("value", NUMBER, "Numeric value.", 1500),
                     P("unit", STRING, "Unit of the value.", "meter")),
                    {"input": "str", "base": "str", "compact": "str"}, max_argument_chars=500),
            ApiSpec(compare_quantities, "Compare Quantities",
                    "Compare two quantities of the same kind given in different units; tells which is larger "
                    "and the ratio a/b.",
                    (P("value_a", NUMBER, "First value.", 1),
                     P("unit_a", STRING, "Unit of the first value.", "mile"),
                     P("value_b", NUMBER, "Second value.", 1500),
                     P("unit_b", STRING, "Unit of the second value.", "meter")),
                    {"a": "str", "b_in_a_units": "str", "larger": "str", "ratio_a_to_b": "float"}),
        ),
    )
    quick = ToolSpec(
        name="Quick Metric Converter",
        key="quick_metric_converter",
        description="Simple everyday conversions between metric and imperial units for length, weight, volume, "
                    "temperature, speed and area, with a fixed list of unit codes per quantity.",
        apis=(
            ApiSpec(convert_length, "Convert Length", "Convert a length (mm, cm, m, km, in, ft, yd, mi, nmi).",
                    _pair_params(_LENGTH_M, "length", "mi", "km"), _TABLE_TEMPLATE),
            ApiSpec(convert_weight, "Convert Weight",
                    "Convert a weight/mass (mg, g, kg, t, oz, lb, st, us_ton).",
                    _pair_params(_MASS_KG, "weight", "lb", "kg"), _TABLE_TEMPLATE),
            ApiSpec(convert_volume, "Convert Volume",
                    "Convert a volume (ml, cl, l, m3, tsp, tbsp, fl_oz, cup, pt, qt, gal, imp_gal).",
                    _pair_params(_VOLUME_L, "volume", "gal", "l"), _TABLE_TEMPLATE),
            ApiSpec(convert_temperature, "Convert Temperature",
                    "Convert a temperature between Celsius (C), Fahrenheit (F), Kelvin (K) and Rankine (R).",
                    (P("value", NUMBER, "Temperature value.", 100),
                     P("from_scale", ENUM, "Scale of the value.", "C", ("C", "F", "K", "R")),
                     P("to_scale", ENUM, "Scale to convert to.", "F", ("C", "F", "K", "R"))),
                    _TABLE_TEMPLATE),
            ApiSpec(convert_speed, "Convert Speed", "Convert a speed (m/s, km/h, mph, knot, ft/s).",
                    _pair_params(_SPEED_MS, "speed", "mph", "km/h"), _TABLE_TEMPLATE),
            ApiSpec(convert_area, "Convert Area",
                    "Convert an area (mm2, cm2, m2, ha, km2, in2, ft2, yd2, acre, mi2); acre is the "
                    "international acre (4046.8564224 m²).",
                    _pair_params(_AREA_M2, "area", "acre", "m2"), _TABLE_TEMPLATE),
        ),
    )
    cooking = ToolSpec(
        name="Kitchen Measurement Helper",
        key="kitchen_measurement_helper",
        description="Cooking conversions: spoons, cups and millilitres, ingredient volume to weight (flour, "
                    "sugar, butter...), and oven temperatures in °C, °F and gas marks.",
        apis=(
            ApiSpec(cooking_volume, "Convert Cooking Volume",
                    "Convert kitchen volumes between tsp, tbsp, fl_oz, cup, pint, quart, gallon (US), ml and l.",
                    (P("amount", NUMBER, "Amount to convert.", 2),
                     P("from_unit", ENUM, "Unit of the amount.", "cup", tuple(_COOK_ML)),
                     P("to_unit", ENUM, "Unit to convert to.", "ml", tuple(_COOK_ML))),
                    {"amount": "float", "from": "str", "to": "str", "result": "float"}),
            ApiSpec(ingredient_to_grams, "Ingredient Volume to Weight",
                    "Approximate grams and ounces of a measured volume of a common baking ingredient.",
                    (P("ingredient", ENUM, "Ingredient.", "all-purpose flour", tuple(_GRAMS_PER_CUP)),
                     P("amount", NUMBER, "How many units.", 1.5),
                     P("unit", ENUM, "Volume unit of the amount.", None, tuple(_COOK_ML))),
                    {"ingredient": "str", "amount": "float", "unit": "str", "grams": "float", "ounces": "float"}),
            ApiSpec(oven_temperature, "Oven Temperature",
                    "Give an oven temperature in Celsius, Fahrenheit and the nearest gas mark.",
                    (P("value", NUMBER, "Temperature or gas mark number.", 180),
                     P("scale", ENUM, "Scale of the value.", None, ("C", "F", "gas_mark"))),
                    {"celsius": "int", "fahrenheit": "int", "gas_mark": "int"}),
        ),
    )
    data = ToolSpec(
        name="Data Size Calculator",
        key="data_size_calculator",
        description="Digital storage and bandwidth arithmetic: convert between bits, bytes, decimal (KB, MB, "
                    "GB) and binary (KiB, MiB, GiB) units, format byte counts, estimate download times.",
        apis=(
            ApiSpec(convert_data_size, "Convert Data Size",
                    "Convert a data size between bit, B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB, Kbit, "
                    "Mbit and Gbit.",
                    _pair_params(_BYTES, "data size", "GiB", "MB"), _TABLE_TEMPLATE),
            ApiSpec(human_readable_size, "Human Readable Size",
                    "Format a number of bytes as a short string such as '1.50 GB' or '1.40 GiB'.",
                    (P("num_bytes", NUMBER, "Number of bytes.", 1500000000),
                     P("binary", "BOOLEAN", "Use binary prefixes (KiB, MiB…) instead of decimal ones.")),
                    {"bytes": "float", "text": "str", "value": "float", "unit": "str"}),
            ApiSpec(transfer_time, "Estimate Transfer Time",
                    "Estimate how long it takes to transfer a file of a given size over a link of a given "
                    "bandwidth in megabits per second.",
                    (P("size", NUMBER, "File size.", 4.7),
                     P("size_unit", ENUM, "Unit of the size.", "GB", tuple(_BYTES)),
                     P("bandwidth_mbps", NUMBER, "Link speed in Mbit/s.", 100)),
                    {"seconds": "float", "hms": "str"}),
        ),
    )
    return CategorySpec(
        name="Units_Conversion",
        description="Unit conversion: physical quantities, everyday metric/imperial measures, cooking and data sizes.",
        tools=(general, quick, cooking, data),
    )
