"""Issue 28, point 13: every CLI command that builds an `AnyToolConfig` (`run`, `demo`, `eval run`, `eval steps`)
honours `ANYTOOL_PROFILE` and `ANYTOOL_<FIELD>`, with command-line options > environment > the profile's defaults,
and a bad value is one line naming the variable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langgraph_anytool.cli.app import build_parser, main, run_settings
from langgraph_anytool.config import AnyToolConfig, ConfigError

QUERY = ("Convert 26.2 miles to kilometers, tell me what day of the week 2024-02-29 was, and the geographic "
         "midpoint between Paris and Berlin.")


def _steps_file(tmp_path: Path) -> Path:
    path = tmp_path / "in_domain.json"
    path.write_text(json.dumps([{"tools": [{"Name": "f", "function": "d", "input": {}}], "instruction": "q",
                                 "conversations": [{"from": "user", "value": "q"},
                                                   {"from": "assistant", "value": "Next: give up."}]}]))
    return path


def _commands(tmp_path: Path) -> list[list[str]]:
    queries = tmp_path / "G1.json"
    queries.write_text(json.dumps([{"query_id": 1, "query": "Convert 5 kilograms to pounds."}]))
    return [["run", "Convert 5 kilograms to pounds.", "--offline", "--no-cache"],
            ["demo", "Convert 5 kilograms to pounds.", "--no-cache"],
            ["eval", "run", "--queries", str(queries), "--offline", "--out", str(tmp_path / "r.jsonl"),
             "--no-progress"],
            ["eval", "steps", str(_steps_file(tmp_path)), "--offline"]]


@pytest.mark.parametrize("var, value", [
    ("ANYTOOL_MAX_API_POOL", "abc"), ("ANYTOOL_MAX_API_POOL", "0"), ("ANYTOOL_PROFILE", "bogus"),
    ("ANYTOOL_SEED_WITH_SEARCH", "perhaps"), ("ANYTOOL_RETRY_MAX_WAIT", "inf"), ("ANYTOOL_MAX_COST", "nan"),
    ("ANYTOOL_SOLVER", "magic"), ("ANYTOOL_TEXT_MODE_ROLES", "judge"), ("ANYTOOL_MODEL_PROFILES", "[" * 100_000),
])
def test_a_bad_environment_value_is_one_line_naming_the_variable(
        var: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(var, value)
    for args in _commands(tmp_path):
        assert main(args) == 2, args
        err = capsys.readouterr().err.strip().splitlines()
        assert err and err[-1].startswith(f"anytool: error: {var}="), (args, err[-3:])
        assert not any("Traceback" in line for line in err)


def test_a_bad_variable_is_refused_even_when_a_flag_overrides_it(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANYTOOL_MAX_API_POOL", "abc")
    assert main(["run", "q", "--offline", "--no-cache", "--set", "max_api_pool=4"]) == 2
    assert "ANYTOOL_MAX_API_POOL='abc'" in capsys.readouterr().err


def test_the_environment_reaches_anytool_run(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Without the variable the offline run fills a pool of several APIs; with ANYTOOL_MAX_API_POOL=1, one.
    The stand-in reads the request's three parts (tests/offline/test_clauses.py) and answers the first two; the
    builtin Geographic Midpoint API takes coordinates, not cities, and the stand-in does not chain a city lookup into
    it, so the third part is answered by the distance between the cities, which its judge rightly calls unsolved
    (exit 1; a policy that chains the calls solves it: exit 0)."""
    assert main(["run", QUERY, "--offline", "--no-cache", "--json"]) in (0, 1)
    record = json.loads(capsys.readouterr().out)
    assert len(record["api_pool"]) > 1
    assert "42.16" in record["answer"] and "Thursday" in record["answer"], record["answer"]  # parts 1 and 2
    monkeypatch.setenv("ANYTOOL_MAX_API_POOL", "1")
    main(["run", QUERY, "--offline", "--no-cache", "--json"])
    out = capsys.readouterr()
    assert len(json.loads(out.out)["api_pool"]) == 1
    assert "settings from the environment: ANYTOOL_MAX_API_POOL" in out.err


def test_precedence_flags_over_environment_over_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    parse = build_parser().parse_args
    monkeypatch.setenv("ANYTOOL_PROFILE", "paper")
    cfg = run_settings(parse(["run", "q"]))
    assert (cfg.judge, cfg.seed_with_search) == ("anytool", False)  # the paper's profile, from the environment
    assert run_settings(parse(["run", "q", "--profile", "default"])).judge == "tooleval"  # the flag wins
    monkeypatch.setenv("ANYTOOL_JUDGE", "tooleval")  # a field over the profile's value
    monkeypatch.setenv("ANYTOOL_MAX_API_POOL", "3")
    monkeypatch.setenv("ANYTOOL_EXECUTION", "template")
    cfg = run_settings(parse(["run", "q"]))
    assert (cfg.judge, cfg.seed_with_search, cfg.max_api_pool, cfg.execution) == ("tooleval", False, 3, "template")
    cfg = run_settings(parse(["run", "q", "--set", "max_api_pool=5", "--execution", "local"]))
    assert (cfg.max_api_pool, cfg.execution) == (5, "local")  # flags win over the environment
    monkeypatch.setenv("ANYTOOL_MODEL_PROFILES", json.dumps({"a-model": {"input_price": 1}}))
    cfg = run_settings(parse(["run", "q", "--set", 'model_profiles={"b-model": {"input_price": 2}}']))
    assert set(cfg.model_profiles) == {"a-model", "b-model"}  # merged: the flag's patterns over the variable's


def test_eval_run_records_the_environment_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANYTOOL_PROFILE", "paper")
    monkeypatch.setenv("ANYTOOL_MAX_API_POOL", "7")
    queries = tmp_path / "G1.json"
    queries.write_text(json.dumps([{"query_id": 1, "query": "Convert 5 kilograms to pounds."}]))
    out = tmp_path / "r.jsonl"
    assert main(["eval", "run", "--queries", str(queries), "--offline", "--out", str(out), "--no-progress",
                 "--set", "max_reflections=2"]) == 0
    config = json.loads(out.read_text().splitlines()[0])["config"]
    assert (config["max_api_pool"], config["judge"], config["max_reflections"]) == (7, "anytool", 2)
    assert "ANYTOOL_PROFILE=paper" in capsys.readouterr().err


def test_demo_shows_the_environment_settings(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANYTOOL_MAX_API_POOL", "2")
    main(["demo", "How far is Paris from Berlin?", "--no-cache"])
    assert "settings: max_api_pool=2" in capsys.readouterr().out


def test_eval_steps_takes_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_anytool.cli import bench_commands

    seen: list[AnyToolConfig] = []

    def evaluate_steps(cases: object, models_for: object, **kw: object) -> None:
        seen.append(kw["config"])
        raise SystemExit(0)  # the configuration is all this test needs

    monkeypatch.setattr("langgraph_anytool.eval.umi.steps.evaluate_steps", evaluate_steps)
    monkeypatch.setenv("ANYTOOL_UMI_PROMPTS", "alpha_umi")
    monkeypatch.setenv("ANYTOOL_REQUEST_TIMEOUT", "9")
    with pytest.raises(SystemExit):
        bench_commands.cmd_steps(build_parser().parse_args(["eval", "steps", str(_steps_file(tmp_path)),
                                                            "--offline"]))
    assert (seen[0].umi_prompts, seen[0].request_timeout, seen[0].solver) == ("alpha_umi", 9.0, "dfsdt")


def test_layered_and_from_env_agree() -> None:
    env = {"ANYTOOL_PROFILE": "paper", "ANYTOOL_MAX_API_POOL": "16"}
    assert AnyToolConfig.from_env(env) == AnyToolConfig.layered(environ=env)
    assert AnyToolConfig.layered({"max_api_pool": "8"}, environ=env).max_api_pool == 8
    assert AnyToolConfig(**AnyToolConfig.layered(environ=env).changed()) == AnyToolConfig.from_env(env)
    with pytest.raises(ConfigError, match="ANYTOOL_PROFILE='bogus'"):
        AnyToolConfig.layered(profile="paper", environ={"ANYTOOL_PROFILE": "bogus"})
