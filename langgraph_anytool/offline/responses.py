"""API responses described in words (the offline policy's answers are built from these sentences)."""

from __future__ import annotations

from typing import Any


def _scalar(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e15 else str(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def describe_response(response: Any, limit: int = 8) -> str:
    """A short readable text of an API response (its `text`/`summary` field, else its key facts)."""
    if isinstance(response, dict):
        for key in ("text", "summary", "answer", "message", "result_text"):
            if isinstance(response.get(key), str) and response[key].strip():
                return response[key].strip()
        parts = []
        for key, value in response.items():
            if isinstance(value, dict | list):
                if isinstance(value, list) and value:
                    items = ", ".join(_brief(v) for v in value[:3])
                    parts.append(f"{key}: {items}" + (f" (+{len(value) - 3} more)" if len(value) > 3 else ""))
                elif isinstance(value, dict) and value:
                    parts.append(f"{key}: {_brief(value)}")
                continue
            if value is not None and value != "":
                parts.append(f"{key.replace('_', ' ')}: {_scalar(value)}")
            if len(parts) >= limit:
                break
        return "; ".join(parts)
    if isinstance(response, list):
        return f"{len(response)} result(s): " + ", ".join(_brief(v) for v in response[:5])
    return _scalar(response) if response is not None else ""


def _brief(value: Any) -> str:
    if isinstance(value, dict):
        for key in ("name", "title", "text", "date", "value", "id"):
            if key in value and not isinstance(value[key], dict | list):
                extra = next((f" ({_scalar(value[k])})" for k in ("date", "value", "code") if k != key and k in value
                              and not isinstance(value[k], dict | list)), "")
                return f"{_scalar(value[key])}{extra}"
        return ", ".join(f"{k}={_scalar(v)}" for k, v in list(value.items())[:3] if not isinstance(v, dict | list))
    return _scalar(value)

