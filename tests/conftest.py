import json
import linecache
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]


# Before any test module is imported: TensorFlow fixes its devices the first time it runs
# anything, and some test modules build tensors at import time.
from tpu_course.hardware import connect_quietly  # noqa: E402

COURSE_STRATEGY = connect_quietly()


@pytest.fixture(scope="session")
def strategy():
    """The course's strategy in this test process (8 CPU replicas here), set up once."""
    return COURSE_STRATEGY


def notebook_namespace(strategy):
    import numpy as np
    import tensorflow as tf
    return {"tf": tf, "np": np, "strategy": strategy}


def run_cell_text(text, namespace, filename):
    """exec() code under a file name that linecache knows: AutoGraph reads a function's
    source to turn `for _ in tf.range(...)` into a graph loop, and finds none in a bare string."""
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    exec(compile(text, filename, "exec"), namespace)
    return namespace


def reference(key, name, strategy):
    """The name `name` as the solution notebook defines it (from tpu_course/solutions.json)."""
    text = json.loads((ROOT / "tpu_course" / "solutions.json").read_text())[key]
    return run_cell_text(text, notebook_namespace(strategy), f"<solution {key}>")[name]


def student_stub(notebook, name, strategy):
    """The name `name` (a function or an assigned value) as the student notebook defines it:
    the untouched stub. Checker calls in the same cell are left out."""
    defines = re.compile(rf"^(def {name}\(|{name} = )", re.MULTILINE)
    for cell in nbformat.read(ROOT / "notebooks" / notebook, as_version=4).cells:
        if cell.cell_type == "code" and defines.search(cell.source):
            text = "\n".join(line for line in cell.source.splitlines() if not line.startswith("check."))
            return run_cell_text(text, notebook_namespace(strategy), f"<stub {name}>")[name]
    raise LookupError(f"notebooks/{notebook} defines no {name}")


@pytest.fixture
def outcome(monkeypatch):
    """outcome(exercise, answer) -> (kind, message), in learner mode."""
    monkeypatch.delenv("TPU_COURSE_EXPECT", raising=False)
    return lambda exercise, answer: exercise.evaluate(answer)
