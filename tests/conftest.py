import json
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def strategy():
    """The course's strategy in this test process (8 CPU replicas here), set up once."""
    from tpu_course.hardware import connect_quietly
    return connect_quietly()


def notebook_namespace(strategy):
    import numpy as np
    import tensorflow as tf
    return {"tf": tf, "np": np, "strategy": strategy}


def reference(key, name, strategy):
    """The function `name` as the solution notebook defines it (from tpu_course/solutions.json)."""
    namespace = notebook_namespace(strategy)
    exec(json.loads((ROOT / "tpu_course" / "solutions.json").read_text())[key], namespace)
    return namespace[name]


def student_stub(notebook, name, strategy):
    """The function `name` as the student notebook defines it: the untouched stub."""
    namespace = notebook_namespace(strategy)
    for cell in nbformat.read(ROOT / "notebooks" / notebook, as_version=4).cells:
        if cell.cell_type == "code" and f"def {name}(" in cell.source:
            exec(cell.source, namespace)
            return namespace[name]
    raise LookupError(f"notebooks/{notebook} defines no {name}")


@pytest.fixture
def outcome(monkeypatch):
    """outcome(exercise, answer) -> (kind, message), in learner mode."""
    monkeypatch.delenv("TPU_COURSE_EXPECT", raising=False)
    return lambda exercise, answer: exercise.evaluate(answer)
