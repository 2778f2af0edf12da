# sadie: two commands matter — `make demo` and `make test` (see README).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_PROGRESS_BARS := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo test lint bench bench-peers bench-real crash clean

$(STAMP):
	$(PYTHON) -m venv $(VENV)
	# torch first, pinned: a CPU build from local disk (unpinned pulls several GB of CUDA).
	$(BIN)/pip install --quiet --disable-pip-version-check torch==2.13.0
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	# Export the embedding model for ONNX Runtime now, so the first launch starts without torch.
	$(BIN)/python -m sadie_tui.engine.ingest.prepare_model || echo "sadie: the ONNX export failed; it is retried at first use"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/sadie --demo

lint: install
	$(BIN)/ruff check sadie_tui tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy

test: install lint
	$(BIN)/python -m pytest -q -p no:cacheprovider

bench: install
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/retrieval.py
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/tui.py
	$(BIN)/python bench/serve.py

# 200 seeded SIGKILLs of ingest / chat / serve, each memory reopened and checked (the test suite
# runs 20 of them): prints `N/200 reopened, M lost`.
crash: install
	$(BIN)/python bench/crash.py --cases 200

# sadie beside elia-chat 1.10.0 and oterm 0.26.1 (bench/peers.py). Not part of `bench`: the
# first run installs the peers from PyPI into ~/.cache/sadie-bench/peers (never the project).
bench-peers: install
	$(BIN)/python bench/peers.py --setup
	$(BIN)/python bench/peers.py

# Real small models through ../shared/realmodel's llama.cpp server (start bridge.py first).
bench-real: install
	$(BIN)/python bench/real_model.py --mode chat
	$(BIN)/python bench/real_model.py --mode ask

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
