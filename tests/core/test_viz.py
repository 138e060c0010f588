"""Offline pictures: graph structure, agent tree, search tree (with backtracking), usage; compiled graphs display
without any network call."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("matplotlib")

from langgraph_anytool import Catalog, create_anytool_graph, create_retriever_graph, viz
from langgraph_anytool.offline import OfflinePolicyModel


def _is_png(p: viz.Picture) -> bool:
    return p.png.startswith(b"\x89PNG") and len(p.png) > 3000


def test_compiled_graphs_display_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_core.runnables.graph import Graph

    def no_network(*_: Any, **__: Any) -> bytes:
        raise AssertionError("draw_mermaid_png would call a web service")

    monkeypatch.setattr(Graph, "draw_mermaid_png", no_network)
    cat = Catalog.builtin()
    model = OfflinePolicyModel(catalog=cat)
    for graph in (create_anytool_graph(cat, model), create_retriever_graph(cat, model)):
        bundle = graph._repr_mimebundle_()
        assert bundle["image/png"].startswith(b"\x89PNG") and "text/plain" in bundle
    assert _is_png(viz.draw_graph(create_anytool_graph(cat, model)))


def test_run_pictures_and_usage_frame(tmp_path: Any) -> None:
    out = {
        "agents": {
            "meta": {"level": "meta", "parent": None, "status": "finished", "steps": 2, "end_reason": "finish_search"},
            "meta/Geo": {"level": "category", "parent": "meta", "category": "Geo", "status": "finished", "steps": 1,
                         "end_reason": "finish_search"},
            "meta/Geo/t1": {"level": "tool", "parent": "meta/Geo", "category": "Geo", "tools": ["Distances"],
                            "status": "stopped", "steps": 3, "end_reason": "pool_solvable"},
        },
        "api_pool": [{"api_id": "Geo/distances/d", "added_by": "meta/Geo/t1"}],
        "solver_attempts": [{"attempt": 1, "mode": "dfsdt", "finish_type": "give_answer", "api_calls": 2, "tree": [
            {"id": 0, "parent": None, "status": "open", "tool_calls": [], "observations": []},
            {"id": 1, "parent": 0, "status": "dead", "tool_calls": [{"name": "d", "args": {}}],
             "observations": [{"function": "d", "status": "error"}]},
            {"id": 2, "parent": 0, "status": "open", "tool_calls": [{"name": "d", "args": {}}],
             "observations": [{"function": "d", "status": "ok"}]},
            {"id": 3, "parent": 2, "status": "answer",
             "tool_calls": [{"name": "Finish", "args": {"return_type": "give_answer"}}], "observations": []},
        ]}],
        "usage": {"meta": {"model_calls": 2, "input_tokens": 100, "output_tokens": 20},
                  "solver": {"model_calls": 3, "input_tokens": 300, "output_tokens": 40},
                  "api": {"calls": 2}, "total_tokens": 460},
    }
    assert _is_png(viz.draw_agent_tree(out)) and _is_png(viz.draw_search_tree(out))
    assert _is_png(viz.draw_usage(out))
    frame = viz.usage_frame(out)
    assert list(frame.index) == ["meta", "solver"] and frame.loc["solver", "tokens"] == 340
    assert viz.draw_agent_tree(out).save(tmp_path / "a.png").stat().st_size > 3000
    with pytest.raises(ValueError, match="no solver attempt"):
        viz.draw_search_tree({"solver_attempts": []})
