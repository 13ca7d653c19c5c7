# Two entry points: `make run` and `make test`. Everything they need is installed here, so a
# fresh Debian machine (root, Python 3.11) needs nothing else.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
SYSTEM_TOOLS := fio iostat iperf3 sshd sfdisk mkfs.xfs mkfs.ext4 mkswap losetup unshare
APT_PACKAGES := fio sysstat iperf3 openssh-server util-linux mount e2fsprogs iproute2 procps fdisk xfsprogs chromium

.PHONY: run test test-fast check venv system-deps bench bundle bundle-lock clean

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  echo "python3-venv missing: installing it with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv python3-pip && \
	  rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed-run: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e .
	@touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e '.[test]'
	@touch $@ $(VENV)/.installed-run

venv: $(VENV)/.installed-run

## Starts racperf on the live dashboard; fio's default target is a scratch file in a temp dir.
run: $(VENV)/.installed-run
	$(BIN)/racperf

## Installs fio, sysstat, iperf3 and openssh-server when missing, then runs the whole suite.
system-deps:
	@missing=""; for t in $(SYSTEM_TOOLS); do \
	  command -v $$t >/dev/null 2>&1 || [ -x /usr/sbin/$$t ] || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages (missing:$$missing)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES); \
	fi

## Lint, format and types first (seconds), then the whole suite.
check: $(VENV)/.installed-test
	$(BIN)/ruff check racperf_tui tests scripts
	$(BIN)/ruff format --check racperf_tui tests scripts
	$(BIN)/mypy

## Two workers (pytest-xdist) on CI's two cores (three made the suite 620 s instead of 727 s,
## but starved the tests that measure: 815 Mbit/s on a shaped 1 Gbit link, an ORION point with
## no live figures), a test file whole in one of them (its module fixtures, its loop
## devices and namespaces together), handed out in collection order: the longest files first
## (tests/conftest.py LONGEST_MODULES; xdist's default reorder puts files with many tests
## first, and left the two-test test_matrix.py, a minute, to the end of one worker); the
## slowest tests named at the end.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15
## Bytecode written (this machine's environment sets PYTHONDONTWRITEBYTECODE): the suite starts
## hundreds of `python -m racperf_tui` commands and supervisors, each compiled every module it
## imports again without it (~0.3 s CPU a supervisor), and pytest rewrote every test module's
## asserts in each worker. test_runs_cli.py: 123 s -> 108 s, CPU 53.5 -> 49.4 s at load ~6.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q -p no:cacheprovider

test: system-deps $(VENV)/.installed-test check
	$(PYTEST) $(PYTEST_PARALLEL) $(PYTEST_ARGS)

## The quick lane while developing: the tests that need nothing heavy. Each test's needs are
## markers derived at collection (tests/helpers/needs.py) from its skip markers, its fixtures
## and the helpers they call: an sshd, network namespaces, loop devices, real fio, racperf on a
## pty, racperf's CLI in a new interpreter (~1 s of CPU each: 82 tests, a third of the lane's
## CPU); `root` and the few tests marked slow by hand are left out too. No list of modules.
## Four workers: the lane holds no test that measures throughput or timing (those need fio,
## sshd or namespaces), and its tests wait on processes more than they compute: 1,191 tests in
## 170 s with two workers, 106 s with four, on the 2-core CI machine (154 s of CPU either way).
FAST_LANE := not (needs_sshd or needs_netns or needs_loop or needs_fio or needs_chromium or pty_ui or subprocess_cli or root or slow)
FAST_WORKERS ?= 4
test-fast: system-deps $(VENV)/.installed-test
	$(PYTEST) -m "$(FAST_LANE)" -n $(FAST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15 $(PYTEST_ARGS)

## The offline bundle for nodes with no network: dist/racperf-VERSION-offline.tar.gz (README:
## Installing on a database node). bundle-lock resolves the dependencies again into
## bundle/requirements.lock (every platform's wheel hashes); bundle takes exactly those.
bundle: $(BIN)/python
	$(BIN)/python scripts/bundle.py build

bundle-lock: $(BIN)/python
	$(BIN)/python scripts/bundle.py lock

bench: $(VENV)/.installed-test
	$(BIN)/python tests/bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache dist
