"""The checker machinery: what a learner sees for each outcome, and the test modes."""
import pytest

from tpu_course.checking import Exercise, Incorrect, call, expect_equal


def double_check(answer):
    expect_equal("double(3)", call(answer, 3), 6)


@pytest.fixture
def exercise(monkeypatch):
    monkeypatch.delenv("TPU_COURSE_EXPECT", raising=False)
    return Exercise("ex_9_1", "double a number", double_check, hints=["Multiply.", "By two."])


def stub(x):
    raise NotImplementedError


@pytest.mark.parametrize("answer, start", [
    (lambda x: 2 * x, "✅ Exercise ex_9_1: correct."),
    (stub, "⏳ Exercise ex_9_1: not attempted yet"),
    (..., "⏳ Exercise ex_9_1: not attempted yet"),
    (lambda x: x + 2, "❌ Exercise ex_9_1: not yet — double(3): expected 6, got 5."),
    (lambda x: "six", "❌ Exercise ex_9_1: not yet — double(3): expected a number, got str 'six'"),
    (lambda x: x / 0, "💥 Exercise ex_9_1: your code raised ZeroDivisionError('division by zero') when called with 3."),
    (6, "❌ Exercise ex_9_1: not yet — expected a function, but got int 6"),
])
def test_learner_mode_reports(exercise, capsys, answer, start):
    exercise(answer)
    out = capsys.readouterr().out
    assert out.startswith(start)
    assert "Traceback" not in out


def test_incorrect_points_to_the_hint(exercise, capsys):
    exercise(lambda x: x)
    assert "check.ex_9_1.hint()" in capsys.readouterr().out


@pytest.mark.parametrize("expect, answer, passes", [
    ("correct", lambda x: 2 * x, True), ("correct", stub, False), ("correct", lambda x: x, False),
    ("not-attempted", stub, True), ("not-attempted", lambda x: 2 * x, False),
])
def test_test_modes_raise_on_anything_else(exercise, monkeypatch, expect, answer, passes):
    monkeypatch.setenv("TPU_COURSE_EXPECT", expect)
    if passes:
        exercise(answer)
    else:
        with pytest.raises(AssertionError, match=f"expected {expect}"):
            exercise(answer)


def test_hints_come_one_at_a_time(exercise, capsys):
    exercise.hint()
    assert capsys.readouterr().out == "Hint 1/2: Multiply.\n"
    exercise.hint()
    out = capsys.readouterr().out
    assert "Hint 2/2: By two." in out and "solution()" in out


def test_solution_prints_the_recorded_text(capsys):
    from tpu_course import check
    check.ex_0_1.solution()
    assert "def sum_of_squares(strategy):" in capsys.readouterr().out


def test_expect_equal_tolerates_rounding():
    expect_equal("x", 0.1 + 0.2, 0.3)
    with pytest.raises(Incorrect):
        expect_equal("x", 0.31, 0.3)
