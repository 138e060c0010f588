"""Plane and solid geometry, equations and small matrices (exact arithmetic where possible)."""

from __future__ import annotations

import cmath
import math
from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from ._common import as_float, as_floats, clean_number
from ._registry import ARRAY, ENUM, NUMBER, OBJECT, ApiSpec, CategorySpec, P, ToolSpec


def _positive(value: float, name: str) -> float:
    x = as_float(value, name)
    if x <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return x


# ------------------------------------------------------------------------------ geometry
def circle_properties(radius: float) -> dict[str, Any]:
    """Diameter, circumference and area of a circle."""
    r = _positive(radius, "radius")
    return {"radius": clean_number(r), "diameter": clean_number(2 * r), "circumference": clean_number(2 * math.pi * r),
            "area": clean_number(math.pi * r * r)}


def rectangle_properties(width: float, height: float) -> dict[str, Any]:
    """Area, perimeter and diagonal of a rectangle."""
    w, h = _positive(width, "width"), _positive(height, "height")
    return {"width": clean_number(w), "height": clean_number(h), "area": clean_number(w * h),
            "perimeter": clean_number(2 * (w + h)), "diagonal": clean_number(math.hypot(w, h)),
            "is_square": w == h}


def triangle_from_sides(a: float, b: float, c: float) -> dict[str, Any]:
    """Area (Heron), perimeter, angles and kind of a triangle given its three sides."""
    x, y, z = _positive(a, "a"), _positive(b, "b"), _positive(c, "c")
    if x + y <= z or x + z <= y or y + z <= x:
        raise ValueError("these sides violate the triangle inequality")
    s = (x + y + z) / 2
    area = math.sqrt(max(0.0, s * (s - x) * (s - y) * (s - z)))
    ang_a = math.degrees(math.acos(max(-1.0, min(1.0, (y * y + z * z - x * x) / (2 * y * z)))))
    ang_b = math.degrees(math.acos(max(-1.0, min(1.0, (x * x + z * z - y * y) / (2 * x * z)))))
    ang_c = 180.0 - ang_a - ang_b
    sides = len({round(x, 9), round(y, 9), round(z, 9)})
    by_sides = {1: "equilateral", 2: "isosceles", 3: "scalene"}[sides]
    biggest = max(ang_a, ang_b, ang_c)
    by_angle = "right" if abs(biggest - 90) < 1e-7 else ("obtuse" if biggest > 90 else "acute")
    return {"sides": [clean_number(x), clean_number(y), clean_number(z)], "perimeter": clean_number(2 * s),
            "area": clean_number(area), "angles_degrees": [round(ang_a, 6), round(ang_b, 6), round(ang_c, 6)],
            "kind_by_sides": by_sides, "kind_by_angles": by_angle}


def right_triangle(leg_a: float, leg_b: float) -> dict[str, Any]:
    """Hypotenuse (Pythagoras), area and acute angles of a right triangle from its legs."""
    x, y = _positive(leg_a, "leg_a"), _positive(leg_b, "leg_b")
    return {"leg_a": clean_number(x), "leg_b": clean_number(y), "hypotenuse": clean_number(math.hypot(x, y)),
            "area": clean_number(x * y / 2), "angle_a_degrees": round(math.degrees(math.atan2(x, y)), 6),
            "angle_b_degrees": round(math.degrees(math.atan2(y, x)), 6)}


_SOLIDS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "cube": ("side",), "rectangular_prism": ("length", "width", "height"), "sphere": ("radius",),
    "cylinder": ("radius", "height"), "cone": ("radius", "height"), "square_pyramid": ("base_side", "height"),
})


def solid_volume(solid: str, dimensions: dict[str, Any]) -> dict[str, Any]:
    """Volume and surface area of a common solid."""
    need = _SOLIDS[solid]
    if not isinstance(dimensions, dict):
        raise ValueError("dimensions must be an object")
    missing = [k for k in need if k not in dimensions]
    if missing:
        raise ValueError(f"{solid} needs dimensions {list(need)}; missing {missing}")
    d = {k: _positive(dimensions[k], k) for k in need}
    if solid == "cube":
        s = d["side"]
        vol, area = s**3, 6 * s * s
    elif solid == "rectangular_prism":
        length, w, h = d["length"], d["width"], d["height"]
        vol, area = length * w * h, 2 * (length * w + length * h + w * h)
    elif solid == "sphere":
        r = d["radius"]
        vol, area = 4 / 3 * math.pi * r**3, 4 * math.pi * r * r
    elif solid == "cylinder":
        r, h = d["radius"], d["height"]
        vol, area = math.pi * r * r * h, 2 * math.pi * r * (r + h)
    elif solid == "cone":
        r, h = d["radius"], d["height"]
        vol, area = math.pi * r * r * h / 3, math.pi * r * (r + math.hypot(r, h))
    else:
        b, h = d["base_side"], d["height"]
        vol, area = b * b * h / 3, b * b + 2 * b * math.hypot(b / 2, h)
    return {"solid": solid, "dimensions": {k: clean_number(v) for k, v in d.items()}, "volume": clean_number(vol),
            "surface_area": clean_number(area)}


# ------------------------------------------------------------------------------ equations
def solve_quadratic(a: float, b: float, c: float) -> dict[str, Any]:
    """Roots of a·x² + b·x + c = 0 (real or complex), discriminant and vertex."""
    qa, qb, qc = as_float(a, "a"), as_float(b, "b"), as_float(c, "c")
    if qa == 0:
        if qb == 0:
            raise ValueError("a and b are both zero: not an equation in x")
        root = -qc / qb
        return {"discriminant": None, "root_type": "linear", "roots": [str(clean_number(root))],
                "real_roots": [clean_number(root)], "vertex": None}
    disc = qb * qb - 4 * qa * qc
    sq = cmath.sqrt(disc)
    r1, r2 = (-qb + sq) / (2 * qa), (-qb - sq) / (2 * qa)

    def fmt(z: complex) -> str:
        if abs(z.imag) < 1e-15:
            return str(clean_number(z.real))
        return f"{clean_number(z.real)}{'+' if z.imag >= 0 else '-'}{clean_number(abs(z.imag))}i"

    real = sorted({clean_number(z.real) for z in (r1, r2)}) if disc >= 0 else []
    kind = "two real" if disc > 0 else ("one real (double)" if disc == 0 else "two complex")
    vx = -qb / (2 * qa)
    return {"discriminant": clean_number(disc), "root_type": kind, "roots": [fmt(r1), fmt(r2)], "real_roots": real,
            "vertex": {"x": clean_number(vx), "y": clean_number(qa * vx * vx + qb * vx + qc)}}


def _matrix(rows: Any, name: str) -> list[list[Fraction]]:
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
        raise ValueError(f"{name} must be a list of rows (lists of numbers)")
    if len(rows) > 12 or any(len(r) != len(rows[0]) for r in rows) or not rows[0]:
        raise ValueError(f"{name} must be rectangular with at most 12 rows")
    return [[Fraction(str(as_float(v, f"{name}[{i}][{j}]"))) for j, v in enumerate(r)] for i, r in enumerate(rows)]


def _num(f: Fraction) -> float | int:
    return clean_number(f.numerator if f.denominator == 1 else float(f))


def solve_linear_system(coefficients: list[Any], constants: list[Any]) -> dict[str, Any]:
    """Solve A·x = b exactly (Gauss-Jordan on fractions); reports singular systems."""
    m = _matrix(coefficients, "coefficients")
    n = len(m)
    if len(m[0]) != n:
        raise ValueError("coefficients must be a square matrix")
    bvec = [Fraction(str(v)) for v in as_floats(constants, "constants")]
    if len(bvec) != n:
        raise ValueError(f"constants must have {n} numbers")
    aug = [[*row, bvec[i]] for i, row in enumerate(m)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if aug[r][col] != 0), None)
        if pivot is None:
            return {"solvable": False, "unique": False, "solution": [], "solution_fractions": []}
        aug[col], aug[pivot] = aug[pivot], aug[col]
        pv = aug[col][col]
        aug[col] = [v / pv for v in aug[col]]
        for r in range(n):
            if r != col and aug[r][col] != 0:
                factor = aug[r][col]
                aug[r] = [v - factor * w for v, w in zip(aug[r], aug[col], strict=True)]
    xs = [aug[i][n] for i in range(n)]
    return {"solvable": True, "unique": True, "solution": [_num(x) for x in xs],
            "solution_fractions": [str(x) for x in xs]}


def determinant(matrix: list[Any]) -> dict[str, Any]:
    """Exact determinant of a square matrix (up to 12×12)."""
    m = _matrix(matrix, "matrix")
    n = len(m)
    if len(m[0]) != n:
        raise ValueError("matrix must be square")
    det = Fraction(1)
    for col in range(n):
        pivot = next((r for r in range(col, n) if m[r][col] != 0), None)
        if pivot is None:
            det = Fraction(0)
            break
        if pivot != col:
            m[col], m[pivot] = m[pivot], m[col]
            det = -det
        det *= m[col][col]
        for r in range(col + 1, n):
            factor = m[r][col] / m[col][col]
            m[r] = [v - factor * w for v, w in zip(m[r], m[col], strict=True)]
    return {"size": n, "determinant": _num(det), "exact": str(det), "invertible": det != 0}


def evaluate_polynomial(coefficients: list[Any], x: float) -> dict[str, Any]:
    """Value of a polynomial (coefficients from the highest power down) at x, and its derivative."""
    cs = as_floats(coefficients, "coefficients")
    xv = as_float(x, "x")
    value, deriv = 0.0, 0.0
    for c in cs:  # Horner
        deriv = deriv * xv + value
        value = value * xv + c
    deg = len(cs) - 1
    terms = [f"{clean_number(c)}x^{deg - i}" if deg - i > 1 else (f"{clean_number(c)}x" if deg - i == 1
             else f"{clean_number(c)}") for i, c in enumerate(cs) if c]
    return {"polynomial": " + ".join(terms) or "0", "x": clean_number(xv), "value": clean_number(value),
            "derivative": clean_number(deriv)}


# ------------------------------------------------------------------------------ declarations
def category() -> CategorySpec:
    """The Algebra_Geometry category."""
    geometry = ToolSpec(
        name="Geometry Calculator",
        key="geometry_calculator",
        description="Plane and solid geometry: circles, rectangles, triangles from three sides, right "
                    "triangles (Pythagoras), and the volume and surface area of cubes, spheres, cylinders, cones...",
        apis=(
            ApiSpec(circle_properties, "Circle Properties", "Diameter, circumference and area of a circle.",
                    (P("radius", NUMBER, "Radius.", 5),),
                    {"radius": "float", "diameter": "float", "circumference": "float", "area": "float"}),
            ApiSpec(rectangle_properties, "Rectangle Properties", "Area, perimeter and diagonal of a rectangle.",
                    (P("width", NUMBER, "Width.", 4), P("height", NUMBER, "Height.", 3)),
                    {"width": "float", "height": "float", "area": "float", "perimeter": "float", "diagonal": "float",
                     "is_square": "bool"}),
            ApiSpec(triangle_from_sides, "Triangle from Sides",
                    "Area (Heron's formula), perimeter, angles and type of a triangle from its three side lengths.",
                    (P("a", NUMBER, "Side a.", 3), P("b", NUMBER, "Side b.", 4), P("c", NUMBER, "Side c.", 5)),
                    {"sides": ["list of float with length 3"], "perimeter": "float", "area": "float",
                     "angles_degrees": ["list of float with length 3"], "kind_by_sides": "str",
                     "kind_by_angles": "str"}),
            ApiSpec(right_triangle, "Right Triangle Solver",
                    "Hypotenuse (Pythagorean theorem), area and angles of a right triangle from its two legs.",
                    (P("leg_a", NUMBER, "First leg.", 6), P("leg_b", NUMBER, "Second leg.", 8)),
                    {"leg_a": "float", "leg_b": "float", "hypotenuse": "float", "area": "float",
                     "angle_a_degrees": "float", "angle_b_degrees": "float"}),
            ApiSpec(solid_volume, "Solid Volume and Surface",
                    "Volume and surface area of a solid. Dimensions per solid: cube {side}; rectangular_prism "
                    "{length, width, height}; sphere {radius}; cylinder/cone {radius, height}; square_pyramid "
                    "{base_side, height}.",
                    (P("solid", ENUM, "Kind of solid.", "cylinder", tuple(_SOLIDS)),
                     P("dimensions", OBJECT, "Named dimensions of the solid.", {"radius": 3, "height": 10})),
                    {"solid": "str", "dimensions": {"radius": "float", "height": "float"}, "volume": "float",
                     "surface_area": "float"}),
        ),
    )
    algebra = ToolSpec(
        name="Equation Solver",
        key="equation_solver",
        description="Algebra helpers: quadratic equations (real and complex roots), systems of linear equations "
                    "solved exactly, determinants of matrices, and polynomial evaluation.",
        apis=(
            ApiSpec(solve_quadratic, "Solve Quadratic Equation",
                    "Roots of a·x² + b·x + c = 0, the discriminant and the parabola's vertex.",
                    (P("a", NUMBER, "Coefficient of x².", 1), P("b", NUMBER, "Coefficient of x.", -3),
                     P("c", NUMBER, "Constant term.", 2)),
                    {"discriminant": "float", "root_type": "str", "roots": ["list of str with length 2"],
                     "real_roots": ["list of float with length 2"], "vertex": {"x": "float", "y": "float"}}),
            ApiSpec(solve_linear_system, "Solve Linear System",
                    "Solve n linear equations in n unknowns given the coefficient matrix A (rows) and constants b.",
                    (P("coefficients", ARRAY, "Matrix A as a list of rows.", [[2, 1], [1, 3]]),
                     P("constants", ARRAY, "Vector b.", [3, 5])),
                    {"solvable": "bool", "unique": "bool", "solution": ["list of float with length 2"],
                     "solution_fractions": ["list of str with length 2"]}),
            ApiSpec(determinant, "Matrix Determinant", "Exact determinant of a square matrix.",
                    (P("matrix", ARRAY, "Square matrix as a list of rows.", [[1, 2, 3], [4, 5, 6], [7, 8, 10]]),),
                    {"size": "int", "determinant": "float", "exact": "str", "invertible": "bool"}),
            ApiSpec(evaluate_polynomial, "Evaluate Polynomial",
                    "Value and derivative of a polynomial at x; coefficients from the highest power down.",
                    (P("coefficients", ARRAY, "Coefficients, highest power first.", [2, -3, 0, 5]),
                     P("x", NUMBER, "Point.", 2)),
                    {"polynomial": "str", "x": "float", "value": "float", "derivative": "float"}),
        ),
    )
    return CategorySpec(name="Algebra_Geometry", description="Geometry formulas, equations and matrices.",
                        tools=(geometry, algebra))
