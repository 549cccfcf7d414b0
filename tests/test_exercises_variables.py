"""Exercises 1.4 to 1.6: references pass, plausible wrong answers are caught, others pass too."""
import pytest
import tensorflow as tf

from conftest import reference, student_stub
from tpu_course import check

NOTEBOOK = "01_assignment/02_variables_compiled_and_replicated.ipynb"


# ---- ex_1_4: make_counter ----------------------------------------------------------------

def counter_creates_variable_per_call():
    @tf.function
    def counter(amount):
        total = tf.Variable(0.0)
        return total.assign_add(amount)
    return counter


def counter_resets_each_call():
    total = tf.Variable(0.0)

    @tf.function
    def counter(amount):
        total.assign(0.0)
        return total.assign_add(amount)
    return counter


def counter_in_a_python_number():
    state = {"total": 0.0}

    @tf.function
    def counter(amount):
        state["total"] += amount  # happens once, while tracing
        return state["total"]
    return counter


SHARED_TOTAL = []


def counter_shared_by_all():
    if not SHARED_TOTAL:
        SHARED_TOTAL.append(tf.Variable(0.0))

    @tf.function
    def counter(amount):
        return SHARED_TOTAL[0].assign_add(amount)
    return counter


def counter_returns_nothing():
    total = tf.Variable(0.0)

    @tf.function
    def counter(amount):
        total.assign_add(amount)
    return counter


def counter_called_too_early():
    total = tf.Variable(0.0)
    return total.assign_add(1.0)


def counter_eager_python_float():
    """No TensorFlow state at all: right eagerly, wrong inside a tf.function (traced once)."""
    state = {"total": 0.0}

    def counter(amount):
        state["total"] += float(amount)
        return state["total"]
    return counter


class LazyCounter(tf.Module):
    def __init__(self):
        self.total = None

    @tf.function
    def __call__(self, amount):
        if self.total is None:
            self.total = tf.Variable(0.0)
        return self.total.assign_add(amount)


def counter_module_created_on_first_call():
    return LazyCounter()


def counter_plain_function_with_variable():
    total = tf.Variable(0.0)
    return lambda amount: total.assign_add(amount)  # no tf.function of its own: fine too


def test_ex_1_4_reference_passes(strategy, outcome):
    assert outcome(check.ex_1_4, reference("ex_1_4", "make_counter", strategy)) == ("correct", "")


@pytest.mark.parametrize("answer", [counter_module_created_on_first_call,
                                    counter_plain_function_with_variable])
def test_ex_1_4_other_correct_answers_pass(strategy, outcome, answer):
    assert outcome(check.ex_1_4, answer) == ("correct", "")


@pytest.mark.parametrize("answer, kind, message", [
    (counter_creates_variable_per_call, "incorrect", "it still creates a tf.Variable on every call"),
    (counter_resets_each_call, "incorrect",
     "the total returned by the call with 2.5 (called directly): expected 3.5, got 2.5"),
    (counter_in_a_python_number, "incorrect",
     "the total returned by the call with 2.5 (called directly): expected 3.5, got 2.5"),
    (counter_shared_by_all, "incorrect",
     "the total returned by the call with 4.0 (on a second, new counter): expected 4, got 9"),
    (counter_returns_nothing, "incorrect", "it returned None"),
    (counter_called_too_early, "incorrect", "should return the counter itself"),
    (counter_eager_python_float, "incorrect", "(from inside another tf.function): expected 5, got 3"),
])
def test_ex_1_4_wrong_answers_get_a_specific_message(strategy, outcome, answer, kind, message):
    SHARED_TOTAL.clear()
    got_kind, got_message = outcome(check.ex_1_4, answer)
    assert got_kind == kind and message in got_message, got_message


def test_ex_1_4_untouched_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "make_counter", strategy)
    assert outcome(check.ex_1_4, stub)[0] == "not-attempted"


# ---- ex_1_5: make_step_counter -----------------------------------------------------------

INT_SCALAR = [tf.TensorSpec([], tf.int32)]


def step_counter_not_compiled():
    counter = tf.Variable(0, dtype=tf.int32)

    @tf.function(input_signature=INT_SCALAR)
    def step(n):
        counter.assign_add(n)
    return counter, step


def step_counter_retraces():
    counter = tf.Variable(0, dtype=tf.int32)

    @tf.function(jit_compile=True)
    def step(n):
        counter.assign_add(n)
    return counter, step


def step_counter_reduce_retracing():
    counter = tf.Variable(0, dtype=tf.int32)

    @tf.function(jit_compile=True, reduce_retracing=True)
    def step(n):
        counter.assign_add(n)
    return counter, step


def step_counter_float():
    counter = tf.Variable(0.0)

    @tf.function(jit_compile=True, input_signature=[tf.TensorSpec([], tf.float32)])
    def step(n):
        counter.assign_add(n)
    return counter, step


def step_counter_counts_calls():
    counter = tf.Variable(0, dtype=tf.int32)

    @tf.function(jit_compile=True, input_signature=INT_SCALAR)
    def step(n):
        counter.assign_add(1)
    return counter, step


def step_counter_plain_python():
    counter = tf.Variable(0, dtype=tf.int32)
    compiled = tf.function(lambda n: counter.assign_add(n), jit_compile=True)
    return counter, lambda n: compiled(tf.constant(n, tf.int32))


def step_counter_creates_variable_inside():
    made = {}

    @tf.function(jit_compile=True)
    def step(n):
        made["counter"] = tf.Variable(0, dtype=tf.int32)
        made["counter"].assign_add(n)
    step(0)
    return made["counter"], step


class StepCounter:
    """Another correct answer: an object holding both (its step keeps it alive)."""

    def __init__(self):
        self.counter = tf.Variable(0, dtype=tf.int32)
        self.step = tf.function(self._add, jit_compile=True, input_signature=INT_SCALAR)

    def _add(self, n):
        return self.counter.assign_add(n)


def step_counter_object():
    made = StepCounter()
    return made.counter, made.step


def step_counter_wrapped_function():
    counter = tf.Variable(0, dtype=tf.int32)

    def add(n):
        counter.assign_add(n)
        return counter.read_value()
    return counter, tf.function(add, jit_compile=True, input_signature=INT_SCALAR)


def test_ex_1_5_reference_passes(strategy, outcome):
    assert outcome(check.ex_1_5, reference("ex_1_5", "make_step_counter", strategy)) == ("correct", "")


@pytest.mark.parametrize("answer", [step_counter_object, step_counter_wrapped_function])
def test_ex_1_5_other_correct_answers_pass(strategy, outcome, answer):
    assert outcome(check.ex_1_5, answer) == ("correct", "")


@pytest.mark.parametrize("answer, kind, message", [
    (step_counter_not_compiled, "incorrect", "not compiled with XLA"),
    (step_counter_retraces, "incorrect", "step was traced 6 times in 6 calls"),
    (step_counter_reduce_retracing, "incorrect", "step was traced"),
    (step_counter_float, "incorrect", "the counter's dtype is float32, expected int32"),
    (step_counter_counts_calls, "incorrect", "the counter after step(3) (the sum of all the steps so far): expected 3, got 1"),
    (step_counter_plain_python, "incorrect", "step should be a tf.function"),
    (step_counter_creates_variable_inside, "raised", "singleton tf.Variables"),
])
def test_ex_1_5_wrong_answers_get_a_specific_message(strategy, outcome, answer, kind, message):
    got_kind, got_message = outcome(check.ex_1_5, answer)
    assert got_kind == kind and message in got_message, got_message


def test_ex_1_5_untouched_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "make_step_counter", strategy)
    assert outcome(check.ex_1_5, stub)[0] == "not-attempted"


# ---- ex_1_6: make_example_counter --------------------------------------------------------

def example_counter(aggregation, synchronization=tf.VariableSynchronization.AUTO, in_scope=True, count=None):
    def make(strategy):
        if in_scope:
            with strategy.scope():
                counter = tf.Variable(0.0, aggregation=aggregation, synchronization=synchronization)
        else:
            counter = tf.Variable(0.0, aggregation=aggregation)

        def count_examples(mask):
            counter.assign_add(count(mask) if count else tf.reduce_sum(mask))
        return counter, count_examples
    return make


def total_by_all_reduce(aggregation, dtype):
    """Another correct answer: all-reduce the count first, then every replica adds the total."""
    def make(strategy):
        with strategy.scope():
            counter = tf.Variable(0, dtype=dtype, aggregation=aggregation)

        def count_examples(mask):
            total = tf.distribute.get_replica_context().all_reduce("SUM", tf.reduce_sum(mask))
            counter.assign_add(tf.cast(total, dtype))
        return counter, count_examples
    return make


def counts_whole_batches(mask):
    return tf.cast(tf.size(mask), tf.float32)


def test_ex_1_6_reference_passes(strategy, outcome):
    answer = reference("ex_1_6", "make_example_counter", strategy)
    assert outcome(check.ex_1_6, answer) == ("correct", "")


@pytest.mark.parametrize("answer", [
    total_by_all_reduce(tf.VariableAggregation.ONLY_FIRST_REPLICA, tf.int32),
    total_by_all_reduce(tf.VariableAggregation.MEAN, tf.float32),
])
def test_ex_1_6_other_correct_answers_pass(strategy, outcome, answer):
    assert outcome(check.ex_1_6, answer) == ("correct", "")


# With 8 replicas, step 1 has 1, 2, 3, 1, 2, 3, 1, 2 real examples: 15 in all.
@pytest.mark.parametrize("answer, kind, message", [
    (example_counter(tf.VariableAggregation.NONE), "incorrect",
     "after step 1, the replicas' copies of the counter disagree: [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0]"),
    (example_counter(tf.VariableAggregation.MEAN), "incorrect",
     "with 8 replica(s), every copy of the counter after step 1: expected 15, got 1.875"),
    (example_counter(tf.VariableAggregation.ONLY_FIRST_REPLICA), "incorrect",
     "with 8 replica(s), every copy of the counter after step 1: expected 15, got 1"),
    (example_counter(tf.VariableAggregation.SUM, tf.VariableSynchronization.ON_READ), "incorrect",
     "synchronization=ON_READ keeps a separate count on each replica"),
    (example_counter(tf.VariableAggregation.SUM, in_scope=False), "incorrect",
     "created outside strategy.scope()"),
    (example_counter(tf.VariableAggregation.SUM, count=counts_whole_batches), "incorrect",
     "with 8 replica(s), every copy of the counter after step 1: expected 15, got 32"),
    (example_counter(tf.VariableAggregation.SUM, count=lambda mask: 1.0), "raised",
     "A non-DistributedValues value 1.0 cannot be reduced"),
])
def test_ex_1_6_wrong_answers_get_a_specific_message(strategy, outcome, answer, kind, message):
    got_kind, got_message = outcome(check.ex_1_6, answer)
    assert got_kind == kind and message in got_message, got_message


def test_ex_1_6_untouched_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "make_example_counter", strategy)
    assert outcome(check.ex_1_6, stub)[0] == "not-attempted"
