"""Exercises 1.1 to 1.3: the references pass, plausible wrong answers are caught, others pass too."""
import numpy as np
import pytest
import tensorflow as tf

from conftest import reference, student_stub
from tpu_course import check
from tpu_course.exercises_tracing import SEQUENCES, actual_traces

NOTEBOOK = "01_assignment/01_tensors_and_tracing.ipynb"


# ---- ex_1_1: replace_negatives -------------------------------------------------------------

def python_loop(x, value):
    for i in range(len(x)):
        if x[i] < 0:
            x[i] = value
    return x


def loop_into_a_list(x, value):
    return [value if element < 0 else element for element in x.numpy().ravel().tolist()]


def also_replaces_zero(x, value):
    return tf.where(x <= 0, value, x)


def always_float32(x, value):
    return tf.where(x < 0, float(value), tf.cast(x, tf.float32))


def through_a_variable(x, value):
    variable = tf.Variable(x)
    variable.assign(tf.where(x < 0, value, x))
    return variable


def assigns_into_its_input(x, value):
    if isinstance(x, tf.Variable):
        x.assign(tf.where(x < 0, value, x))
        return tf.convert_to_tensor(x)
    return tf.where(x < 0, value, x)


def numpy_array(x, value):
    return np.where(x.numpy() < 0, value, x.numpy()).astype(x.dtype.as_numpy_dtype)


def flattened(x, value):
    flat = tf.reshape(x, [-1])
    return tf.where(flat < 0, value, flat)


def scatter_with_wrong_dtype(x, value):
    positions = tf.where(x < 0)
    return tf.tensor_scatter_nd_update(x, positions, tf.fill([tf.shape(positions)[0]], value))


def scatter_update(x, value):
    """Another correct answer: scatter `value` into the negative positions (of the flattened
    tensor, since tf.where(condition) does not take a scalar)."""
    flat = tf.reshape(x, [-1])
    positions = tf.where(flat < 0)
    updates = tf.fill([tf.shape(positions)[0]], tf.constant(value, dtype=x.dtype))
    return tf.reshape(tf.tensor_scatter_nd_update(flat, positions, updates), tf.shape(x))


def arithmetic_mask(x, value):
    """Another correct answer: blend with a 0/1 mask (exact for these inputs)."""
    x = tf.convert_to_tensor(x)
    negative = tf.cast(x < 0, x.dtype)
    return x * (1 - negative) + tf.cast(value, x.dtype) * negative


def test_ex_1_1_reference_passes(strategy, outcome):
    answer = reference("ex_1_1", "replace_negatives", strategy)
    assert outcome(check.ex_1_1, answer) == ("correct", "")


@pytest.mark.parametrize("answer", [scatter_update, arithmetic_mask])
def test_ex_1_1_other_correct_answers_pass(outcome, answer):
    assert outcome(check.ex_1_1, answer)[0] == "correct"


@pytest.mark.parametrize("answer, kind, message", [
    (python_loop, "raised", "when called with a float32 tensor of shape (2, 3)"),
    (loop_into_a_list, "incorrect", "it returned a list, not a tensor"),
    (also_replaces_zero, "incorrect", "the element at index [0, 1] was 0.0 and became 0.5, expected 0.0"),
    (always_float32, "incorrect", "called with an int32 tensor of shape (5,) and value=7, the result's dtype is float32, expected int32"),
    (through_a_variable, "incorrect", "it returned a tf.Variable; return a new tensor"),
    (assigns_into_its_input, "incorrect", "with a float32 tf.Variable of shape (3,) and value=0.0, it changed its input"),
    (numpy_array, "incorrect", "it returned a ndarray, not a tensor"),
    (flattened, "incorrect", "the result's shape is (6,), expected (2, 3)"),
    (scatter_with_wrong_dtype, "raised", "when called with a float64 tensor of shape (2, 2, 1)"),
])
def test_ex_1_1_wrong_answers_get_a_specific_message(outcome, answer, kind, message):
    got_kind, got_message = outcome(check.ex_1_1, answer)
    assert got_kind == kind and message in got_message, got_message


def test_ex_1_1_untouched_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "replace_negatives", strategy)
    assert outcome(check.ex_1_1, stub)[0] == "not-attempted"


# ---- ex_1_2: compile_once ------------------------------------------------------------------

def plain_tf_function(function):
    return tf.function(function)


def fixed_length_signature(function):
    return tf.function(function, input_signature=[tf.TensorSpec([3], tf.float32),
                                                  tf.TensorSpec([], tf.int32)])


def no_tf_function(function):
    return function


def reduce_retracing_only(function):
    return tf.function(function, reduce_retracing=True)


def wrapper_around_a_tf_function(function):
    compiled = tf.function(function, input_signature=[tf.TensorSpec([None], tf.float32),
                                                      tf.TensorSpec([], tf.int32)])
    return lambda values, power: compiled(values, power)


def power_baked_in(function):
    return tf.function(lambda values, power: function(values, 2),
                       input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)])


def ignores_its_function(function):
    return tf.function(lambda values, power: tf.reduce_sum(values ** tf.cast(power, tf.float32)),
                       input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)])


def forgets_to_return(function):
    tf.function(function, input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)])


def unknown_rank_and_int64(function):
    """Another correct answer: any shape at all, and an int64 power."""
    return tf.function(function, input_signature=(tf.TensorSpec(None, tf.float32),
                                                  tf.TensorSpec(None, tf.int64)))


def decorator_style(function):
    """Another correct answer: tf.function used as a decorator factory, with keyword specs."""
    signature = [tf.TensorSpec(shape=[None], dtype=tf.float32, name="values"),
                 tf.TensorSpec(shape=[], dtype=tf.int32, name="power")]

    @tf.function(input_signature=signature)
    def compiled(values, power):
        return function(values, power)
    return compiled


def test_ex_1_2_reference_passes(strategy, outcome):
    answer = reference("ex_1_2", "compile_once", strategy)
    assert outcome(check.ex_1_2, answer) == ("correct", "")


@pytest.mark.parametrize("answer", [unknown_rank_and_int64, decorator_style])
def test_ex_1_2_other_correct_answers_pass(outcome, answer):
    assert outcome(check.ex_1_2, answer)[0] == "correct"


@pytest.mark.parametrize("answer, kind, message", [
    (plain_tf_function, "incorrect", "the compiled sum_of_powers traced 6 times for 6 calls"),
    (reduce_retracing_only, "incorrect", "the compiled sum_of_powers traced 5 times for 6 calls"),
    (fixed_length_signature, "raised", "when called with a float32 tensor of length 5 and power=3"),
    (no_tf_function, "incorrect", "returned a function, which is not a tf.function"),
    (wrapper_around_a_tf_function, "incorrect", "not a wrapper around it"),
    (power_baked_in, "incorrect", "with a float32 tensor of length 5 and power=3, the compiled sum_of_powers returned"),
    (ignores_its_function, "incorrect", "the compiled largest_times_power returned"),
    (forgets_to_return, "incorrect", "compile_once returned None"),
])
def test_ex_1_2_wrong_answers_get_a_specific_message(outcome, answer, kind, message):
    got_kind, got_message = outcome(check.ex_1_2, answer)
    assert got_kind == kind and message in got_message, got_message


def test_ex_1_2_untouched_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "compile_once", strategy)
    assert outcome(check.ex_1_2, stub)[0] == "not-attempted"


# ---- ex_1_3: predicted_traces --------------------------------------------------------------

def reference_predictions():
    return reference("ex_1_3", "predicted_traces", strategy=None)


def with_changes(**changes):
    return {**reference_predictions(), **changes}


def test_ex_1_3_reference_passes(outcome):
    assert outcome(check.ex_1_3, reference_predictions()) == ("correct", "")


def test_ex_1_3_reference_matches_what_really_happens():
    assert reference_predictions() == {name: actual_traces(name) for name in SEQUENCES}


@pytest.mark.parametrize("answer", [
    {name: np.int64(count) for name, count in {"A": 3, "B": 1, "C": 3, "D": 2, "E": 2}.items()},
    {"E": 2.0, "D": 2, "C": 3, "B": 1, "A": 3},
])
def test_ex_1_3_other_correct_answers_pass(outcome, answer):
    assert outcome(check.ex_1_3, answer)[0] == "correct"


@pytest.mark.parametrize("answer, message", [
    (with_changes(A=1), "your prediction for sequence A (1) is off: look at which argument is a Python number"),
    (with_changes(A=4), "your prediction for sequence A (4) is off"),
    (with_changes(B=4), "your prediction for sequence B (4) is off"),
    (with_changes(C=4), "your prediction for sequence C (4) is off"),
    (with_changes(D=1), "your prediction for sequence D (1) is off: think about which shapes the second trace accepts"),
    (with_changes(E=3), "your prediction for sequence E (3) is off"),
    ({"A": 3, "B": 1, "C": 3, "D": 2}, "no prediction for sequence 'E' yet"),
    (with_changes(F=1), "there is no sequence 'F'"),
    (with_changes(C=2.5), "predict a whole number of traces"),
    ([3, 1, 3, 2, 2], "expected a dict of predictions"),
])
def test_ex_1_3_wrong_answers_get_a_specific_message(outcome, answer, message):
    kind, got_message = outcome(check.ex_1_3, answer)
    assert kind == "incorrect" and message in got_message, got_message


def test_ex_1_3_message_does_not_reveal_the_answer(outcome):
    _, message = outcome(check.ex_1_3, with_changes(A=1))
    assert str(actual_traces("A")) not in message


def test_ex_1_3_untouched_stub_is_not_attempted(strategy, outcome):
    predicted_traces = student_stub(NOTEBOOK, "predicted_traces", strategy)
    assert predicted_traces is ...
    assert outcome(check.ex_1_3, predicted_traces)[0] == "not-attempted"
