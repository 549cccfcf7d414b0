"""Exercises 2.6 and 2.8: the references pass, plausible wrong answers are caught, others pass too."""
import numpy as np
import pytest
import tensorflow as tf

from conftest import reference, student_stub
from tpu_course import check

NOTEBOOK = "02_compile/04_sharding_data.ipynb"


# ---- ex_2_6: per_replica_batch_size ------------------------------------------------------------

def floor_without_check(global_batch, num_replicas):
    return global_batch // num_replicas


def rounds_up(global_batch, num_replicas):
    if global_batch <= 0 or num_replicas <= 0:
        raise ValueError("positive numbers only")
    return -(-global_batch // num_replicas)


def asserts_instead(global_batch, num_replicas):
    assert global_batch > 0 and num_replicas > 0 and global_batch % num_replicas == 0
    return global_batch // num_replicas


def returns_a_float(global_batch, num_replicas):
    if global_batch <= 0 or num_replicas <= 0 or global_batch % num_replicas:
        raise ValueError(f"{global_batch} does not split over {num_replicas}")
    return global_batch / num_replicas


def divides_by_zero(global_batch, num_replicas):
    if global_batch % num_replicas:
        raise ValueError(f"{global_batch} does not split over {num_replicas}")
    return global_batch // num_replicas


def accepts_negative_batches(global_batch, num_replicas):
    if num_replicas <= 0 or global_batch % num_replicas:
        raise ValueError(f"{global_batch} does not split over {num_replicas}")
    return global_batch // num_replicas


def silent_value_error(global_batch, num_replicas):
    if global_batch <= 0 or num_replicas <= 0 or global_batch % num_replicas:
        raise ValueError()
    return global_batch // num_replicas


def through_input_context(global_batch, num_replicas):
    """Another correct answer: TensorFlow's own check, with the positivity checks added."""
    if global_batch <= 0 or num_replicas <= 0:
        raise ValueError(f"need positive numbers, got {global_batch} and {num_replicas}")
    context = tf.distribute.InputContext(num_replicas_in_sync=num_replicas)
    return context.get_per_replica_batch_size(global_batch)


def with_divmod_and_numpy(global_batch, num_replicas):
    """Another correct answer: divmod, returning a NumPy integer."""
    if min(global_batch, num_replicas) < 1:
        raise ValueError("global batch and replica count must be at least 1")
    share, left_over = divmod(global_batch, num_replicas)
    if left_over:
        raise ValueError(f"{left_over} examples would be left over")
    return np.int64(share)


def test_ex_2_6_reference_passes(strategy, outcome):
    answer = reference("ex_2_6", "per_replica_batch_size", strategy)
    assert outcome(check.ex_2_6, answer) == ("correct", "")


@pytest.mark.parametrize("answer", [through_input_context, with_divmod_and_numpy])
def test_ex_2_6_other_correct_answers_pass(strategy, outcome, answer):
    assert outcome(check.ex_2_6, answer) == ("correct", "")


@pytest.mark.parametrize("answer, message", [
    (floor_without_check, "per_replica_batch_size(10, 8) returned 1, but 10 examples do not split "
                          "evenly over 8 replicas: it should raise ValueError"),
    (rounds_up, "per_replica_batch_size(10, 8) returned 2"),
    (asserts_instead, "per_replica_batch_size(10, 8) raised AssertionError, not ValueError"),
    (returns_a_float, "per_replica_batch_size(16, 8) returned 2.0, a float"),
    (divides_by_zero, "per_replica_batch_size(16, 0) raised ZeroDivisionError, not ValueError"),
    (accepts_negative_batches, "per_replica_batch_size(-16, 8) returned -2, but a batch of -16"),
    (silent_value_error, "raised ValueError with no message"),
])
def test_ex_2_6_wrong_answers_get_a_specific_message(strategy, outcome, answer, message):
    kind, got = outcome(check.ex_2_6, answer)
    assert kind == "incorrect" and message in got, got


def test_ex_2_6_untouched_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "per_replica_batch_size", strategy)
    assert outcome(check.ex_2_6, stub)[0] == "not-attempted"


# ---- ex_2_7: make_input_fn ---------------------------------------------------------------------

def _pairs(features, labels):
    return tf.data.Dataset.from_tensor_slices((features, labels))


def no_shard(features, labels, global_batch):
    def input_fn(context):
        return _pairs(features, labels).batch(context.get_per_replica_batch_size(global_batch),
                                              drop_remainder=True)
    return input_fn


def shard_by_replica_count(features, labels, global_batch):
    def input_fn(context):
        return (_pairs(features, labels)
                .shard(context.num_replicas_in_sync, context.input_pipeline_id)
                .batch(context.get_per_replica_batch_size(global_batch), drop_remainder=True))
    return input_fn


def batch_by_global_batch(features, labels, global_batch):
    def input_fn(context):
        return (_pairs(features, labels)
                .shard(context.num_input_pipelines, context.input_pipeline_id)
                .batch(global_batch, drop_remainder=True))
    return input_fn


def shard_after_batch(features, labels, global_batch):
    def input_fn(context):
        return (_pairs(features, labels)
                .batch(context.get_per_replica_batch_size(global_batch), drop_remainder=True)
                .shard(context.num_input_pipelines, context.input_pipeline_id))
    return input_fn


def shuffle_before_shard(features, labels, global_batch):
    def input_fn(context):
        return (_pairs(features, labels).shuffle(len(labels))
                .shard(context.num_input_pipelines, context.input_pipeline_id)
                .batch(context.get_per_replica_batch_size(global_batch), drop_remainder=True))
    return input_fn


def keeps_the_remainder(features, labels, global_batch):
    def input_fn(context):
        return (_pairs(features, labels)
                .shard(context.num_input_pipelines, context.input_pipeline_id)
                .batch(context.get_per_replica_batch_size(global_batch)))
    return input_fn


def shuffles_labels_apart(features, labels, global_batch):
    def input_fn(context):
        shard = (context.num_input_pipelines, context.input_pipeline_id)
        features_only = tf.data.Dataset.from_tensor_slices(features).shard(*shard).shuffle(64)
        labels_only = tf.data.Dataset.from_tensor_slices(labels).shard(*shard)
        return (tf.data.Dataset.zip((features_only, labels_only))
                .batch(context.get_per_replica_batch_size(global_batch), drop_remainder=True))
    return input_fn


def by_filter_no_shuffle(features, labels, global_batch):
    """Another correct answer: keep every n-th example by its position, no shuffle."""
    def input_fn(context):
        mine = (_pairs(features, labels).enumerate()
                .filter(lambda position, _: position % context.num_input_pipelines
                        == context.input_pipeline_id)
                .map(lambda _, pair: pair))
        return mine.batch(context.get_per_replica_batch_size(global_batch), drop_remainder=True)
    return input_fn


def zip_of_shards(features, labels, global_batch):
    """Another correct answer: shard features and labels alike, zip, shuffle, batch."""
    def input_fn(context):
        shard = (context.num_input_pipelines, context.input_pipeline_id)
        pairs = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(features).shard(*shard),
                                     tf.data.Dataset.from_tensor_slices(labels).shard(*shard)))
        batch = context.get_per_replica_batch_size(global_batch)
        return pairs.shuffle(100, reshuffle_each_iteration=True).batch(batch, drop_remainder=True)
    return input_fn


def test_ex_2_7_reference_passes(strategy, outcome):
    answer = reference("ex_2_7", "make_input_fn", strategy)
    assert outcome(check.ex_2_7, answer) == ("correct", "")


@pytest.mark.parametrize("answer", [by_filter_no_shuffle, zip_of_shards])
def test_ex_2_7_other_correct_answers_pass(strategy, outcome, answer):
    assert outcome(check.ex_2_7, answer) == ("correct", "")


@pytest.mark.parametrize("answer, message", [
    (no_shard, "input pipelines 0 and 1 of 2 both got example 0"),
    (shard_by_replica_count, "the 2 input pipelines together got only 12 of the 42 examples"),
    (batch_by_global_batch, "batches have 16 examples (the global batch), but with a global batch "
                            "of 16 on 8 replicas each replica's batch should have 2"),
    (shard_after_batch, "input pipeline 0 of 2 got example 1, which sharding the examples gives "
                        "to pipeline 1"),
    (shuffle_before_shard, "both got example"),
    (keeps_the_remainder, "the batch dimension is None (not static)"),
    (shuffles_labels_apart, "a batch pairs features with the wrong labels"),
])
def test_ex_2_7_wrong_answers_get_a_specific_message(strategy, outcome, answer, message):
    kind, got = outcome(check.ex_2_7, answer)
    assert kind == "incorrect" and message in got, got


def test_ex_2_7_a_crashing_answer_says_where(strategy, outcome):
    def crashes(features, labels, global_batch):
        def input_fn(context):
            return (_pairs(features, labels)
                    .shard(context.num_input_pipelines, context.input_pipeline_id)
                    .map(lambda feature, label: (feature, label // (label - label)))
                    .batch(context.get_per_replica_batch_size(global_batch), drop_remainder=True))
        return input_fn
    kind, got = outcome(check.ex_2_7, crashes)
    assert kind == "raised" and "while reading its dataset" in got, got


def test_ex_2_7_untouched_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "make_input_fn", strategy)
    assert outcome(check.ex_2_7, stub)[0] == "not-attempted"
