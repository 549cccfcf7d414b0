"""Exercises 2.1 and 2.2: the references pass, plausible wrong answers are caught, others pass too."""
import numpy as np
import pytest
import tensorflow as tf

from conftest import reference, student_stub
from tpu_course import check

NOTEBOOK = "02_compile/01_xla_and_static_shapes.ipynb"


# ---- ex_2_1 -----------------------------------------------------------------------------------

def masked_mean(x):
    positive = x > 0
    total = tf.reduce_sum(tf.where(positive, x, 0.0), axis=-1)
    count = tf.reduce_sum(tf.cast(positive, tf.float32), axis=-1)
    return tf.math.divide_no_nan(total, count)


def numpy_rows(rows):
    return np.array([row[row > 0].mean() if (row > 0).any() else 0.0 for row in rows], np.float32)


def on_host(x):
    return tf.numpy_function(numpy_rows, [x], tf.float32)


def py_function_version(x):
    return tf.py_function(numpy_rows, [x], tf.float32)


def per_row_boolean_mask(x):
    means = []
    for row in tf.unstack(x):
        kept = tf.boolean_mask(row, row > 0)
        means.append(tf.math.divide_no_nan(tf.reduce_sum(kept), tf.cast(tf.size(kept), tf.float32)))
    return tf.stack(means)


def ragged_rows(x):
    kept = tf.ragged.boolean_mask(x, x > 0)
    return tf.math.divide_no_nan(tf.reduce_sum(kept, axis=1), tf.cast(kept.row_lengths(), tf.float32))


def divides_by_zero(x):
    positive = tf.cast(x > 0, tf.float32)
    return tf.reduce_sum(x * positive, axis=-1) / tf.reduce_sum(positive, axis=-1)


def zero_counts_as_positive(x):
    positive = x >= 0
    return tf.math.divide_no_nan(tf.reduce_sum(tf.where(positive, x, 0.0), axis=-1),
                                 tf.reduce_sum(tf.cast(positive, tf.float32), axis=-1))


def mean_over_all_columns(x):
    return tf.reduce_mean(tf.where(x > 0, x, 0.0), axis=-1)


def one_number_for_the_batch(x):
    kept = tf.boolean_mask(x, x > 0)
    return tf.reduce_mean(kept)


def returns_float64(x):
    return tf.cast(masked_mean(x), tf.float64)


def alternative_maximum(x):
    """Another correct answer: relu to zero the rest, and a count that is at least 1."""
    count = tf.math.count_nonzero(x > 0, axis=1, dtype=tf.float32)
    return tf.reduce_sum(tf.nn.relu(x), axis=1) / tf.maximum(count, 1.0)


def alternative_sign_weights(x):
    """Another correct answer: weights from the sign, and tf.where on the count."""
    weights = (tf.sign(x) + 1.0) * tf.sign(x) / 2.0  # 1 where x > 0, else 0
    count = tf.reduce_sum(weights, axis=-1)
    return tf.where(count > 0, tf.reduce_sum(weights * x, axis=-1) / tf.maximum(count, 1.0), 0.0)


def jit(function):
    return tf.function(function, jit_compile=True)


def test_ex_2_1_reference_passes(strategy, outcome):
    assert outcome(check.ex_2_1, reference("ex_2_1", "compiled_mean_of_positives", strategy)) == ("correct", "")


@pytest.mark.parametrize("answer", [jit(alternative_maximum), jit(alternative_sign_weights)])
def test_ex_2_1_other_correct_answers_pass(strategy, outcome, answer):
    assert outcome(check.ex_2_1, answer) == ("correct", "")


@pytest.mark.parametrize("answer, message", [
    (jit(on_host), "XLA cannot compile the op PyFunc"),
    (jit(py_function_version), "XLA cannot compile the op EagerPyFunc"),
    (tf.function(masked_mean), "it is a tf.function, but XLA does not compile it"),
    (masked_mean, "it is a plain Python function, so nothing was compiled"),
    (jit(per_row_boolean_mask), "the values are right, but the compiled program has a shape that depends on the data"),
    (jit(ragged_rows), "must be a compile-time constant"),
    (jit(divides_by_zero), "with a row with no positive value (shape (2, 3)): row 0 [-1.0, -2.0, -3.0]: expected 0, got nan"),
    (jit(zero_counts_as_positive), "with a mix of signs (shape (2, 4)): row 0 [1.0, -2.0, 3.0, 0.0]: expected 2, got 1.333"),
    (jit(mean_over_all_columns), "row 0 [1.0, -2.0, 3.0, 0.0]: expected 2, got 1"),
    (jit(one_number_for_the_batch), "expected one value per row, shape (2,), got shape ()"),
    (jit(returns_float64), "expected float32 values, got float64"),
])
def test_ex_2_1_wrong_answers_get_a_specific_message(strategy, outcome, answer, message):
    kind, got = outcome(check.ex_2_1, answer)
    assert kind == "incorrect" and message in got, got


def test_ex_2_1_untouched_stub_is_not_attempted(strategy, outcome):
    compiled = student_stub(NOTEBOOK, "compiled_mean_of_positives", strategy)
    assert compiled is ...
    assert outcome(check.ex_2_1, compiled)[0] == "not-attempted"
    # the learner compiled the stub but has not written its body yet
    stub = student_stub(NOTEBOOK, "mean_of_positives", strategy)
    assert outcome(check.ex_2_1, jit(stub))[0] == "not-attempted"


# ---- ex_2_2 -----------------------------------------------------------------------------------

def cut_and_pad(length):
    def fix(sequence):
        sequence = sequence[:length]
        return tf.ensure_shape(tf.pad(sequence, [[0, length - tf.shape(sequence)[0]]]), [length])
    return fix


def not_dropped(dataset, batch_size, length):
    return dataset.map(lambda s: s[:length]).padded_batch(batch_size, padded_shapes=[length])


def not_padded_to_length(dataset, batch_size, length):
    return dataset.map(lambda s: s[:length]).padded_batch(batch_size, drop_remainder=True)


def not_cut(dataset, batch_size, length):
    return dataset.padded_batch(batch_size, padded_shapes=[length], drop_remainder=True)


def short_batch_filtered_out(dataset, batch_size, length):
    batches = dataset.map(cut_and_pad(length)).batch(batch_size)
    return batches.filter(lambda batch: tf.shape(batch)[0] == batch_size)


def shuffled(dataset, batch_size, length):
    return dataset.shuffle(16, seed=1).map(cut_and_pad(length)).batch(batch_size, drop_remainder=True)


def keeps_the_last_values(dataset, batch_size, length):
    return dataset.map(lambda s: s[-length:]).padded_batch(batch_size, padded_shapes=[length], drop_remainder=True)


def pads_at_the_front(dataset, batch_size, length):
    def fix(sequence):
        sequence = sequence[:length]
        return tf.ensure_shape(tf.pad(sequence, [[length - tf.shape(sequence)[0], 0]]), [length])
    return dataset.map(fix).batch(batch_size, drop_remainder=True)


def as_a_list(dataset, batch_size, length):
    return list(dataset.map(cut_and_pad(length)).batch(batch_size, drop_remainder=True))


def alternative_map_then_batch(dataset, batch_size, length):
    """Another correct answer: cut and pad in map, with the static shape restored, then batch."""
    return dataset.map(cut_and_pad(length)).batch(batch_size, drop_remainder=True)


def alternative_ragged_to_tensor(dataset, batch_size, length):
    """Another correct answer: ragged batches, made dense at a fixed shape."""
    ragged = dataset.ragged_batch(batch_size, drop_remainder=True)
    return ragged.map(lambda batch: batch.to_tensor(shape=[batch_size, length]))


def test_ex_2_2_reference_passes(strategy, outcome):
    assert outcome(check.ex_2_2, reference("ex_2_2", "tpu_friendly", strategy)) == ("correct", "")


@pytest.mark.parametrize("answer", [alternative_map_then_batch, alternative_ragged_to_tensor])
def test_ex_2_2_other_correct_answers_pass(strategy, outcome, answer):
    assert outcome(check.ex_2_2, answer) == ("correct", "")


@pytest.mark.parametrize("answer, message", [
    (not_dropped, "element_spec has shape (None, 5): the batch dimension is None"),
    (short_batch_filtered_out, "the batch dimension is None"),
    (not_padded_to_length, "element_spec has shape (4, None): the sequence dimension is None"),
    (not_cut, "raised DataLossError: Attempted to pad to a smaller size than the input element. "
              "A sequence longer than `length` must be cut first"),
    (shuffled, "batch 0, row 1: expected [101, 0, 0, 0, 0], got"),
    (keeps_the_last_values, "batch 1, row 1: expected [501, 502, 503, 504, 505], got [505, 506, 507, 508, 509]"),
    (pads_at_the_front, "batch 0, row 0: expected [1, 2, 3, 0, 0], got [0, 0, 1, 2, 3]"),
    (as_a_list, "expected a tf.data.Dataset, got list"),
])
def test_ex_2_2_wrong_answers_get_a_specific_message(strategy, outcome, answer, message):
    kind, got = outcome(check.ex_2_2, answer)
    assert kind == "incorrect" and message in got, got


def test_ex_2_2_counts_batches(strategy, outcome):
    """A dataset with a batch too many (the short one, padded up) is caught by the count."""
    def short_batch_padded(dataset, batch_size, length):
        batches = dataset.map(cut_and_pad(length)).batch(batch_size)
        return batches.map(lambda b: tf.ensure_shape(
            tf.pad(b, [[0, batch_size - tf.shape(b)[0]], [0, 0]]), [batch_size, length]))
    kind, got = outcome(check.ex_2_2, short_batch_padded)
    assert kind == "incorrect" and "expected 2 batches, got 3" in got, got


def test_ex_2_2_untouched_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "tpu_friendly", strategy)
    assert outcome(check.ex_2_2, stub)[0] == "not-attempted"
