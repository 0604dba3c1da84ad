# Every command a person needs. `make demo` and `make test` work in a fresh clone on a fresh machine.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# the CPU build that lies on this machine's disk; a newer or unpinned torch pulls a multi-GB CUDA build
TORCH := torch==2.13.0
STAMP := $(VENV)/.installed
# the exact versions the last green `make test` ran with, so that a fresh clone installs what was tested; the
# package's own requirements (settings.ini) stay ranges for users. `make constraints` refreshes it on purpose
CONSTRAINTS := constraints.txt
# a fingerprint of the generated and cleaned files (tracked and untracked), to tell whether a step changed them
SNAPSHOT = git ls-files -co --exclude-standard -z -- nbs inverse_surprisal README.md | xargs -0 sha1sum | sha1sum

.PHONY: bench grid text-grid matched-rate docs install constraints demo test test-fast check-clean check-export check-readme check-pages nbtest pytest readme export clean-nbs

$(STAMP): settings.ini setup.py $(CONSTRAINTS)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -c $(CONSTRAINTS) --upgrade pip
	$(PY) -m pip install -q $(TORCH)
	$(PY) -m pip install -q -c $(CONSTRAINTS) -e ".[dev,plot,widgets]"
	touch $@

install: $(STAMP)

# constraints.txt anew: a fresh .venv with the newest releases the ranges in settings.ini allow, frozen (torch without
# its local build label, so that the pin admits the CPU build on disk), then the whole suite on it. Commit the file
# only when the suite passes
constraints:
	rm -rf $(VENV)
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(TORCH)
	$(PY) -m pip install -q -e ".[dev,plot,widgets]"
	{ echo "# pip freeze --all of the .venv that the last green make test ran in; make constraints refreshes it"; \
	  $(PY) -m pip freeze --all --exclude-editable | sed -E 's/^(torch==[^+]*)[+].*/\1/'; } > $(CONSTRAINTS).tmp
	mv $(CONSTRAINTS).tmp $(CONSTRAINTS)
	touch $(STAMP)
	$(MAKE) test

# the main job: the demo task trained with the plain and the example-level term side by side (b = b*, one seed),
# ending in one table (information captured, KL and the easy/hard rate ratio, each beside its closed form) and one
# figure of each example's rate against b* (runs/demo/weighting.png); inverse_surprisal.grid.weighting_demo
demo: $(STAMP)
	rm -rf runs/demo
	$(PY) -c "from inverse_surprisal.grid import weighting_demo; weighting_demo('runs/demo')"

export: $(STAMP)
	$(BIN)/nbdev_export

clean-nbs: $(STAMP)
	$(BIN)/nbdev_clean

readme: $(STAMP)
	$(PY) tools/make_docs.py readme

# the documentation site, offline (nbdev processing + Sphinx/myst-nb), into _docs/; also regenerates README.md
docs: $(STAMP)
	$(PY) tools/make_docs.py site

check-clean: $(STAMP)
	@before=$$($(SNAPSHOT)); $(BIN)/nbdev_clean; after=$$($(SNAPSHOT)); \
	  if [ "$$before" != "$$after" ]; then echo "FAIL: nbdev_clean changed notebooks: commit them cleaned"; git status --short; exit 1; fi
	@echo "ok: notebooks are clean"

check-export: $(STAMP)
	@before=$$($(SNAPSHOT)); $(BIN)/nbdev_export; after=$$($(SNAPSHOT)); \
	  if [ "$$before" != "$$after" ]; then echo "FAIL: nbdev_export changed the package: it was out of sync with nbs/"; git status --short; exit 1; fi
	@echo "ok: package in sync with notebooks"

check-readme: $(STAMP)
	@before=$$($(SNAPSHOT)); $(PY) tools/make_docs.py readme; after=$$($(SNAPSHOT)); \
	  if [ "$$before" != "$$after" ]; then echo "FAIL: README.md was stale: regenerate it from nbs/index.ipynb (make readme)"; git status --short; exit 1; fi
	@echo "ok: README.md matches nbs/index.ipynb"

# how the pages read and how the package is built (tools/page_measures.py): its limits hold
check-pages: $(STAMP)
	@$(PY) tools/page_measures.py --check | tail -4

# nbdev's own runner, on demand; `make test` runs every notebook once as nbdev's runner does (tests/test_notebooks.py:
# the pages that show widgets in a Jupyter kernel), with the same cells left out. One torch thread per worker: two workers of two threads each on two cores spin-wait on each
# other (a page that trains in one minute alone took nine beside 10_experiments)
nbtest: $(STAMP)
	OMP_NUM_THREADS=1 $(BIN)/nbdev_test --n_workers 2

# two workers (pytest-xdist) on one torch thread each, for the reason above. A file's tests stay on one worker
# (loadscope): a module's fixture then builds once (the docs site into _docs/, the killed grid, the uninterrupted run);
# each notebook is a test class of its own (tests/test_notebooks.py). The scopes go to whichever worker is free in
# the order tests/conftest.py gives them, the longest first (--no-loadscope-reorder: xdist would order them by their
# number of tests). The slowest tests are listed at the end, to tell a slow test from a stalled one
pytest: $(STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist loadscope --no-loadscope-reorder --durations=15 tests/

test: check-clean check-export check-readme check-pages pytest

# the edit loop (about 80 s on 2 cores; `make test` before a commit): every page's quick cells but the three that
# train runs (10_experiments, 12_own_data, 13_own_loop), through nbdev's runner (a worker imports torch once for all its
# pages), and the library's unit tests
FAST_TESTS := tests/test_losses.py tests/test_cvae.py tests/test_synthetic_metrics.py tests/test_reference.py \
	tests/test_clustering_encoder.py tests/test_explorer.py tests/test_bench_tables.py tests/test_matched_rate.py \
	tests/test_head_probe.py
test-fast: $(STAMP)
	OMP_NUM_THREADS=1 $(BIN)/nbdev_test --n_workers 2 --skip_file_re '^(10_|12_|13_)'
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 -q -p no:cacheprovider $(FAST_TESTS)

bench: $(STAMP)
	$(PY) bench/run.py

# the experiments page's grid of runs (about an hour on 2 cores); resumable: a second start skips finished runs
grid: $(STAMP)
	$(PY) experiments/grid.py --jobs 2

# the same terms on real text (the real-text probe's two corpora, each family's text settings, seeds 0-2; hours on 2
# cores); resumable as the grid
text-grid: $(STAMP)
	$(PY) experiments/text_grid.py wordnet --jobs 2
	$(PY) experiments/text_grid.py debian --jobs 2
	$(PY) experiments/text_grid.py debian --family continuous --jobs 2
	$(PY) experiments/text_grid.py wordnet --family continuous --jobs 2
	$(PY) experiments/text_grid.py wordnet --decoder copy --jobs 2
	$(PY) experiments/text_grid.py debian --decoder copy --jobs 2

# the seed's claim at matched rate: each term of the grid with beta searched to the plain run's KL (needs `make grid`),
# and the real-text copy grid's example term the same way (needs `make text-grid`)
matched-rate: $(STAMP)
	$(PY) experiments/matched_rate.py --jobs 2
	$(PY) experiments/text_matched_rate.py wordnet --jobs 2
	$(PY) experiments/text_matched_rate.py debian --jobs 2
