"""Exercise 0.1: the reference passes, plausible wrong answers are caught, others pass too."""
import pytest
import tensorflow as tf

from conftest import reference, student_stub
from tpu_course import check

NOTEBOOK = "00_start_here/00_start_here.ipynb"


def replica_square():
    number = tf.distribute.get_replica_context().replica_id_in_sync_group
    return tf.cast(number + 1, tf.float32) ** 2


def mean_instead_of_sum(strategy):
    return float(strategy.reduce("MEAN", strategy.run(replica_square), axis=None))


def not_reduced(strategy):
    return strategy.run(replica_square)


def counts_from_zero(strategy):
    values = strategy.run(lambda: tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32) ** 2)
    return float(strategy.reduce("SUM", values, axis=None))


def worked_out_in_python(strategy):
    return float(sum((n + 1) ** 2 for n in range(strategy.num_replicas_in_sync)))


def first_replica_only(strategy):
    return float(strategy.experimental_local_results(strategy.run(replica_square))[0])


def returns_a_vector(strategy):
    return tf.stack(strategy.experimental_local_results(strategy.run(replica_square)))


def crashes(strategy):
    return strategy.reduce("MAX", strategy.run(replica_square), axis=None)


def alternative_all_reduce(strategy):
    """Another correct answer: all-reduce inside the replicas, then read replica 0's copy."""
    def summed():
        return tf.distribute.get_replica_context().all_reduce("SUM", replica_square())
    return float(strategy.experimental_local_results(tf.function(lambda: strategy.run(summed))())[0])


def alternative_tensor_result(strategy):
    """Another correct answer: a scalar tensor instead of a float, ReduceOp instead of a string."""
    return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(replica_square), axis=None)


def test_reference_passes(strategy, outcome):
    assert outcome(check.ex_0_1, reference("ex_0_1", "sum_of_squares", strategy)) == ("correct", "")


@pytest.mark.parametrize("answer", [alternative_all_reduce, alternative_tensor_result])
def test_other_correct_answers_pass(strategy, outcome, answer):
    assert outcome(check.ex_0_1, answer)[0] == "correct"


@pytest.mark.parametrize("answer, kind, message", [
    (mean_instead_of_sum, "incorrect", "with 8 replica(s): expected 204, got 25.5"),
    (not_reduced, "incorrect", "returned per-replica values"),
    (counts_from_zero, "incorrect", "with 8 replica(s): expected 204, got 140"),
    (worked_out_in_python, "incorrect", "worked out in Python, not on the replicas"),
    (first_replica_only, "incorrect", "with 8 replica(s): expected 204, got 1"),
    (returns_a_vector, "incorrect", "returned a value of shape (8,), not one number"),
    (crashes, "raised", "when called with a strategy of 8 replica(s)"),
])
def test_wrong_answers_get_a_specific_message(strategy, outcome, answer, kind, message):
    got_kind, got_message = outcome(check.ex_0_1, answer)
    assert got_kind == kind and message in got_message


def test_untouched_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "sum_of_squares", strategy)
    assert outcome(check.ex_0_1, stub)[0] == "not-attempted"
