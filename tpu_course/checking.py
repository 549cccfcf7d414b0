"""Exercise checkers: call the learner's answer, compare by meaning, report in plain words.

Learner mode prints one of: correct; not attempted yet; incorrect, with the first concrete
difference; or what the learner's code raised and on which call. It never shows a traceback
from this package for a learner's mistake.

TPU_COURSE_EXPECT (set by the tests) turns a report into an assertion:
  correct        anything but correct raises (solutions/ must all pass)
  not-attempted  anything but "not attempted" raises (untouched stubs in notebooks/)
"""
import json
import os
from importlib import resources


class Incorrect(Exception):
    """Raised by a check with the first concrete difference it found."""


class NotAttempted(Exception):
    """The answer is still the stub."""


class LearnerCodeRaised(Exception):
    """The learner's code raised; carries the error and the call that raised it."""

    def __init__(self, error, call):
        super().__init__(f"{type(error).__name__}({str(error)[:300]!r}) when called with {call}")
        self.error = error


def call(answer, *args, described_as=None, **kwargs):
    """Call the learner's function; turn what it raises into NotAttempted or LearnerCodeRaised."""
    if answer is ... or answer is None:
        raise NotAttempted()
    if not callable(answer):
        raise Incorrect(f"expected a function, but got {type(answer).__name__} {answer!r:.60}: "
                        "pass the function itself, without calling it (no parentheses).")
    try:
        return answer(*args, **kwargs)
    except NotImplementedError:
        raise NotAttempted() from None
    except Exception as error:  # the learner's code, whatever it raised
        shown = described_as or ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
        raise LearnerCodeRaised(error, shown) from None


def expect_equal(what, got, expected, tolerance=1e-6):
    """Incorrect unless two numbers agree; the message names what differs."""
    try:
        got_number = float(got)
    except (TypeError, ValueError):
        raise Incorrect(f"{what}: expected a number, got {type(got).__name__} {got!r:.80}") from None
    if abs(got_number - expected) > tolerance * max(1.0, abs(expected)):
        raise Incorrect(f"{what}: expected {expected:g}, got {got_number:g}")


def _solutions():
    text = resources.files(__package__).joinpath("solutions.json").read_text(encoding="utf-8")
    return json.loads(text)


class Exercise:
    """One exercise: `check.ex_0_1(answer)`, `check.ex_0_1.hint()`, `check.ex_0_1.solution()`."""

    def __init__(self, key, title, check, hints):
        self.key, self.title, self._check, self._hints = key, title, check, list(hints)
        self._hints_shown = 0

    def __repr__(self):
        return f"<exercise {self.key}: {self.title}>"

    def evaluate(self, answer):
        """(outcome, message): outcome is correct, not-attempted, incorrect or raised."""
        try:
            self._check(answer)
        except NotAttempted:
            return "not-attempted", "the stub is still in place."
        except Incorrect as difference:
            return "incorrect", str(difference)
        except LearnerCodeRaised as raised:
            return "raised", str(raised)
        return "correct", ""

    def __call__(self, answer):
        outcome, message = self.evaluate(answer)
        name = f"Exercise {self.key}"
        text = {
            "correct": f"✅ {name}: correct.",
            "not-attempted": f"⏳ {name}: not attempted yet: {message} "
                             "Replace the TODO above with your code, run that cell, then this one again.",
            "incorrect": f"❌ {name}: not yet — {message.rstrip('.')}. "
                         f"For a hint: check.{self.key}.hint()",
            "raised": f"💥 {name}: your code raised {message.rstrip('.')}. "
                      f"For a hint: check.{self.key}.hint()",
        }[outcome]
        expected = os.environ.get("TPU_COURSE_EXPECT")
        if expected and outcome != expected:
            raise AssertionError(f"expected {expected}, got: {text}")
        print(text)

    def hint(self):
        """Print the next hint (each call shows one more); the last one repeats."""
        self._hints_shown = min(self._hints_shown + 1, len(self._hints))
        for number, text in enumerate(self._hints[: self._hints_shown], start=1):
            print(f"Hint {number}/{len(self._hints)}: {text}")
        if self._hints_shown == len(self._hints):
            print(f"Still stuck? check.{self.key}.solution() shows a worked answer.")

    def solution(self):
        """Print the reference solution, as it stands in the solution notebook."""
        print(_solutions().get(self.key, "(no solution recorded: regenerate the notebooks)"))
