"""Exercises 2.4 and 2.6: references pass, plausible wrong answers are caught, others pass too."""
import pytest
import tensorflow as tf

from conftest import reference, student_stub
from tpu_course import check

NOTEBOOK = "02_compile/03_custom_training_loop.ipynb"


# ---- ex_2_4: the distributed train step --------------------------------------------------------

def train_step_maker(scale_loss, apply=True, reduce_op="SUM", wrap=tf.function, use_run=True):
    """make_train_step variants: scale_loss(per_example, global_batch) is the per-replica loss."""
    def make_train_step(strategy, model, optimizer, loss_fn, global_batch_size):
        def replica_step(features, labels):
            with tf.GradientTape() as tape:
                loss = scale_loss(loss_fn(labels, model(features, training=True)), global_batch_size)
            gradients = tape.gradient(loss, model.trainable_variables)
            if apply:
                optimizer.apply_gradients(zip(gradients, model.trainable_variables))
            return loss

        def train_step(batch):
            features, labels = batch
            if not use_run:  # the whole global batch on one device, in cross-replica context
                features = tf.concat(strategy.experimental_local_results(features), axis=0)
                labels = tf.concat(strategy.experimental_local_results(labels), axis=0)
                return replica_step(features, labels) * 1.0
            return strategy.reduce(reduce_op, strategy.run(replica_step, args=(features, labels)), axis=None)

        return wrap(train_step)
    return make_train_step


def by_global_batch(per_example, global_batch_size):
    return tf.nn.compute_average_loss(per_example, global_batch_size=global_batch_size)


def by_own_batch(per_example, global_batch_size):
    return tf.reduce_mean(per_example)


def sum_over_global_batch(per_example, global_batch_size):
    """Another correct answer: the same division, written out."""
    return tf.reduce_sum(per_example) / global_batch_size


def inferred_global_batch(per_example, global_batch_size):
    """Another correct answer: compute_average_loss infers per-replica batch x replicas."""
    return tf.nn.compute_average_loss(per_example)


def returns_per_replica(strategy, model, optimizer, loss_fn, global_batch_size):
    @tf.function
    def train_step(batch):
        def replica_step(features, labels):
            with tf.GradientTape() as tape:
                loss = by_global_batch(loss_fn(labels, model(features, training=True)), global_batch_size)
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            return loss
        return strategy.run(replica_step, args=batch)
    return train_step


def test_train_step_reference_passes(strategy, outcome):
    assert outcome(check.ex_2_4, reference("ex_2_4", "make_train_step", strategy)) == ("correct", "")


@pytest.mark.parametrize("answer", [train_step_maker(sum_over_global_batch), train_step_maker(inferred_global_batch)])
def test_train_step_other_correct_answers_pass(strategy, outcome, answer):
    assert outcome(check.ex_2_4, answer) == ("correct", "")


@pytest.mark.parametrize("answer, kind, message", [
    (train_step_maker(by_own_batch), "incorrect", "the loss of step 1 with 8 replica(s): expected 1.5011, got 12.009"),
    (train_step_maker(by_own_batch), "incorrect", "(8× too large)"),
    (train_step_maker(by_global_batch, reduce_op="MEAN"), "incorrect", "(1/8 of it)"),
    (train_step_maker(by_global_batch, apply=False), "incorrect", "the weights did not change after a step"),
    (train_step_maker(by_global_batch, use_run=False), "incorrect", "strategy.run was never called"),
    (train_step_maker(by_global_batch, wrap=lambda f: f), "incorrect", "a plain Python function, not a tf.function"),
    (returns_per_replica, "incorrect", "returned per-replica values"),
])
def test_train_step_wrong_answers_get_a_specific_message(strategy, outcome, answer, kind, message):
    got_kind, got_message = outcome(check.ex_2_4, answer)
    assert got_kind == kind and message in got_message, got_message


def test_train_step_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "make_train_step", strategy)
    assert outcome(check.ex_2_4, stub)[0] == "not-attempted"


# ---- ex_2_5: many steps per call --------------------------------------------------------------

def multi_step_python_range(train_step):
    """Another correct answer: AutoGraph turns range over a tensor into a graph loop."""
    @tf.function
    def multi_step(iterator, steps):
        loss = 0.0
        for _ in range(steps):
            loss = train_step(next(iterator))
        return loss
    return multi_step


def multi_step_while_loop(train_step):
    """Another correct answer: tf.while_loop written out."""
    @tf.function
    def multi_step(iterator, steps):
        def body(step, loss):
            return step + 1, train_step(next(iterator))
        return tf.while_loop(lambda step, loss: step < steps, body, (tf.constant(0), tf.constant(0.0)))[1]
    return multi_step


def loop_in_python(train_step):
    def multi_step(iterator, steps):
        for _ in range(int(steps)):
            loss = train_step(next(iterator))
            print(float(loss))
        return loss
    return multi_step


def steps_as_python_int(train_step):
    @tf.function
    def unrolled(iterator, steps):
        for _ in range(steps):
            loss = train_step(next(iterator))
        return loss
    return lambda iterator, steps: unrolled(iterator, int(steps))


def only_one_step(train_step):
    @tf.function
    def multi_step(iterator, steps):
        return train_step(next(iterator))
    return multi_step


def new_function_per_call(train_step):
    def multi_step(iterator, steps):
        @tf.function
        def loop(iterator, steps):
            loss = tf.constant(0.0)
            for _ in tf.range(steps):
                loss = train_step(next(iterator))
            return loss
        return loop(iterator, steps)
    return multi_step


def returns_first_loss(train_step):
    @tf.function
    def multi_step(iterator, steps):
        first = train_step(next(iterator))
        for _ in tf.range(steps - 1):
            train_step(next(iterator))
        return first
    return multi_step


def steps_numpy_in_graph(train_step):
    @tf.function
    def multi_step(iterator, steps):
        loss = tf.constant(0.0)
        for _ in range(steps.numpy()):
            loss = train_step(next(iterator))
        return loss
    return multi_step


def test_multi_step_reference_passes(strategy, outcome):
    assert outcome(check.ex_2_5, reference("ex_2_5", "make_multi_step", strategy)) == ("correct", "")


@pytest.mark.parametrize("answer", [multi_step_python_range, multi_step_while_loop])
def test_multi_step_other_correct_answers_pass(strategy, outcome, answer):
    assert outcome(check.ex_2_5, answer) == ("correct", "")


@pytest.mark.parametrize("answer, kind, message", [
    (loop_in_python, "incorrect", "with steps=3, train_step was called 3 times in one call"),
    (steps_as_python_int, "incorrect", "with steps=3, train_step was called 3 times in one call"),
    (only_one_step, "incorrect", "with steps=3, 1 step(s) ran, expected 3"),
    (new_function_per_call, "incorrect", "with steps=1, after an earlier call, train_step was traced again"),
    (returns_first_loss, "incorrect", "with steps=3, it returned 36, expected 164"),
    (steps_numpy_in_graph, "raised", "when called with an iterator and steps=tf.constant(3)"),
])
def test_multi_step_wrong_answers_get_a_specific_message(strategy, outcome, answer, kind, message):
    got_kind, got_message = outcome(check.ex_2_5, answer)
    assert got_kind == kind and message in got_message, got_message


def test_multi_step_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "make_multi_step", strategy)
    assert outcome(check.ex_2_5, stub)[0] == "not-attempted"
