"""OpenAPI 3 specs and LangChain tools as catalog sources."""

from __future__ import annotations

import datetime as dt
import enum
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
import yaml
from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool, tool
from pydantic import BaseModel, Field, ValidationError

from langgraph_anytool.catalog import Catalog, CatalogError, CatalogLoadError, UnknownNameError
from langgraph_anytool.catalog.lc_tools import langchain_tool_implementations, load_langchain_tools
from langgraph_anytool.catalog.openapi import load_openapi_specs

DATA = Path(__file__).resolve().parents[1] / "data" / "openapi"
PETSTORE = DATA / "petstore.yaml"
SHOP = DATA / "shop.json"


def _sound_names(cat: Catalog) -> None:
    names = {cat.function_name(a.id) for a in cat}
    assert len(names) == len(cat)
    assert all(cat.api_for_function(cat.function_name(a.id)) is a for a in cat)


def _spec(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"openapi": "3.0.0", "info": {"title": extra.pop("title", "Mini")}, "paths": paths, **extra}


def _get(params: list[Any]) -> dict[str, Any]:
    return {"/pets": {"get": {"operationId": "listPets", "parameters": params}}}


def _params(api_params: Any) -> dict[str, tuple[str, bool, str]]:
    return {p.name: (p.type, p.required, p.location) for p in api_params}


# --------------------------------------------------------------------- OpenAPI: mapping
def test_petstore_yaml_mapping() -> None:
    cat = Catalog.from_openapi([PETSTORE], category="Pets")
    assert cat.categories == ["Pets"]
    (tool_,) = cat.tools("Pets")
    assert (tool_.name, tool_.key) == ("Pet Store", "pet_store")
    assert tool_.description == "A small pet shop used by the catalog tests."
    assert tool_.base_url == "https://eu.pets.example/v1"  # server variable default, trailing slash dropped
    assert [(a.name, a.method, a.path) for a in tool_.apis] == [
        ("listPets", "GET", "/pets"), ("GET /pets/{petId}", "GET", "/pets/{petId}"),
        ("deletePet", "DELETE", "/pets/{petId}")]

    listing = cat.find_api("Pet Store", "listPets")
    assert listing.description == "List pets — Every pet in the shop, filtered by status."
    assert _params(listing.params) == {  # cookie parameter skipped
        "limit": ("integer", False, "query"), "status": ("string", False, "query"),
        "born_after": ("date", False, "query")}
    limit, status = listing.param("limit"), listing.param("status")
    assert limit is not None and (limit.default, limit.description) == (20, "Page size")  # from components/parameters
    assert status is not None and status.enum == ("available", "pending", "sold") and status.default == "available"
    # response template in ToolBench style, recursion cut off
    pet = {"id": "int", "name": "str", "weight": "float", "vaccinated": "bool", "tags": ["str"], "parent": {}}
    assert listing.template_response == {"total": "int", "pets": [{**pet, "_list_length": 1}]}

    one = cat.find_api("pet_store", "GET /pets/{petId}")
    assert _params(one.params) == {"petId": ("integer", True, "path")}  # path-level parameter, always required
    assert one.template_response == pet
    delete = cat.find_api("Pet Store", "deletePet")
    assert _params(delete.params) == {"petId": ("integer", True, "path"), "X-Request-Id": ("string", True, "header")}
    assert delete.template_response is None  # 204 without content
    _sound_names(cat)


def test_shop_json_request_bodies() -> None:
    cat = Catalog.from_openapi([SHOP])
    create = cat.find_api("Order Service", "createOrder")
    assert create.method == "POST"
    assert _params(create.params) == {
        "item": ("string", True, "body"), "quantity": ("integer", True, "body"), "size": ("string", False, "body"),
        "gift": ("boolean", False, "body"), "lines": ("array", False, "body")}
    assert [p.name for p in create.required_params] == ["item", "quantity"]
    size, quantity, item = create.param("size"), create.param("quantity"), create.param("item")
    assert size is not None and size.enum == ("S", "M", "L")  # through components/schemas/Size
    assert quantity is not None and quantity.default == 1
    assert item is not None and item.description == "Item code"
    # 201 through components/responses, allOf merged
    assert create.template_response == {
        "item": "str", "quantity": "int", "size": "str", "gift": "bool",
        "lines": [{"sku": "str", "price": "float", "_list_length": 1}], "order_id": "str"}

    notes = cat.find_api("Order Service", "PUT /orders/{id}/notes")
    assert _params(notes.params) == {"id": ("string", True, "path"), "body": ("array", True, "body")}
    assert cat.tool("OpenAPI", "Order Service").base_url == "http://127.0.0.1:9/api"


def test_yaml_and_json_give_the_same_catalog(tmp_path: Path) -> None:
    doc = yaml.safe_load(PETSTORE.read_text(encoding="utf-8"))
    as_json = tmp_path / "pets.json"
    as_json.write_text(json.dumps({**doc, "paths": doc["paths"]}, default=str), encoding="utf-8")
    as_yml = tmp_path / "pets.yml"
    as_yml.write_text(yaml.safe_dump(doc), encoding="utf-8")
    no_suffix = tmp_path / "pets.spec"
    no_suffix.write_text(PETSTORE.read_text(encoding="utf-8"), encoding="utf-8")
    cats = [Catalog.from_openapi([p]) for p in (PETSTORE, as_json, as_yml, no_suffix)]
    cats.append(Catalog.from_openapi([json.loads(as_json.read_text(encoding="utf-8"))]))
    first = [a.details() for a in cats[0]]
    for other in cats[1:]:
        assert [a.details() for a in other] == first
        assert other.fingerprint() == cats[0].fingerprint()


def test_catalog_load_of_a_spec_file() -> None:
    cat = Catalog.load(SHOP)
    assert [t.name for t in cat.tools()] == ["Order Service"]
    both = Catalog.from_openapi([PETSTORE, SHOP])
    assert len(both) == 5 and both.num_tools == 2
    _sound_names(both)


def test_parameter_overrides_and_inline_details() -> None:
    spec = _spec({"/items/{id}": {
        "parameters": [{"name": "id", "in": "path", "schema": {"type": "string"}},
                       {"name": "v", "in": "query", "schema": {"type": "integer"}}],
        "get": {"parameters": [{"name": "v", "in": "query", "required": True, "schema": {"type": "number"}},
                               {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
                               {"name": "f", "in": "query", "schema": {"type": "string", "format": "binary"}},
                               {"name": "q", "in": "query"}],
                "description": "Only a description"},
    }})
    (cat,) = load_openapi_specs([spec], category="C")
    api = cat.tools[0].apis[0]
    assert api.name == "GET /items/{id}" and api.description == "Only a description"
    assert _params(api.params) == {"id": ("string", True, "path"), "v": ("number", True, "query"),
                                   "tags": ("array", False, "query"), "f": ("binary", False, "query"),
                                   "q": ("string", False, "query")}


# --------------------------------------------------------------------- OpenAPI: errors
@pytest.mark.parametrize(
    ("params", "field", "needle"),
    [
        ([{"name": "limit", "in": "query", "schema": {"type": "int32"}}], "paths./pets.get.parameters[0].schema.type",
         "int32"),
        ([{"in": "query", "schema": {"type": "string"}}], "paths./pets.get.parameters[0].name", "no name"),
        ([{"name": "a", "in": "body"}], "paths./pets.get.parameters[0].in", "'body'"),
        ([{"name": "a", "in": "query", "schema": {"type": "string", "enum": "x"}}],
         "paths./pets.get.parameters[0].schema.enum", "enum"),
        ([{"$ref": "#/components/parameters/Missing"}], "paths./pets.get.parameters[0].$ref", "unresolvable"),
        ([{"$ref": "other.yaml#/Limit"}], "paths./pets.get.parameters[0].$ref", "only local"),
        ([{"$ref": "#/components/parameters/A"}], "components.parameters.B.$ref", "circular"),
        ([{"$ref": "#/components/parameters/Bad"}], "components.parameters.Bad.schema.type", "'float'"),
    ],
)
def test_spec_errors_name_the_field(tmp_path: Path, params: list[Any], field: str, needle: str) -> None:
    components = {"parameters": {
        "A": {"$ref": "#/components/parameters/B"}, "B": {"$ref": "#/components/parameters/A"},
        "Bad": {"name": "b", "in": "query", "schema": {"type": "float"}}}}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_spec(_get(params), components=components)), encoding="utf-8")
    with pytest.raises(CatalogError) as info:
        Catalog.from_openapi([path])
    err = info.value
    assert not isinstance(err, CatalogLoadError)
    assert (err.source, err.field) == (str(path), field)
    assert str(path) in str(err) and field in str(err) and needle in str(err)


@pytest.mark.parametrize(
    ("doc", "field", "needle"),
    [
        ({"swagger": "2.0", "info": {"title": "Old"}, "paths": {}}, "swagger", "OpenAPI 3"),
        ({"info": {"title": "No version"}, "paths": {}}, "openapi", "version"),
        ({"openapi": "3.0.0", "info": {}, "paths": {}}, "info.title", "title"),
        ({"openapi": "3.0.0", "info": {"title": "T"}}, "paths", "missing"),
        ({"openapi": "3.0.0", "info": {"title": "T"}, "paths": {}}, "paths", "no operations"),
        ({"openapi": "3.0.0", "info": {"title": "T"}, "paths": {"/a": {"get": "nope"}}}, "paths./a.get", "operation"),
        (_spec({"/a": {"post": {"requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "properties": {"x": {"type": "datetime"}}}}}}}}}),
         "paths./a.post.requestBody.content.application/json.schema.properties.x.type", "datetime"),
        (_spec({"/a": {"get": {}}}, servers=[{"description": "no url"}]), "servers[0].url", "url"),
    ],
)
def test_document_errors_name_the_field(doc: dict[str, Any], field: str, needle: str) -> None:
    with pytest.raises(CatalogError) as info:
        load_openapi_specs([_spec({"/ok": {"get": {}}}, title="Fine"), doc], category="C")
    assert (info.value.source, info.value.field) == ("<spec #1>", field)
    assert needle in str(info.value)


def test_several_bad_specs_are_all_reported(tmp_path: Path) -> None:
    bad_json = tmp_path / "a.json"
    bad_json.write_text('{"openapi": "3.0.0",\n "info": {', encoding="utf-8")
    bad_yaml = tmp_path / "b.yaml"
    bad_yaml.write_text("openapi: 3.0.0\ninfo: [unclosed\n", encoding="utf-8")
    bad_type = tmp_path / "c.yaml"
    bad_type.write_text(yaml.safe_dump(_spec(_get([{"name": "n", "in": "query", "schema": {"type": "int"}}]))),
                        encoding="utf-8")
    missing = tmp_path / "d.json"
    dup = _spec({"/x": {"get": {}}}, title="Pet Store")
    with pytest.raises(CatalogLoadError) as info:
        Catalog.from_openapi([bad_json, PETSTORE, bad_yaml, bad_type, missing, dup])
    err = info.value
    got = {(e.source, e.field) for e in err.errors}
    assert got == {(str(bad_json), None), (str(bad_yaml), None),
                   (str(bad_type), "paths./pets.get.parameters[0].schema.type"), (str(missing), None),
                   ("<spec #5>", "info.title")}
    text = str(err)
    assert "invalid JSON at line 2" in text and "invalid YAML at line" in text and "does not exist" in text
    assert "already used by" in text and str(PETSTORE) in text


# --------------------------------------------------------------------- LangChain tools
class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


@tool(parse_docstring=True)
def convert_temperature(value: float, unit: Unit = Unit.C, precise: bool = False) -> str:
    """Convert a temperature.

    Args:
        value: The temperature to convert.
        unit: The unit of the given value.
        precise: Keep two decimals.
    """
    celsius = value if unit is Unit.C else (value - 32) * 5 / 9
    target = celsius * 9 / 5 + 32 if unit is Unit.C else celsius
    return f"{target:.2f}" if precise else str(round(target))


@tool
def days_between(start: dt.date, end: dt.date | None = None, tags: list[str] | None = None,
                 mode: Literal["calendar", "business"] = "calendar", limit: int | None = None) -> int:
    """Count days between two dates."""
    stop = end or dt.date(2024, 1, 1)
    return (stop - start).days if mode == "calendar" else -1


class SearchArgs(BaseModel):
    query: str = Field(description="What to look for")
    k: int = Field(default=3, description="How many hits")


def _search(query: str, k: int = 3, api_key: str = "") -> list[str]:
    return [f"{query}-{i}{'!' if api_key else ''}" for i in range(k)]


search_tool = StructuredTool.from_function(_search, name="search_notes", description="Search my notes.",
                                           args_schema=SearchArgs)


@tool
def secret_echo(text: str, token: Annotated[str, InjectedToolArg] = "") -> str:
    """Echo text (the token is injected, never shown to the model)."""
    return text + token


LC_TOOLS: list[BaseTool] = [convert_temperature, days_between, search_tool, secret_echo]


def test_langchain_tools_mapping() -> None:
    cat = Catalog.from_langchain_tools(LC_TOOLS, category="Local", tool_name="My Tools")
    (t,) = cat.tools("Local")
    assert (t.name, t.key, t.source) == ("My Tools", "my_tools", "langchain:My Tools")
    assert [a.name for a in t.apis] == [x.name for x in LC_TOOLS]

    conv = cat.find_api("My Tools", "convert_temperature")
    assert conv.description == "Convert a temperature."
    assert _params(conv.params) == {"value": ("number", True, "body"), "unit": ("string", False, "body"),
                                    "precise": ("boolean", False, "body")}
    unit, value = conv.param("unit"), conv.param("value")
    assert unit is not None and unit.enum == ("celsius", "fahrenheit") and unit.default == "celsius"
    assert value is not None and value.description == "The temperature to convert."

    days = cat.find_api("my_tools", "days_between")
    assert _params(days.params) == {"start": ("date", True, "body"), "end": ("date", False, "body"),
                                    "tags": ("array", False, "body"), "mode": ("string", False, "body"),
                                    "limit": ("integer", False, "body")}
    mode = days.param("mode")
    assert mode is not None and mode.enum == ("calendar", "business") and mode.default == "calendar"

    search = cat.find_api("My Tools", "search_notes")
    assert search.description == "Search my notes."
    assert [(p.name, p.required, p.default, p.description) for p in search.params] == [
        ("query", True, None, "What to look for"), ("k", False, 3, "How many hits")]
    assert [p.name for p in cat.find_api("My Tools", "secret_echo").params] == ["text"]  # injected arg hidden
    _sound_names(cat)


def test_langchain_implementations_run_the_tools() -> None:
    cat = Catalog.from_langchain_tools(LC_TOOLS)
    impls = langchain_tool_implementations(LC_TOOLS, cat)
    assert set(impls) == {a.id for a in cat}
    ids = {a.name: a.id for a in cat}
    assert impls[ids["convert_temperature"]](value=212, unit="fahrenheit") == "100"
    assert impls[ids["convert_temperature"]](value=100.0, precise=True) == "212.00"
    assert impls[ids["days_between"]](start="2023-12-25") == 7
    assert impls[ids["search_notes"]](query="x", k=2) == ["x-0", "x-1"]
    with pytest.raises(ValidationError, match="k"):  # the tool's own argument validation
        impls[ids["search_notes"]](query="x", k="many")


def test_langchain_implementations_disambiguation() -> None:
    other = StructuredTool.from_function(lambda query: [query.upper()], name="search_notes",
                                         description="Other notes.")
    cats = (load_langchain_tools(LC_TOOLS, category="A", tool_name="first")
            + load_langchain_tools([other], category="B", tool_name="second"))
    cat = Catalog(cats)
    with pytest.raises(CatalogError, match="several APIs"):
        langchain_tool_implementations([other], cat)
    impls = langchain_tool_implementations([other], cat, tool_name="second")
    assert list(impls) == ["B/second/search_notes"]
    assert impls["B/second/search_notes"](query="hi") == ["HI"]
    assert list(langchain_tool_implementations([other], cat, category="B")) == ["B/second/search_notes"]
    with pytest.raises(UnknownNameError, match="search_notes"):
        langchain_tool_implementations([other], Catalog.from_langchain_tools([convert_temperature]))


def test_langchain_loader_errors() -> None:
    with pytest.raises(CatalogError, match="no LangChain tools"):
        load_langchain_tools([], category="C", tool_name="t")
    with pytest.raises(CatalogError) as info:
        load_langchain_tools([convert_temperature, days_between, convert_temperature], category="C", tool_name="t")
    assert info.value.field == "tools[2].name" and "convert_temperature" in str(info.value)
