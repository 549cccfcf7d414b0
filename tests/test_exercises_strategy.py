"""Exercise 2.3: the reference passes, plausible wrong answers are caught, others pass too."""
import keras
import pytest

from conftest import reference, student_stub
from tpu_course import check

NOTEBOOK = "02_compile/02_tpu_strategy_and_keras.ipynb"


def digits_model():
    return keras.Sequential([keras.Input((64,)), keras.layers.Dense(16, activation="relu"),
                             keras.layers.Dense(10)])


def model_outside_scope(strategy):
    model = digits_model()
    optimizer = keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)
    with strategy.scope():
        metric = keras.metrics.SparseCategoricalAccuracy()
    return model, optimizer, metric


def model_outside_optimizer_built_inside(strategy):
    model = digits_model()
    with strategy.scope():
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
        metric = keras.metrics.SparseCategoricalAccuracy()
    return model, optimizer, metric


def optimizer_outside_scope(strategy):
    with strategy.scope():
        model = digits_model()
        metric = keras.metrics.SparseCategoricalAccuracy()
    optimizer = keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)
    return model, optimizer, metric


def optimizer_not_built(strategy):
    with strategy.scope():
        model = digits_model()
        optimizer = keras.optimizers.Adam()
        metric = keras.metrics.SparseCategoricalAccuracy()
    return model, optimizer, metric


def metric_outside_scope(strategy):
    with strategy.scope():
        model = digits_model()
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
    return model, optimizer, keras.metrics.SparseCategoricalAccuracy()


def model_without_input_shape(strategy):
    with strategy.scope():
        model = keras.Sequential([keras.layers.Dense(10)])
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
        metric = keras.metrics.SparseCategoricalAccuracy()
    return model, optimizer, metric


def only_model_and_optimizer(strategy):
    with strategy.scope():
        model = digits_model()
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
    return model, optimizer


def wrong_number_of_classes(strategy):
    with strategy.scope():
        model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(8)])
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
        metric = keras.metrics.SparseCategoricalAccuracy()
    return model, optimizer, metric


def uses_the_global_strategy(strategy):
    from tpu_course.hardware import connect_quietly
    with connect_quietly().scope():  # the notebook's `strategy`, not the argument
        model = digits_model()
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
        metric = keras.metrics.SparseCategoricalAccuracy()
    return model, optimizer, metric


def alternative_functional_sgd(strategy):
    """Another correct answer: a functional model, SGD with momentum, built in the scope."""
    with strategy.scope():
        inputs = keras.Input((64,))
        outputs = keras.layers.Dense(10)(keras.layers.Dense(24, activation="tanh")(inputs))
        model = keras.Model(inputs, outputs)
        optimizer = keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
        optimizer.build(model.trainable_variables)
        metric = keras.metrics.SparseCategoricalAccuracy(name="acc")
    return (model, optimizer, metric)


def alternative_compiled(strategy):
    """Another correct answer: compile in the scope, then build the optimizer compile made."""
    with strategy.scope():
        model = digits_model()
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        model.optimizer.build(model.trainable_variables)
        metric = keras.metrics.SparseCategoricalAccuracy()
    return [model, model.optimizer, metric]


def reference_in_notebook_namespace(strategy):
    """The reference uses the notebook's `keras` and `digits_model`: give it those too."""
    answer = reference("ex_2_3", "build_for_strategy", strategy)
    answer.__globals__.update(keras=keras, digits_model=digits_model)
    return answer


def test_reference_passes(strategy, outcome):
    assert outcome(check.ex_2_3, reference_in_notebook_namespace(strategy)) == ("correct", "")


@pytest.mark.parametrize("answer", [alternative_functional_sgd, alternative_compiled])
def test_other_correct_answers_pass(strategy, outcome, answer):
    assert outcome(check.ex_2_3, answer) == ("correct", "")


@pytest.mark.parametrize("answer, kind, message", [
    (model_outside_scope, "incorrect",
     "with 8 replica(s), the model's variable 'sequential"),
    (model_outside_optimizer_built_inside, "raised",
     "colocate_vars_with` must only be passed a variable created in this tf.distribute.Strategy.scope()"),
    (optimizer_outside_scope, "incorrect",
     ("the optimizer's variable 'adam", "/iteration' was created outside strategy.scope()")),
    (optimizer_not_built, "incorrect", "the optimizer is not built"),
    (metric_outside_scope, "incorrect",
     ("the metric's variable 'sparse_categorical_accuracy", "/total' was created outside")),
    (model_without_input_shape, "incorrect", "the model has no variables yet"),
    (uses_the_global_strategy, "incorrect",
     ("with 1 replica(s), the model's variable", "in the scope of another strategy, not the one passed in")),
    (only_model_and_optimizer, "incorrect", "expected a tuple (model, optimizer, metric), got tuple"),
    (wrong_number_of_classes, "incorrect", "the model returned shape (2, 8), expected (2, 10)"),
])
def test_wrong_answers_get_a_specific_message(strategy, outcome, answer, kind, message):
    got_kind, got_message = outcome(check.ex_2_3, answer)
    parts = message if isinstance(message, tuple) else (message,)  # Keras numbers repeated names
    assert got_kind == kind and all(part in got_message for part in parts), got_message


def test_untouched_stub_is_not_attempted(strategy, outcome):
    stub = student_stub(NOTEBOOK, "build_for_strategy", strategy)
    assert outcome(check.ex_2_3, stub)[0] == "not-attempted"
