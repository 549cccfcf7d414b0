# The two commands: `make lab` opens the course in JupyterLab; `make test` runs every test.
# Both set up .venv first (Python 3.11+), from requirements.txt and constraints.txt.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
NBVAL := --nbval-current-env --nbval-cell-timeout=300
WORKERS ?= 2
# On a TPU host (or with TPU=1) the TPU build of TensorFlow replaces the CPU one.
TPU ?= $(strip $(wildcard /dev/accel[0-9]* /dev/vfio/[0-9]*)$(TPU_ACCELERATOR_TYPE))
TF_VERSION := $(shell sed -n 's/^tensorflow==\([0-9.]*\).*/\1/p' requirements.txt)
LIBTPU_INDEX := https://storage.googleapis.com/libtpu-tf-releases/index.html

.PHONY: lab test notebooks check setup clean

$(BIN)/activate.done: requirements.txt constraints.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed (the pinned numpy, scipy and scikit-learn require it): run make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
ifneq ($(TPU),)
	$(BIN)/python -m pip install -q tensorflow-tpu==$(TF_VERSION) --find-links $(LIBTPU_INDEX)
	grep -v '^tensorflow==' requirements.txt > $(VENV)/requirements.txt
else
	cp requirements.txt $(VENV)/requirements.txt
endif
	$(BIN)/python -m pip install -q -r $(VENV)/requirements.txt -c constraints.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $@

setup: $(BIN)/activate.done

# As root (a container, CI), Jupyter needs --allow-root.
lab: setup
	$(BIN)/jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# Unit tests and the generator's check, then every solution notebook with its outputs
# compared, then every student notebook run through (stubs must read "not attempted").
test: setup
	$(BIN)/python -m pytest -q -n $(WORKERS) tests/
	TPU_COURSE_EXPECT=correct $(BIN)/python -m pytest -q -n $(WORKERS) --dist loadfile $(NBVAL) \
		--nbval --nbval-sanitize-with tests/sanitize.cfg solutions/
	TPU_COURSE_EXPECT=not-attempted $(BIN)/python -m pytest -q -n $(WORKERS) --dist loadfile $(NBVAL) \
		--nbval-lax notebooks/

# Regenerate notebooks/ and solutions/ from sources/ (executes the solutions), or check them.
notebooks: setup
	$(BIN)/python generate.py $(SOURCES)

check: setup
	$(BIN)/python generate.py --check

clean:
	rm -rf $(VENV)
