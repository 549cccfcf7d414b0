"""Generate the course's notebooks from their sources, or check that they are up to date.

    python generate.py                     regenerate everything, executing the solutions
    python generate.py sources/00_start_here/00_start_here.py   only that source
    python generate.py --no-execute        regenerate, keeping the committed solution outputs
    python generate.py --check             regenerate into memory and fail on any difference

Each source in sources/ is a percent-format script (jupytext's `# %%` cells). Solution code
is marked by a cell tag (`# %% tags=["solution"]`) or by a region inside a cell:

    # BEGIN SOLUTION
    ...
    # END SOLUTION

The student notebook (notebooks/) gets a stub in its place; the solution notebook
(solutions/) keeps the code and is executed, with outputs. Each solution must be followed
by its checker call, `check.ex_<module>_<n>(...)`, whose solution text is written to
tpu_course/solutions.json for `check.ex_<module>_<n>.solution()`.
"""
import argparse
import ast
import copy
import json
import os
import re
import sys
import textwrap
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent
SOURCES, NOTEBOOKS, SOLUTIONS = ROOT / "sources", ROOT / "notebooks", ROOT / "solutions"
SOLUTIONS_JSON = ROOT / "tpu_course" / "solutions.json"
README = ROOT / "README.md"

REPOSITORY = "tpu-course/tensorflow-on-tpus"  # GitHub owner/name: badges and Colab installs
BRANCH = "main"

BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
SOLUTION_TAG = "solution"
CHECKER_CALL = re.compile(r"\bcheck\.(ex_\d+_\d+)\(")
TABLE_BEGIN, TABLE_END = "<!-- BEGIN MODULE TABLE -->", "<!-- END MODULE TABLE -->"

SETUP_CELL = f'''\
# Set-up, the same first cell in every notebook (written by generate.py). Opened alone,
# e.g. from its Colab badge, it installs the course package; then it finds the hardware.
import importlib, importlib.util, subprocess, sys
if importlib.util.find_spec("tpu_course") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                    "git+https://github.com/{REPOSITORY}@{BRANCH}"], check=True)
    importlib.invalidate_caches()
import tpu_course
strategy = tpu_course.start()  # TPU, else GPUs, else 8 replicas on the CPU; sets seeds
import numpy as np
import tensorflow as tf
from tpu_course import check'''


class SourceError(Exception):
    """A source breaks the rules above; the message names the file and the fix."""


# ---- stubs ---------------------------------------------------------------------------------

def stub_for(code):
    """Student stub for top-level solution code: signatures and names kept, bodies removed.

    `def f(...)` keeps its header and docstring and gets `raise NotImplementedError`;
    `name = value` becomes `name = ...`; anything else is dropped.
    """
    lines = code.splitlines()
    stub = []
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            body = node.body
            has_docstring = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                             and isinstance(body[0].value.value, str))
            header_end = body[0].end_lineno if has_docstring else body[0].lineno - 1
            indent = " " * body[0].col_offset
            stub += lines[first - 1:header_end]
            stub += [f"{indent}# TODO: write the body.", f"{indent}raise NotImplementedError", ""]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            stub += [f"{ast.unparse(t)} = ...  # TODO" for t in targets]
    return "\n".join(stub).rstrip()


def region_stub(region_lines, indent):
    """Stub for a marked region: inside a block, raise; at top level, as stub_for."""
    if indent:
        return [f"{indent}# TODO: your code here.", f"{indent}raise NotImplementedError"]
    stub = stub_for("\n".join(region_lines))
    return stub.splitlines() if stub else ["# TODO: your code here.", "raise NotImplementedError"]


def split_regions(source, where):
    """(student code, solution code, [solution texts]) for one code cell with regions."""
    student, solution, pieces, region = [], [], [], None
    for number, line in enumerate(source.splitlines(), start=1):
        marker = line.strip()
        if marker == BEGIN:
            if region is not None:
                raise SourceError(f"{where}, line {number}: {BEGIN} inside another region")
            region, indent = [], line[: len(line) - len(line.lstrip())]
        elif marker == END:
            if region is None:
                raise SourceError(f"{where}, line {number}: {END} without {BEGIN}")
            student += region_stub([l[len(indent):] for l in region], indent)
            pieces.append(textwrap.dedent("\n".join(region)))
            region = None
        elif re.match(r"#\s*(BEGIN|END)\b", marker, re.IGNORECASE):
            raise SourceError(f"{where}, line {number}: {marker!r} is not a marker; "
                              f"write exactly {BEGIN!r} or {END!r}")
        elif region is not None:
            region.append(line)
            solution.append(line)
        else:
            student.append(line)
            solution.append(line)
    if region is not None:
        raise SourceError(f"{where}: {BEGIN} is never closed by {END}")
    return "\n".join(student), "\n".join(solution), pieces


# ---- one source -> two notebooks -----------------------------------------------------------

def colab_url(path):
    return f"https://colab.research.google.com/github/{REPOSITORY}/blob/{BRANCH}/{path.as_posix()}"


def badge(label, path):
    return f"[![{label}](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(path)})"


def relative_paths(source):
    relative = source.relative_to(SOURCES).with_suffix(".ipynb")
    return Path("notebooks") / relative, Path("solutions") / relative


def header_cell(source):
    notebook_path, solution_path = relative_paths(source)
    text = (f"{badge('Open in Colab', notebook_path)} &nbsp; {badge('Solution in Colab', solution_path)}\n\n"
            f"*Maintainers: this notebook is generated from `{source.relative_to(ROOT).as_posix()}`; "
            "edit that file and run `python generate.py`, not this notebook.*")
    return nbformat.v4.new_markdown_cell(text)


def finish(cells, metadata):
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=metadata)
    for number, cell in enumerate(notebook.cells):
        cell.id = f"cell-{number:03d}"
        cell.metadata.pop("lines_to_next_cell", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return notebook


def build(source):
    """(student notebook, solution notebook, {exercise key: solution text}) for one source."""
    where = source.relative_to(ROOT).as_posix()
    parsed = jupytext.read(source, fmt="py:percent")
    if not parsed.cells or parsed.cells[0].cell_type != "markdown":
        raise SourceError(f"{where}: the first cell must be the markdown title")
    setup = nbformat.v4.new_code_cell(SETUP_CELL, metadata={"tags": ["nbval-ignore-output"]})
    student, solution = [parsed.cells[0], header_cell(source), setup], [parsed.cells[0], header_cell(source), setup]
    solutions, pending = {}, []
    for number, cell in enumerate(parsed.cells[1:], start=2):
        cell_where = f"{where}, cell {number}"
        tags = cell.metadata.get("tags", [])
        student_cell, solution_cell = copy.deepcopy(cell), copy.deepcopy(cell)
        if cell.cell_type == "code":
            for key in CHECKER_CALL.findall(cell.source):
                if pending:
                    solutions[key] = "\n\n".join(pending)
                    pending = []
            if SOLUTION_TAG in tags:
                if BEGIN in cell.source:
                    raise SourceError(f"{cell_where}: a solution cell needs no region markers")
                pending.append(cell.source.strip())
                student_cell.source = stub_for(cell.source)
                for each in (student_cell, solution_cell):
                    each.metadata["tags"] = [t for t in tags if t != SOLUTION_TAG]
                    if not each.metadata["tags"]:
                        del each.metadata["tags"]
            else:
                student_cell.source, solution_cell.source, pieces = split_regions(cell.source, cell_where)
                if pieces:  # the learner sees the whole cell's solution, function header included
                    pending.append("\n".join(line for line in solution_cell.source.splitlines()
                                             if not CHECKER_CALL.search(line)).strip())
                # a checker in the same cell, after the region, closes it
                tail = cell.source.rsplit(END, 1)[-1] if pieces else ""
                for key in CHECKER_CALL.findall(tail):
                    solutions[key] = "\n\n".join(pending)
                    pending = []
        student.append(student_cell)
        solution.append(solution_cell)
    if pending:
        raise SourceError(f"{where}: a solution is not followed by its checker call "
                          "(check.ex_<module>_<n>(...)); add one after it")
    metadata = {
        "accelerator": "TPU",
        "colab": {"provenance": [], "toc_visible": True},
        "course": dict(parsed.metadata.get("course", {})),
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    return finish(student, metadata), finish(solution, copy.deepcopy(metadata)), solutions


def leaked_solution_lines(committed, fresh, solutions):
    """Solution lines in a committed student notebook that its source does not put there."""
    def code_lines(notebook):
        return {line.strip() for cell in notebook.cells if cell.cell_type == "code"
                for line in cell.source.splitlines()}
    extra = code_lines(committed) - code_lines(fresh)
    return [line.strip() for text in solutions.values() for line in text.splitlines()
            if line.strip() in extra and len(line.strip()) > 3 and not line.strip().startswith("#")]


def serialise(notebook):
    return nbformat.writes(notebook) + "\n"


# ---- executing solutions -------------------------------------------------------------------

def execute(notebook, workdir):
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    os.environ["TPU_COURSE_EXPECT"] = "correct"
    client = NotebookClient(notebook, timeout=300, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(workdir)}})
    try:
        client.execute()
    except CellExecutionError as error:
        raise SourceError(f"a solution cell failed while executing {workdir.name}:\n{error}") from None
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    notebook.metadata = copy.deepcopy(notebook.metadata)
    for key in list(notebook.metadata):
        if key not in ("accelerator", "colab", "course", "kernelspec", "language_info"):
            del notebook.metadata[key]
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook


def with_outputs_of(notebook, executed_path):
    """A copy of `notebook` carrying the outputs of the committed, executed notebook."""
    merged = copy.deepcopy(notebook)
    if not executed_path.exists():
        return merged
    executed = {cell.id: cell for cell in nbformat.read(executed_path, as_version=4).cells}
    for cell in merged.cells:
        if cell.cell_type == "code" and cell.id in executed:
            cell.outputs = executed[cell.id].get("outputs", [])
            cell.execution_count = executed[cell.id].get("execution_count")
    return merged


# ---- README module table -------------------------------------------------------------------

def module_table(built):
    rows = ["| Module | Notebook | What you learn | Time | Open |", "|---|---|---|---|---|"]
    for source, (student, _, _) in sorted(built.items()):
        course = student.metadata.get("course", {})
        notebook_path, solution_path = relative_paths(source)
        title = student.cells[0].source.splitlines()[0].lstrip("# ").strip()
        rows.append(f"| {source.parent.name} | [{title}]({notebook_path.as_posix()}) | "
                    f"{course.get('summary', '')} | {course.get('minutes', '?')} min | "
                    f"{badge('Notebook', notebook_path)} {badge('Solution', solution_path)} |")
    return "\n".join(rows)


def readme_with_table(table):
    text = README.read_text(encoding="utf-8")
    if TABLE_BEGIN not in text or TABLE_END not in text:
        raise SourceError(f"README.md lacks the markers {TABLE_BEGIN} and {TABLE_END}")
    before, rest = text.split(TABLE_BEGIN, 1)
    after = rest.split(TABLE_END, 1)[1]
    return f"{before}{TABLE_BEGIN}\n{table}\n{TABLE_END}{after}"


# ---- main ----------------------------------------------------------------------------------

def all_sources():
    return sorted(SOURCES.glob("*/*.py"))


def build_all():
    built = {source: build(source) for source in all_sources()}
    solutions, known = {}, registered_exercises()
    for source, (student, _, found) in built.items():
        for cell in student.cells:
            for key in CHECKER_CALL.findall(cell.source):
                if key not in known:
                    raise SourceError(f"{source.relative_to(ROOT)}: check.{key} is called but "
                                      "tpu_course/check.py defines no such exercise")
        solutions.update(found)
    return built, json.dumps(solutions, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def registered_exercises():
    sys.path.insert(0, str(ROOT))
    from tpu_course import check
    return {name for name in dir(check) if name.startswith("ex_")}


def check_generated():
    """Differences between what the sources generate and what is committed."""
    built, solutions_json = build_all()
    problems = []

    def compare(path, expected):
        if not path.exists():
            problems.append(f"{path.relative_to(ROOT)} is missing")
        elif path.read_text(encoding="utf-8") != expected:
            problems.append(f"{path.relative_to(ROOT)} differs from what its source generates")

    for source, (student, solution, found) in built.items():
        notebook_path, solution_path = relative_paths(source)
        compare(ROOT / notebook_path, serialise(student))
        if (ROOT / notebook_path).exists():
            leaked = leaked_solution_lines(nbformat.read(ROOT / notebook_path, as_version=4), student, found)
            if leaked:
                problems.append(f"{notebook_path} contains solution text: {leaked[0]!r}")
        executed = ROOT / solution_path
        compare(executed, serialise(with_outputs_of(solution, executed)))
        if executed.exists() and any(c.cell_type == "code" and c.source.strip() and c.execution_count is None
                                     for c in nbformat.read(executed, as_version=4).cells):
            problems.append(f"{solution_path} has unexecuted cells: run python generate.py {source.relative_to(ROOT)}")
    for folder in (NOTEBOOKS, SOLUTIONS):
        for path in folder.glob("**/*.ipynb"):
            if ".ipynb_checkpoints" in path.parts:
                continue
            source = SOURCES / path.relative_to(folder).with_suffix(".py")
            if source not in built:
                problems.append(f"{path.relative_to(ROOT)} has no source ({source.relative_to(ROOT)})")
    compare(SOLUTIONS_JSON, solutions_json)
    compare(README, readme_with_table(module_table(built)))
    return problems


def write(selected):
    built, solutions_json = build_all()
    for source, (student, solution, _) in built.items():
        notebook_path, solution_path = relative_paths(source)
        for path in (ROOT / notebook_path, ROOT / solution_path):
            path.parent.mkdir(parents=True, exist_ok=True)
        (ROOT / notebook_path).write_text(serialise(student), encoding="utf-8")
        if source in selected:
            print(f"executing {solution_path} ...", flush=True)
            solution = execute(solution, (ROOT / solution_path).parent)
        else:
            solution = with_outputs_of(solution, ROOT / solution_path)
        (ROOT / solution_path).write_text(serialise(solution), encoding="utf-8")
    SOLUTIONS_JSON.write_text(solutions_json, encoding="utf-8")
    README.write_text(readme_with_table(module_table(built)), encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="*", type=Path, help="sources whose solutions to execute (default: all)")
    parser.add_argument("--check", action="store_true", help="fail on any difference; write nothing")
    parser.add_argument("--no-execute", action="store_true",
                        help="execute no solution; keep the outputs already committed")
    options = parser.parse_args()
    try:
        if options.check:
            problems = check_generated()
            for problem in problems:
                print(f"generate.py --check: {problem}")
            if problems:
                print("Fix: edit the sources, then run `python generate.py`.")
            return 1 if problems else 0
        selected = [path.resolve() for path in options.sources] or all_sources()
        if options.no_execute:
            selected = []
        missing = [path for path in selected if path not in all_sources()]
        if missing:
            raise SourceError(f"{missing[0]} is not a source; sources are sources/<module>/<name>.py")
        write(set(selected))
    except SourceError as error:
        print(f"generate.py: {error}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
