"""The generator: stubs, markers, and the check that catches drift and leaked solutions."""
import shutil
import subprocess
import sys

import nbformat
import pytest

import generate
from conftest import ROOT


def test_committed_notebooks_match_their_sources():
    result = subprocess.run([sys.executable, "generate.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_stub_keeps_signatures_and_names():
    code = '@tf.function\ndef f(x, y=2):\n    """Doc."""\n    return x * y\n\nanswer = 3\nprint(answer)\n'
    assert generate.stub_for(code) == ('@tf.function\ndef f(x, y=2):\n    """Doc."""\n'
                                       '    # TODO: write the body.\n    raise NotImplementedError\n\n'
                                       'answer = ...  # TODO')


def test_region_inside_a_function_becomes_raise():
    student, solution, pieces = generate.split_regions(
        "def f(x):\n    # BEGIN SOLUTION\n    return 2 * x\n    # END SOLUTION\n", "here")
    assert student == "def f(x):\n    # TODO: your code here.\n    raise NotImplementedError"
    assert solution == "def f(x):\n    return 2 * x" and pieces == ["return 2 * x"]


@pytest.mark.parametrize("source, message", [
    ("# BEGIN SOLUTION\nx = 1\n", "never closed"),
    ("x = 1\n# END SOLUTION\n", "without # BEGIN SOLUTION"),
    ("# BEGIN SOLUTON\nx = 1\n# END SOLUTION\n", "is not a marker"),
])
def test_broken_markers_are_named(source, message):
    with pytest.raises(generate.SourceError, match=message):
        generate.split_regions(source, "here")


def write_source(tmp_path, body):
    source = tmp_path / "sources" / "99_demo" / "99_demo.py"
    source.parent.mkdir(parents=True)
    source.write_text("# %% [markdown]\n# # Demo\n\n" + body)
    return source


def test_a_solution_needs_its_checker(tmp_path, monkeypatch):
    monkeypatch.setattr(generate, "ROOT", tmp_path)
    monkeypatch.setattr(generate, "SOURCES", tmp_path / "sources")
    source = write_source(tmp_path, "# %%\ndef f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n")
    with pytest.raises(generate.SourceError, match="not followed by its checker"):
        generate.build(source)


def test_whole_solution_cell_and_its_checker(tmp_path, monkeypatch):
    monkeypatch.setattr(generate, "ROOT", tmp_path)
    monkeypatch.setattr(generate, "SOURCES", tmp_path / "sources")
    source = write_source(tmp_path, '# %% tags=["solution"]\ndef f():\n    return 1\n\n# %%\ncheck.ex_9_1(f)\n')
    student, solution, solutions = generate.build(source)
    assert "return 1" not in student.cells[3].source and "raise NotImplementedError" in student.cells[3].source
    assert solution.cells[3].source.startswith("def f():\n    return 1")
    assert solutions == {"ex_9_1": "def f():\n    return 1"}
    assert generate.serialise(student) == generate.serialise(generate.build(source)[0])  # deterministic


@pytest.fixture
def copy_of_course(tmp_path, monkeypatch):
    """The course's generated files in a scratch folder, with the generator pointed at it."""
    for name in ("sources", "notebooks", "solutions"):
        shutil.copytree(ROOT / name, tmp_path / name)
    (tmp_path / "tpu_course").mkdir()
    shutil.copy(ROOT / "tpu_course" / "solutions.json", tmp_path / "tpu_course")
    shutil.copy(ROOT / "README.md", tmp_path)
    for name, value in [("ROOT", tmp_path), ("SOURCES", tmp_path / "sources"),
                        ("NOTEBOOKS", tmp_path / "notebooks"), ("SOLUTIONS", tmp_path / "solutions"),
                        ("SOLUTIONS_JSON", tmp_path / "tpu_course" / "solutions.json"),
                        ("README", tmp_path / "README.md")]:
        monkeypatch.setattr(generate, name, value)
    assert generate.check_generated() == []
    return tmp_path


def test_one_changed_character_is_caught(copy_of_course):
    path = copy_of_course / "notebooks" / "00_start_here" / "00_start_here.ipynb"
    text = path.read_text()
    path.write_text(text.replace("Start here", "Start Here", 1))
    assert any("differs from what its source generates" in p for p in generate.check_generated())


def test_a_changed_solution_source_is_caught(copy_of_course):
    path = copy_of_course / "solutions" / "00_start_here" / "00_start_here.ipynb"
    path.write_text(path.read_text().replace("SUM", "MEAN", 1))
    assert any("solutions/00_start_here" in p for p in generate.check_generated())


def test_solution_text_left_in_a_student_notebook_is_caught(copy_of_course):
    path = copy_of_course / "notebooks" / "00_start_here" / "00_start_here.ipynb"
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if "def sum_of_squares" in c.source)
    cell.source = cell.source.replace("raise NotImplementedError",
                                      'return float(strategy.reduce("SUM", on_every_replica(), axis=None))')
    nbformat.write(notebook, path)
    assert any("contains solution text" in p for p in generate.check_generated())


def test_a_notebook_without_a_source_is_caught(copy_of_course):
    shutil.copy(copy_of_course / "notebooks" / "00_start_here" / "00_start_here.ipynb",
                copy_of_course / "notebooks" / "00_start_here" / "stray.ipynb")
    assert any("has no source" in p for p in generate.check_generated())
