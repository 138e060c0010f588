"""Load OpenAPI 3 specs (JSON or YAML files, or dicts) as catalog tools.

Mapping (one catalog tool per spec, one API per operation):

- tool: name = ``info.title``, description = ``info.description``, base_url = first ``servers[].url`` with
  server variables replaced by their defaults; key = slugified title (two specs with the same key are an error).
- API: one per ``paths.<path>.<method>`` (get, put, post, delete, options, head, patch, trace); name =
  ``operationId`` or ``"METHOD /path"``; description = ``summary`` and ``description`` (joined when both differ);
  ``Api.method`` = upper-case method, ``Api.path`` = the path template (``/pets/{petId}``).
- parameters: path-level and operation-level ``parameters`` (the operation's entry wins for the same name and
  ``in``); ``in`` is kept as ``Param.location`` (path, query, header; cookie parameters are skipped); path
  parameters are always required. Type from ``schema.type`` (string, number, integer, boolean, array, object;
  ``format: date`` → date, ``format: time`` → time, ``format: binary`` → binary; a 3.1 type list or an
  ``anyOf``/``oneOf`` with ``null`` uses the non-null type), ``enum`` and ``default`` copied.
- request body: the ``application/json`` (or ``*+json``) schema's top-level properties become parameters with
  location ``body``, required per the schema's ``required`` list (``allOf`` parts are merged). A body that is not
  an object with properties becomes one ``body`` parameter. Non-JSON bodies are not mapped. A body property
  whose name equals a path/query/header parameter is dropped (parameter names are unique within an API).
- response template: from the JSON schema of the ``200`` response (else the first other 2xx), in ToolBench's
  template style: ``{"field": "str" | "int" | "float" | "bool" | "NoneType"}``; arrays of objects become
  ``[{..., "_list_length": 1}]``, arrays of scalars ``["str"]``; recursive schemas stop with ``{}``.
- ``$ref``: local references (``#/components/...``) are resolved anywhere; remote references and reference
  cycles are errors. Security schemes are ignored here (the HTTP executor reads keys from the environment).

Errors are `CatalogError`s naming the file (or ``<spec #i>`` for dicts) and the JSON path of the field, e.g.
``paths./pets.get.parameters[0].schema.type``; several bad specs raise one `CatalogLoadError` listing all.
The result goes through `parse.parse_tool`, so ids and keys follow the same rules as ToolBench tools.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from ..sanitize import NestingTooDeep, check_nesting
from ..sanitize.files import DataFileError, load_data_file, repair_surrogates
from .errors import CatalogError, CatalogLoadError
from .models import Category, Tool
from .parse import parse_tool

HTTP_METHODS: tuple[str, ...] = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_JSON_TYPES: frozenset[str] = frozenset(["string", "number", "integer", "boolean", "array", "object"])
_STRING_FORMATS: dict[str, str] = {"date": "date", "time": "time", "binary": "binary"}
_TEMPLATE_SCALARS: dict[str, str] = {
    "string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "NoneType",
}
_MAX_TEMPLATE_DEPTH = 12
MAX_SPEC_BYTES = 10_000_000  # a spec file larger than this is refused before it is read
_SERVER_VAR = re.compile(r"\{([^{}]+)\}")


def _pointer_to_path(pointer: str) -> str:
    """`#/components/schemas/Pet` → `components.schemas.Pet` (the dotted style used in error fields)."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("#").split("/") if p]
    return ".".join(parts) or "#"


class SchemaResolver:
    """Resolves local `$ref`s inside one document and raises errors that name the document and field."""

    def __init__(self, root: Any, source: str) -> None:
        self.root = root
        self.source = source

    def fail(self, message: str, field: str | None = None) -> NoReturn:
        raise CatalogError(message, source=self.source, field=field)

    def _lookup(self, ref: str, where: str) -> Any:
        node = self.root
        for raw in ref[1:].split("/")[1:] if ref.startswith("#/") else []:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                self.fail(f"unresolvable $ref {ref!r}", f"{where}.$ref")
        return node

    def deref(self, node: Any, where: str) -> tuple[Any, str]:
        """Follow a chain of `$ref`s; returns the target and its dotted path."""
        seen: set[str] = set()
        while isinstance(node, Mapping) and "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#"):
                self.fail(f"only local references ('#/...') are supported, got {ref!r}", f"{where}.$ref")
            if ref in seen:
                self.fail(f"circular $ref {ref!r}", f"{where}.$ref")
            seen.add(ref)
            node = self._lookup(ref, where)
            where = _pointer_to_path(ref)
        return node, where

    # ------------------------------------------------------------ parameter types
    def _non_null_variant(self, schema: Mapping[str, Any], where: str) -> tuple[Any, str] | None:
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list):
                for i, opt in enumerate(options):
                    target, at = self.deref(opt, f"{where}.{key}[{i}]")
                    if isinstance(target, Mapping) and target.get("type") != "null":
                        return target, at
        return None

    def param_fields(self, schema: Any, where: str) -> dict[str, Any]:
        """A JSON schema → ToolBench parameter fields: `type`, and `enum` / `default` / `description` when set."""
        outer = schema if isinstance(schema, Mapping) else {}
        resolved, at = self.deref(schema, where)
        if resolved is None:
            resolved = {}
        if not isinstance(resolved, Mapping):
            self.fail(f"schema must be an object, got {type(resolved).__name__}", at)
        variant = self._non_null_variant(resolved, at) if "type" not in resolved else None
        if variant is not None:
            resolved, at = variant
        fields: dict[str, Any] = {"type": self._type_of(resolved, at)}
        enum = resolved.get("enum")
        if enum is not None:
            if not isinstance(enum, list):
                self.fail("enum must be a list", f"{at}.enum")
            fields["enum"] = [e for e in enum if e is not None]
        for key in ("default", "description"):
            for src in (outer, resolved):
                if key in src and src[key] is not None:
                    fields[key] = src[key]
                    break
        return fields

    def _type_of(self, schema: Mapping[str, Any], where: str) -> str:
        raw = schema.get("type")
        if isinstance(raw, list):  # OpenAPI 3.1 / JSON schema: ["string", "null"]
            options = [t for t in raw if t != "null"]
            raw = options[0] if options else "string"
        if raw is None:
            if "properties" in schema or "additionalProperties" in schema or "allOf" in schema:
                return "object"
            if "items" in schema:
                return "array"
            return "string"
        if raw == "null":
            return "string"
        if not isinstance(raw, str) or raw not in _JSON_TYPES:
            self.fail(f"unknown schema type {raw!r} (expected one of {', '.join(sorted(_JSON_TYPES))})",
                      f"{where}.type")
        if raw == "string":
            return _STRING_FORMATS.get(str(schema.get("format") or ""), "string")
        return raw

    def object_properties(self, schema: Any, where: str) -> tuple[list[tuple[str, Any, str]], set[str]] | None:
        """Top-level properties `(name, schema, path)` and required names of an object schema (allOf merged).

        None when the schema is not an object with properties.
        """
        resolved, at = self.deref(schema, where)
        if not isinstance(resolved, Mapping):
            return None
        props: dict[str, tuple[Any, str]] = {}
        required: set[str] = set()
        parts: list[tuple[Any, str]] = [(resolved, at)]
        parts += [self.deref(p, f"{at}.allOf[{i}]") for i, p in enumerate(resolved.get("allOf") or [])]
        for part, part_at in parts:
            if not isinstance(part, Mapping):
                continue
            raw_props = part.get("properties")
            if raw_props is not None and not isinstance(raw_props, Mapping):
                self.fail("properties must be an object", f"{part_at}.properties")
            for name, sub in (raw_props or {}).items():
                props.setdefault(str(name), (sub, f"{part_at}.properties.{name}"))
            req = part.get("required") or []
            if not isinstance(req, list):
                self.fail("required must be a list of property names", f"{part_at}.required")
            required.update(str(r) for r in req)
        if not props:
            return None
        return [(n, s, p) for n, (s, p) in props.items()], required

    def object_params(self, schema: Any, where: str, *, location: str) -> list[dict[str, Any]] | None:
        """ToolBench parameter dicts (with `in` and `required`) for an object schema's top-level properties."""
        found = self.object_properties(schema, where)
        if found is None:
            return None
        props, required = found
        return [{"name": name, **self.param_fields(sub, at), "in": location, "required": name in required}
                for name, sub, at in props]

    # --------------------------------------------------------- response templates
    def template(self, node: Any, where: str, stack: tuple[str, ...] = (), depth: int = 0) -> Any:
        """A ToolBench-style response template for a JSON schema."""
        while isinstance(node, Mapping) and "$ref" in node:
            ref = node["$ref"]
            if isinstance(ref, str) and ref in stack:
                return {}  # recursive schema
            target, at = self.deref({"$ref": ref}, where)
            stack, node, where = (*stack, str(ref)), target, at
        if not isinstance(node, Mapping) or depth > _MAX_TEMPLATE_DEPTH:
            return {}
        depth += 1
        if isinstance(node.get("allOf"), list):
            merged: dict[str, Any] = {}
            for i, part in enumerate(node["allOf"]):
                sub = self.template(part, f"{where}.allOf[{i}]", stack, depth)
                if isinstance(sub, dict):
                    merged.update(sub)
            own = {k: v for k, v in node.items() if k != "allOf"}
            if own.get("properties"):
                sub = self.template(own, where, stack, depth)
                if isinstance(sub, dict):
                    merged.update(sub)
            return merged
        if "type" not in node:
            variant = self._non_null_variant(node, where)
            if variant is not None:
                return self.template(variant[0], variant[1], stack, depth)
        raw = node.get("type")
        if isinstance(raw, list):
            raw = next((t for t in raw if t != "null"), "null")
        if raw == "array" or (raw is None and "items" in node):
            item = self.template(node.get("items", {}), f"{where}.items", stack, depth)
            return [{**item, "_list_length": 1}] if isinstance(item, dict) else [item]
        if raw == "object" or (raw is None and ("properties" in node or "additionalProperties" in node)):
            props = node.get("properties")
            if not isinstance(props, Mapping):
                return {}
            return {str(k): self.template(v, f"{where}.properties.{k}", stack, depth) for k, v in props.items()}
        return _TEMPLATE_SCALARS.get(str(raw), "str")


def _json_media(content: Any) -> tuple[str, Any] | None:
    """`(media type, schema)` of the JSON media type in a `content` map, or None."""
    if not isinstance(content, Mapping):
        return None
    for mime, media in content.items():
        m = str(mime).split(";", 1)[0].strip().lower()
        if (m == "application/json" or m.endswith("+json")) and isinstance(media, Mapping):
            return str(mime), media.get("schema", {})
    return None


def read_spec_file(path: Path) -> Any:
    """Read a JSON or YAML spec (by suffix; other suffixes try JSON, then YAML), bounded by
    `sanitize.files.load_data_file`: at most `MAX_SPEC_BYTES`, YAML aliases and expanded values capped (a
    "billion laughs" alias bomb of a few hundred bytes would otherwise expand to gigabytes), nesting capped."""
    try:
        return repair_surrogates(load_data_file(path, max_bytes=MAX_SPEC_BYTES, what="OpenAPI spec"),
                                 source=str(path))
    except DataFileError as exc:
        raise CatalogError.from_data(exc) from None


def _spec_dict(spec: Mapping[str, Any], source: str) -> Any:
    """A spec given as a dict: its depth checked, lone surrogates replaced (with a warning naming the fields)."""
    try:
        return repair_surrogates(check_nesting(spec), source=source)
    except NestingTooDeep as exc:
        raise CatalogError(str(exc), source=source) from None


class _SpecConverter:
    """Converts one OpenAPI 3 document into a ToolBench-shaped tool dict."""

    def __init__(self, doc: Any, source: str) -> None:
        self.doc = doc
        self.r = SchemaResolver(doc, source)

    def convert(self) -> dict[str, Any]:
        doc, r = self.doc, self.r
        if not isinstance(doc, Mapping):
            r.fail(f"an OpenAPI document must be an object, got {type(doc).__name__}")
        if "swagger" in doc:
            r.fail("Swagger 2.0 documents are not supported; convert the spec to OpenAPI 3", "swagger")
        version = doc.get("openapi")
        if not isinstance(version, str) or not version.startswith("3."):
            r.fail(f"expected an OpenAPI 3 version string such as '3.0.3', got {version!r}", "openapi")
        info = doc.get("info")
        if not isinstance(info, Mapping):
            r.fail("missing or not an object", "info")
        title = info.get("title")
        if not isinstance(title, str) or not title.strip():
            r.fail("missing API title", "info.title")
        paths = doc.get("paths")
        if not isinstance(paths, Mapping):
            r.fail("missing or not an object", "paths")
        apis: list[dict[str, Any]] = []
        for path, item in paths.items():
            apis.extend(self._path_item(str(path), item))
        if not apis:
            r.fail("the spec defines no operations", "paths")
        return {
            "tool_name": title.strip(),
            "tool_description": str(info.get("description") or "").strip(),
            "base_url": self._base_url(),
            "api_list": apis,
        }

    def _base_url(self) -> str:
        servers = self.doc.get("servers")
        if servers is None:
            return ""
        if not isinstance(servers, list):
            self.r.fail("must be a list", "servers")
        if not servers:
            return ""
        first = servers[0]
        if not isinstance(first, Mapping) or not isinstance(first.get("url"), str):
            self.r.fail("server has no url", "servers[0].url")
        variables = first.get("variables") or {}

        def substitute(m: re.Match[str]) -> str:
            var = variables.get(m.group(1)) if isinstance(variables, Mapping) else None
            return str(var["default"]) if isinstance(var, Mapping) and "default" in var else m.group(0)

        return _SERVER_VAR.sub(substitute, first["url"]).rstrip("/")

    def _path_item(self, path: str, raw: Any) -> list[dict[str, Any]]:
        where = f"paths.{path}"
        item, where = self.r.deref(raw, where)
        if not isinstance(item, Mapping):
            self.r.fail(f"path item must be an object, got {type(item).__name__}", where)
        shared = self._parameters(item.get("parameters"), f"{where}.parameters")
        out = []
        for method in HTTP_METHODS:
            if method in item:
                out.append(self._operation(path, method, item[method], f"{where}.{method}", shared))
        return out

    def _parameters(self, raw: Any, where: str) -> dict[tuple[str, str], dict[str, Any]]:
        if raw is None:
            return {}
        if not isinstance(raw, list):
            self.r.fail("must be a list", where)
        params: dict[tuple[str, str], dict[str, Any]] = {}
        for i, entry in enumerate(raw):
            p = self._parameter(entry, f"{where}[{i}]")
            if p is not None:
                params[(p["name"], p["in"])] = p
        return params

    def _parameter(self, raw: Any, where: str) -> dict[str, Any] | None:
        p, where = self.r.deref(raw, where)
        if not isinstance(p, Mapping):
            self.r.fail(f"parameter must be an object, got {type(p).__name__}", where)
        name = p.get("name")
        if not isinstance(name, str) or not name.strip():
            self.r.fail("parameter has no name", f"{where}.name")
        loc = p.get("in")
        if loc not in ("path", "query", "header", "cookie"):
            self.r.fail(f"'in' must be path, query, header or cookie, got {loc!r}", f"{where}.in")
        if loc == "cookie":
            return None
        if "schema" in p:
            fields = self.r.param_fields(p["schema"], f"{where}.schema")
        elif "content" in p:
            media = p["content"]
            first: Any = next(iter(media.values()), {}) if isinstance(media, Mapping) and media else {}
            schema = first.get("schema", {}) if isinstance(first, Mapping) else {}
            fields = self.r.param_fields(schema, f"{where}.content")
        else:
            fields = {"type": "string"}
        if p.get("description"):
            fields["description"] = str(p["description"])
        required = loc == "path" or bool(p.get("required"))
        return {"name": name, **fields, "in": loc, "required": required}

    def _operation(self, path: str, method: str, raw: Any, where: str,
                   shared: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
        op, where = self.r.deref(raw, where)
        if not isinstance(op, Mapping):
            self.r.fail(f"operation must be an object, got {type(op).__name__}", where)
        op_id = op.get("operationId")
        if op_id is not None and (not isinstance(op_id, str) or not op_id.strip()):
            self.r.fail("operationId must be a non-empty string", f"{where}.operationId")
        params = {**shared, **self._parameters(op.get("parameters"), f"{where}.parameters")}
        plist = list(params.values())
        plist += self._body_params(op.get("requestBody"), f"{where}.requestBody")
        texts = [str(op.get(k) or "").strip() for k in ("summary", "description")]
        description = " — ".join(dict.fromkeys(t for t in texts if t))
        api: dict[str, Any] = {
            "name": op_id.strip() if isinstance(op_id, str) else f"{method.upper()} {path}",
            "description": description,
            "method": method.upper(),
            "path": path,
            "required_parameters": [_strip(p) for p in plist if p["required"]],
            "optional_parameters": [_strip(p) for p in plist if not p["required"]],
        }
        template = self._response_template(op.get("responses"), f"{where}.responses")
        if template is not None:
            api["template_response"] = template
        if op.get("x-deterministic") is False:  # clock, randomness...: never served from the response cache
            api["deterministic"] = False
        if op.get("x-max-argument-chars") is not None:
            api["max_argument_chars"] = op["x-max-argument-chars"]
        return api

    def _body_params(self, raw: Any, where: str) -> list[dict[str, Any]]:
        if raw is None:
            return []
        body, where = self.r.deref(raw, where)
        if not isinstance(body, Mapping):
            self.r.fail(f"requestBody must be an object, got {type(body).__name__}", where)
        media = _json_media(body.get("content"))
        if media is None:
            return []
        at, schema = f"{where}.content.{media[0]}.schema", media[1]
        params = self.r.object_params(schema, at, location="body")
        if params is not None:
            return params
        return [{"name": "body", **self.r.param_fields(schema, at), "in": "body", "required": bool(body.get("required"))}]

    def _response_template(self, raw: Any, where: str) -> Any:
        responses, where = self.r.deref(raw, where)
        if not isinstance(responses, Mapping):
            return None
        codes = [str(c) for c in responses]
        ordered = [c for c in codes if c == "200"] + sorted(c for c in codes if c.startswith("2") and c != "200")
        for code in ordered:
            original = next(k for k in responses if str(k) == code)
            resp, at = self.r.deref(responses[original], f"{where}.{code}")
            media = _json_media(resp.get("content")) if isinstance(resp, Mapping) else None
            if media is not None and media[1]:
                return self.r.template(media[1], f"{at}.content.{media[0]}.schema")
        return None


def _strip(param: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in param.items() if k != "required"}


def load_openapi_specs(specs: Iterable[str | Path | dict[str, Any]], *, category: str) -> list[Category]:
    """One `Category` holding one tool per OpenAPI 3 spec. Collects every bad spec's error before raising."""
    errors: list[CatalogError] = []
    tools: list[Tool] = []
    keys: dict[str, str] = {}
    for i, spec in enumerate(specs):
        source = f"<spec #{i}>" if isinstance(spec, Mapping) else str(spec)
        try:
            doc = _spec_dict(spec, source) if isinstance(spec, Mapping) else read_spec_file(Path(spec))
            tool = parse_tool(_SpecConverter(doc, source).convert(), category=category, source=source)
        except CatalogError as exc:
            errors.append(exc)
            continue
        if tool.key in keys:
            errors.append(CatalogError(f"tool key {tool.key!r} (from title {tool.name!r}) is already used by {keys[tool.key]}",
                                       source=source, field="info.title"))
            continue
        keys[tool.key] = source
        tools.append(tool)
    if errors:
        raise errors[0] if len(errors) == 1 else CatalogLoadError(errors)
    if not tools:
        raise CatalogError("no OpenAPI specs given")
    return [Category(name=category, tools=tuple(tools))]


__all__ = ["HTTP_METHODS", "SchemaResolver", "load_openapi_specs", "read_spec_file"]
