"""Personal-finance calculators: loans, investments and shopping arithmetic (no market data)."""

from __future__ import annotations

import math
from typing import Any

from ._common import as_float, as_floats, require_range
from ._registry import ARRAY, BOOLEAN, INTEGER, NUMBER, ApiSpec, CategorySpec, P, ToolSpec


def _money(x: float) -> float:
    return round(x + 0.0, 2)


def _rate(value: float, name: str) -> float:
    r = as_float(value, name)
    require_range(r, name, -99.99, 1000)
    return r / 100


def _payment(principal: float, period_rate: float, periods: int) -> float:
    if period_rate == 0:
        return principal / periods
    return principal * period_rate / (1 - (1 + period_rate) ** -periods)


# ------------------------------------------------------------------------------ loans
def loan_payment(principal: float, annual_rate_percent: float, years: float,
                 payments_per_year: int = 12) -> dict[str, Any]:
    """Fixed instalment of an amortising loan, with total paid and total interest."""
    p = as_float(principal, "principal")
    require_range(p, "principal", 0.01)
    require_range(payments_per_year, "payments_per_year", 1, 365)
    n = round(as_float(years, "years") * payments_per_year)
    if n < 1 or n > 12000:
        raise ValueError("years × payments_per_year must give 1 to 12000 payments")
    pay = _payment(p, _rate(annual_rate_percent, "annual_rate_percent") / payments_per_year, n)
    return {"payment": _money(pay), "number_of_payments": n, "total_paid": _money(pay * n),
            "total_interest": _money(pay * n - p)}


def amortization_schedule(principal: float, annual_rate_percent: float, years: int) -> dict[str, Any]:
    """Year-by-year principal and interest of a monthly amortising loan."""
    p = as_float(principal, "principal")
    require_range(p, "principal", 0.01)
    require_range(years, "years", 1, 50)
    r = _rate(annual_rate_percent, "annual_rate_percent") / 12
    n = years * 12
    pay = _payment(p, r, n)
    balance, rows = p, []
    for year in range(1, years + 1):
        paid_p = paid_i = 0.0
        for _ in range(12):
            interest = balance * r
            principal_part = min(balance, pay - interest)
            balance -= principal_part
            paid_p += principal_part
            paid_i += interest
        rows.append({"year": year, "principal_paid": _money(paid_p), "interest_paid": _money(paid_i),
                     "balance": _money(max(0.0, balance))})
    return {"monthly_payment": _money(pay), "total_interest": _money(pay * n - p), "years": rows}


def affordable_loan(monthly_payment: float, annual_rate_percent: float, years: float) -> dict[str, Any]:
    """The loan amount a given monthly payment can repay."""
    pay = as_float(monthly_payment, "monthly_payment")
    require_range(pay, "monthly_payment", 0.01)
    n = round(as_float(years, "years") * 12)
    require_range(n, "years*12", 1, 12000)
    r = _rate(annual_rate_percent, "annual_rate_percent") / 12
    principal = pay * n if r == 0 else pay * (1 - (1 + r) ** -n) / r
    return {"loan_amount": _money(principal), "number_of_payments": n, "total_paid": _money(pay * n),
            "total_interest": _money(pay * n - principal)}


# ------------------------------------------------------------------------------ investments
def compound_interest(principal: float, annual_rate_percent: float, years: float, compounds_per_year: int = 12,
                      monthly_contribution: float = 0) -> dict[str, Any]:
    """Future value of a deposit (plus optional monthly contributions) with compound interest."""
    p = as_float(principal, "principal")
    require_range(compounds_per_year, "compounds_per_year", 1, 365)
    t = as_float(years, "years")
    require_range(t, "years", 0, 200)
    r = _rate(annual_rate_percent, "annual_rate_percent")
    m = compounds_per_year
    fv_principal = p * (1 + r / m) ** (m * t)
    c = as_float(monthly_contribution, "monthly_contribution")
    months = round(t * 12)
    monthly_eff = (1 + r / m) ** (m / 12) - 1
    fv_contrib = c * months if monthly_eff == 0 else c * ((1 + monthly_eff) ** months - 1) / monthly_eff
    total = fv_principal + fv_contrib
    invested = p + c * months
    return {"future_value": _money(total), "total_contributions": _money(invested),
            "interest_earned": _money(total - invested), "effective_annual_rate_percent": round(
                ((1 + r / m) ** m - 1) * 100, 6)}


def net_present_value(rate_percent: float, cash_flows: list[Any]) -> dict[str, Any]:
    """NPV of cash flows at periods 0, 1, 2... discounted at a rate per period."""
    flows = as_floats(cash_flows, "cash_flows")
    r = _rate(rate_percent, "rate_percent")
    npv = math.fsum(cf / (1 + r) ** t for t, cf in enumerate(flows))
    return {"rate_percent": rate_percent, "periods": len(flows), "npv": _money(npv)}


def internal_rate_of_return(cash_flows: list[Any]) -> dict[str, Any]:
    """IRR: the per-period rate at which the NPV of the cash flows is zero (bisection)."""
    flows = as_floats(cash_flows, "cash_flows", min_len=2)
    if not (any(f < 0 for f in flows) and any(f > 0 for f in flows)):
        raise ValueError("cash flows need at least one negative and one positive value")

    def npv(rate: float) -> float:
        return math.fsum(cf / (1 + rate) ** t for t, cf in enumerate(flows))

    lo, hi = -0.9999, 10.0
    if npv(lo) * npv(hi) > 0:
        raise ValueError("no IRR between -99.99% and 1000%")
    for _ in range(300):
        mid = (lo + hi) / 2
        if npv(lo) * npv(mid) <= 0:
            hi = mid
        else:
            lo = mid
    return {"irr_percent": round((lo + hi) / 2 * 100, 6), "periods": len(flows)}


def cagr(start_value: float, end_value: float, years: float) -> dict[str, Any]:
    """Compound annual growth rate between two values."""
    a, b, t = as_float(start_value, "start_value"), as_float(end_value, "end_value"), as_float(years, "years")
    if a <= 0 or b <= 0 or t <= 0:
        raise ValueError("start_value, end_value and years must be positive")
    rate = (b / a) ** (1 / t) - 1
    return {"cagr_percent": round(rate * 100, 6), "total_growth_percent": round((b / a - 1) * 100, 6)}


def doubling_time(annual_rate_percent: float) -> dict[str, Any]:
    """Years to double money at a compound rate, exact and by the rule of 72."""
    r = as_float(annual_rate_percent, "annual_rate_percent")
    if r <= 0:
        raise ValueError("annual_rate_percent must be positive")
    return {"exact_years": round(math.log(2) / math.log1p(r / 100), 4), "rule_of_72_years": round(72 / r, 4)}


def inflation_adjust(amount: float, annual_inflation_percent: float, years: float) -> dict[str, Any]:
    """Future price of today's amount and today's value of a future amount at a constant inflation rate."""
    a, t = as_float(amount, "amount"), as_float(years, "years")
    require_range(t, "years", 0, 200)
    factor = (1 + _rate(annual_inflation_percent, "annual_inflation_percent")) ** t
    return {"amount": a, "future_cost": _money(a * factor), "present_value_of_future_amount": _money(a / factor),
            "cumulative_inflation_percent": round((factor - 1) * 100, 4)}


# ------------------------------------------------------------------------------ shopping
def tip_split(bill: float, tip_percent: float = 15, people: int = 1) -> dict[str, Any]:
    """Tip amount, total and each person's share of a restaurant bill."""
    b = as_float(bill, "bill")
    require_range(b, "bill", 0)
    require_range(people, "people", 1, 1000)
    tip = b * as_float(tip_percent, "tip_percent") / 100
    return {"bill": _money(b), "tip": _money(tip), "total": _money(b + tip), "per_person": _money((b + tip) / people)}


def discount_price(price: float, discount_percent: float, tax_percent: float = 0) -> dict[str, Any]:
    """Sale price after a percentage discount, then sales tax."""
    p = as_float(price, "price")
    d = as_float(discount_percent, "discount_percent")
    require_range(d, "discount_percent", 0, 100)
    sale = p * (1 - d / 100)
    tax = sale * as_float(tax_percent, "tax_percent") / 100
    return {"original_price": _money(p), "savings": _money(p - sale), "sale_price": _money(sale), "tax": _money(tax),
            "final_price": _money(sale + tax)}


def sales_tax(amount: float, tax_rate_percent: float, tax_included: bool = False) -> dict[str, Any]:
    """Add tax to a net amount, or extract the tax contained in a gross amount."""
    a = as_float(amount, "amount")
    rate = as_float(tax_rate_percent, "tax_rate_percent") / 100
    net = a / (1 + rate) if tax_included else a
    return {"net": _money(net), "tax": _money(net * rate), "gross": _money(net * (1 + rate))}


def unit_price_comparison(items: list[Any]) -> dict[str, Any]:
    """Price per unit of several offers ({name, price, quantity}); cheapest first."""
    if not isinstance(items, list) or not items:
        raise ValueError("items must be a non-empty list of {name, price, quantity}")
    rows = []
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            raise ValueError(f"items[{i}] must be an object with name, price and quantity")
        qty = as_float(it.get("quantity"), f"items[{i}].quantity")
        if qty <= 0:
            raise ValueError(f"items[{i}].quantity must be positive")
        price = as_float(it.get("price"), f"items[{i}].price")
        rows.append((round(price / qty, 6), str(it.get("name", f"item {i + 1}"))))
    rows.sort(key=lambda r: r[0])
    return {"cheapest": rows[0][1], "ranking": [{"name": name, "unit_price": unit} for unit, name in rows]}


def profit_margin(cost: float, price: float) -> dict[str, Any]:
    """Profit, margin (on price) and markup (on cost)."""
    c, p = as_float(cost, "cost"), as_float(price, "price")
    if c <= 0 or p <= 0:
        raise ValueError("cost and price must be positive")
    return {"profit": _money(p - c), "margin_percent": round((p - c) / p * 100, 4),
            "markup_percent": round((p - c) / c * 100, 4)}


# ------------------------------------------------------------------------------ declarations
def category() -> CategorySpec:
    """The Finance_Calculators category."""
    principal = P("principal", NUMBER, "Loan or deposit amount.", 250000)
    rate = P("annual_rate_percent", NUMBER, "Nominal annual interest rate in percent.", 6.5)
    loans = ToolSpec(
        name="Loan Calculator",
        key="loan_calculator",
        description="Mortgage and loan arithmetic: fixed monthly payment, total interest, yearly amortization "
                    "schedule, and how much you can borrow for a given payment.",
        apis=(
            ApiSpec(loan_payment, "Loan Payment",
                    "Fixed payment of an amortising loan (mortgage, car loan), number of payments, total interest.",
                    (principal, rate, P("years", NUMBER, "Term in years.", 30),
                     P("payments_per_year", INTEGER, "Payments per year (12 = monthly).")),
                    {"payment": "float", "number_of_payments": "int", "total_paid": "float",
                     "total_interest": "float"}),
            ApiSpec(amortization_schedule, "Amortization Schedule",
                    "For a monthly-paid loan: principal and interest paid each year and the remaining balance.",
                    (P("principal", NUMBER, "Loan amount.", 20000), P("annual_rate_percent", NUMBER, "Rate %.", 5),
                     P("years", INTEGER, "Term in years (1-50).", 5)),
                    {"monthly_payment": "float", "total_interest": "float",
                     "years": [{"year": "int", "principal_paid": "float", "interest_paid": "float",
                                "balance": "float", "_list_length": 5}]}),
            ApiSpec(affordable_loan, "Affordable Loan Amount",
                    "The largest loan a monthly payment can repay at a rate over a term.",
                    (P("monthly_payment", NUMBER, "Monthly budget.", 1500), rate, P("years", NUMBER, "Term.", 25)),
                    {"loan_amount": "float", "number_of_payments": "int", "total_paid": "float",
                     "total_interest": "float"}),
        ),
    )
    invest = ToolSpec(
        name="Investment Calculator",
        key="investment_calculator",
        description="Growth of money over time: compound interest with regular contributions, NPV and IRR of "
                    "cash flows, CAGR, doubling time (rule of 72) and inflation adjustment.",
        apis=(
            ApiSpec(compound_interest, "Compound Interest",
                    "Future value of a deposit with compound interest and optional monthly contributions.",
                    (P("principal", NUMBER, "Initial deposit.", 10000), P("annual_rate_percent", NUMBER, "Rate %.", 5),
                     P("years", NUMBER, "Years.", 10), P("compounds_per_year", INTEGER, "Compounding periods a year."),
                     P("monthly_contribution", NUMBER, "Amount added every month.")),
                    {"future_value": "float", "total_contributions": "float", "interest_earned": "float",
                     "effective_annual_rate_percent": "float"}),
            ApiSpec(net_present_value, "Net Present Value",
                    "NPV of cash flows (first one at time 0, usually the negative investment) at a discount rate.",
                    (P("rate_percent", NUMBER, "Discount rate per period in percent.", 8),
                     P("cash_flows", ARRAY, "Cash flows per period.", [-1000, 300, 400, 500])),
                    {"rate_percent": "float", "periods": "int", "npv": "float"}),
            ApiSpec(internal_rate_of_return, "Internal Rate of Return",
                    "IRR of cash flows: the discount rate that makes their NPV zero.",
                    (P("cash_flows", ARRAY, "Cash flows per period.", [-1000, 300, 400, 500]),),
                    {"irr_percent": "float", "periods": "int"}),
            ApiSpec(cagr, "Compound Annual Growth Rate", "CAGR between a start and an end value over some years.",
                    (P("start_value", NUMBER, "Starting value.", 10000), P("end_value", NUMBER, "Ending value.", 19000),
                     P("years", NUMBER, "Years.", 5)),
                    {"cagr_percent": "float", "total_growth_percent": "float"}),
            ApiSpec(doubling_time, "Doubling Time", "How many years money takes to double at an annual rate.",
                    (P("annual_rate_percent", NUMBER, "Annual rate in percent.", 7),),
                    {"exact_years": "float", "rule_of_72_years": "float"}),
            ApiSpec(inflation_adjust, "Inflation Adjustment",
                    "What today's amount will cost in the future, and what a future amount is worth today.",
                    (P("amount", NUMBER, "Amount.", 100), P("annual_inflation_percent", NUMBER, "Inflation %.", 3),
                     P("years", NUMBER, "Years.", 10)),
                    {"amount": "float", "future_cost": "float", "present_value_of_future_amount": "float",
                     "cumulative_inflation_percent": "float"}),
        ),
    )
    shopping = ToolSpec(
        name="Shopping Calculator",
        key="shopping_calculator",
        description="Everyday money arithmetic: tips and bill splitting, discounts, sales tax/VAT, comparing unit "
                    "prices, profit margin and markup.",
        apis=(
            ApiSpec(tip_split, "Tip Calculator", "Tip, total and per-person share of a bill.",
                    (P("bill", NUMBER, "Bill amount.", 84.6), P("tip_percent", NUMBER, "Tip in percent."),
                     P("people", INTEGER, "Number of people splitting.")),
                    {"bill": "float", "tip": "float", "total": "float", "per_person": "float"}),
            ApiSpec(discount_price, "Discount Price", "Sale price after a discount, plus optional sales tax.",
                    (P("price", NUMBER, "Original price.", 80), P("discount_percent", NUMBER, "Discount %.", 25),
                     P("tax_percent", NUMBER, "Sales tax % applied after the discount.")),
                    {"original_price": "float", "savings": "float", "sale_price": "float", "tax": "float",
                     "final_price": "float"}),
            ApiSpec(sales_tax, "Sales Tax / VAT",
                    "Add tax to a net amount, or (tax_included) split a gross amount into net and tax.",
                    (P("amount", NUMBER, "Amount.", 119), P("tax_rate_percent", NUMBER, "Tax rate %.", 19),
                     P("tax_included", BOOLEAN, "Whether the amount already includes the tax.")),
                    {"net": "float", "tax": "float", "gross": "float"}),
            ApiSpec(unit_price_comparison, "Unit Price Comparison",
                    "Compare offers by price per unit (e.g. per gram) and name the cheapest.",
                    (P("items", ARRAY, "Offers as {name, price, quantity}.",
                       [{"name": "small", "price": 2.5, "quantity": 400}, {"name": "large", "price": 5.2,
                                                                           "quantity": 1000}]),),
                    {"cheapest": "str", "ranking": [{"name": "str", "unit_price": "float", "_list_length": 2}]}),
            ApiSpec(profit_margin, "Profit Margin", "Profit, margin percent and markup percent from cost and price.",
                    (P("cost", NUMBER, "Cost.", 60), P("price", NUMBER, "Selling price.", 100)),
                    {"profit": "float", "margin_percent": "float", "markup_percent": "float"}),
        ),
    )
    return CategorySpec(name="Finance_Calculators",
                        description="Loan, investment and shopping calculators (no live market data).",
                        tools=(loans, invest, shopping))
