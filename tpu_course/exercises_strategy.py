"""Exercises of 02_compile/02_tpu_strategy_and_keras: what must be created inside strategy.scope()."""
from .checking import Exercise, Incorrect, call

FEATURES, CLASSES, GLOBAL_BATCH = 64, 10, 16


def _created_outside(strategy, variables):
    """Paths of the Keras variables that were not created inside strategy.scope()."""
    return [variable.path for variable in variables
            if not strategy.extended.variable_created_in_scope(variable.value)]


def _expect_in_scope(strategy, what, variables, fix):
    import tensorflow as tf
    outside = _created_outside(strategy, variables)
    elsewhere = [variable.path for variable in variables if variable.path in outside
                 and isinstance(variable.value, tf.distribute.DistributedValues)]
    if elsewhere:
        raise Incorrect(f"with {strategy.num_replicas_in_sync} replica(s), {what} variable "
                        f"'{elsewhere[0]}' was created in the scope of another strategy, not the "
                        "one passed in: use the function's `strategy` argument")
    if outside:
        raise Incorrect(f"with {strategy.num_replicas_in_sync} replica(s), {what} variable "
                        f"'{outside[0]}' was created outside strategy.scope(), so it is not "
                        f"mirrored on the replicas: {fix}")


def _one_training_step(strategy, model, optimizer, metric):
    """Run one replicated training step on a fixed batch; the first error's key phrase, or None."""
    import keras
    import tensorflow as tf
    x = tf.random.stateless_uniform([GLOBAL_BATCH, FEATURES], seed=[2, 3])
    y = tf.range(GLOBAL_BATCH, dtype=tf.int32) % CLASSES
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
    batch = next(iter(strategy.experimental_distribute_dataset(dataset)))
    per_example_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = tf.nn.compute_average_loss(per_example_loss(y, logits), global_batch_size=GLOBAL_BATCH)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        metric.update_state(y, logits)
        return loss

    @tf.function
    def train(batch):
        return strategy.reduce("SUM", strategy.run(step, args=batch), axis=None)

    try:
        return float(train(batch))
    except Exception as error:  # the learner's objects made the step fail: say how, briefly
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        key = next((line for line in lines if "Error" in line or "must" in line), lines[-1] if lines else "")
        raise Incorrect(f"one training step under strategy.run failed: {type(error).__name__}: "
                        f"{key[:160]}") from None


def _check_build_for_strategy(answer):
    import keras
    import tensorflow as tf
    from .hardware import connect_quietly
    for strategy in (connect_quietly(), tf.distribute.get_strategy()):
        replicas = strategy.num_replicas_in_sync
        got = call(answer, strategy, described_as=f"a strategy of {replicas} replica(s)")
        if not isinstance(got, (tuple, list)) or len(got) != 3:
            raise Incorrect(f"expected a tuple (model, optimizer, metric), got "
                            f"{type(got).__name__} {got!r:.60}")
        model, optimizer, metric = got
        for what, value, kind in (("model", model, keras.Model),
                                  ("optimizer", optimizer, keras.optimizers.Optimizer),
                                  ("metric", metric, keras.metrics.Metric)):
            if not isinstance(value, kind):
                raise Incorrect(f"the {what} (item {['model', 'optimizer', 'metric'].index(what)} "
                                f"of the tuple) should be a {kind.__module__.split('.')[0]}."
                                f"{kind.__name__}, got {type(value).__name__}")
        if not model.variables:
            raise Incorrect("the model has no variables yet, so they would be created later, "
                            "outside the scope: give it its input shape (keras.Input) so its "
                            "weights are created when you build it")
        _expect_in_scope(strategy, "the model's", model.variables,
                         "create the model inside `with strategy.scope():`")
        _expect_in_scope(strategy, "the optimizer's", optimizer.variables,
                         "create the optimizer inside the scope too")
        if not optimizer.built:
            raise Incorrect("the optimizer is not built: its slot variables would be created "
                            "lazily, inside the first compiled step; build it for the model's "
                            "trainable variables inside the scope")
        _expect_in_scope(strategy, "the metric's", metric.variables,
                         "create the metric inside the scope too")
        try:
            logits = model(tf.zeros([2, FEATURES]))
        except Exception as error:  # the learner's model
            raise Incorrect(f"the model raised {type(error).__name__} on a batch of shape "
                            f"(2, {FEATURES}): {str(error).splitlines()[0][:120] if str(error) else ''}") from None
        if tuple(logits.shape) != (2, CLASSES):
            raise Incorrect(f"on a batch of shape (2, {FEATURES}) the model returned shape "
                            f"{tuple(logits.shape)}, expected (2, {CLASSES})")
        before = [tf.identity(v.value) for v in model.trainable_variables]
        loss = _one_training_step(strategy, model, optimizer, metric)
        if not loss == loss:  # NaN
            raise Incorrect(f"with {replicas} replica(s), one training step gave a NaN loss")
        steps = int(optimizer.iterations.numpy())
        if steps != 1:
            raise Incorrect(f"with {replicas} replica(s), after one training step the optimizer "
                            f"counted {steps} steps, expected 1")
        if all(bool(tf.reduce_all(b == v.value)) for b, v in zip(before, model.trainable_variables)):
            raise Incorrect(f"with {replicas} replica(s), one training step left every weight "
                            "unchanged: is the learning rate 0?")
        accuracy = float(metric.result())
        if not 0.0 <= accuracy <= 1.0:
            raise Incorrect(f"after one step the metric's result is {accuracy:g}, expected an "
                            "accuracy between 0 and 1")


ex_2_3 = Exercise(
    "ex_2_3", "create a model, its optimizer and a metric for a strategy", _check_build_for_strategy,
    hints=[
        "Everything that owns variables (the model, the optimizer, the metric) is created inside "
        "`with strategy.scope():`, so the strategy creates one mirrored copy per replica.",
        "Give the model its input shape, keras.Input((64,)), so its weights exist as soon as it "
        "is built, inside the scope.",
        "Keras optimizers create their slot variables (Adam's moments) lazily; call "
        "optimizer.build(model.trainable_variables) inside the scope, then return "
        "(model, optimizer, metric).",
    ])
