"""Exercises of 02_compile/03_custom_training_loop: a distributed train step, many steps per call."""
from .checking import Exercise, Incorrect, call


class _CountingStrategy:
    """Forwards to a real strategy and counts calls of run(), to see the work was replicated."""

    def __init__(self, strategy):
        self._strategy, self.runs = strategy, 0

    def run(self, *args, **kwargs):
        self.runs += 1
        return self._strategy.run(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._strategy, name)


def _strategies():
    import tensorflow as tf
    from .hardware import connect_quietly
    course = connect_quietly()
    default = tf.distribute.get_strategy()
    return (course,) if course is default else (course, default)


def _is_tf_function(function):
    import tensorflow as tf
    return isinstance(function, tf.types.experimental.PolymorphicFunction)


def _close(a, b, tolerance=1e-4):
    return abs(a - b) <= tolerance * max(1.0, abs(b))


# ---- ex_2_4: the distributed train step --------------------------------------------------------

FEATURES, CLASSES, HIDDEN = 4, 3, 5


def _initial_weights():
    import numpy as np
    rng = np.random.default_rng(25)
    return [rng.normal(size=(FEATURES, HIDDEN)).astype("float32"), rng.normal(size=HIDDEN).astype("float32") * 0.1,
            rng.normal(size=(HIDDEN, CLASSES)).astype("float32"), np.zeros(CLASSES, "float32")]


def _tiny_model(tf):
    model = tf.keras.Sequential([tf.keras.Input((FEATURES,)), tf.keras.layers.Dense(HIDDEN, activation="tanh"),
                                 tf.keras.layers.Dense(CLASSES)])
    model.set_weights(_initial_weights())
    return model


def _expected_steps(tf, batches, loss_fn, learning_rate):
    """Losses and weights of plain SGD on the whole global batch, on one device: the meaning of a
    correct distributed step (each replica's gradient of sum/global batch, summed)."""
    model = _tiny_model(tf)
    losses, weights = [], []
    for features, labels in batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(loss_fn(labels, model(features, training=True)))
        gradients = tape.gradient(loss, model.trainable_variables)
        for variable, gradient in zip(model.trainable_variables, gradients):
            variable.assign_sub(learning_rate * gradient)
        losses.append(float(loss))
        weights.append(model.get_weights())
    return losses, weights


def _check_train_step(answer):
    import numpy as np
    import tensorflow as tf
    learning_rate = 0.5
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
    for strategy in _strategies():
        replicas = strategy.num_replicas_in_sync
        where = f"with {replicas} replica(s)"
        global_batch = 4 * replicas
        rng = np.random.default_rng(5)
        features = rng.normal(size=(2 * global_batch, FEATURES)).astype("float32")
        labels = rng.integers(0, CLASSES, size=2 * global_batch).astype("int32")
        batches = [(features[i:i + global_batch], labels[i:i + global_batch]) for i in (0, global_batch)]
        expected_losses, expected_weights = _expected_steps(tf, batches, loss_fn, learning_rate)

        with strategy.scope():
            model = _tiny_model(tf)
            optimizer = tf.keras.optimizers.SGD(learning_rate)
            optimizer.build(model.trainable_variables)
        def distributed(batch):
            # What a distributed dataset yields: each replica its share of the global batch
            # (built directly, which is much faster than setting up a distributed iterator).
            share = global_batch // replicas

            def replica_share(context):
                first = context.replica_id_in_sync_group * share
                return tuple(tf.constant(part[first:first + share]) for part in batch)
            return strategy.experimental_distribute_values_from_function(replica_share)
        spy = _CountingStrategy(strategy)
        train_step = call(answer, spy, model, optimizer, loss_fn, global_batch,
                          described_as=f"a strategy of {replicas} replica(s), a model, an optimizer, "
                                       f"a loss function and global_batch_size={global_batch}")
        if not callable(train_step):
            raise Incorrect(f"make_train_step returned {type(train_step).__name__}, not a function: "
                            "return the train step itself")
        if not _is_tf_function(train_step):
            raise Incorrect("make_train_step returned a plain Python function, not a tf.function: on a "
                            "TPU, strategy.run belongs inside a tf.function, so the step is compiled once")
        initial = model.get_weights()
        for step, (expected_loss, weights) in enumerate(zip(expected_losses, expected_weights), start=1):
            got = call(train_step, distributed(batches[step - 1]), described_as=f"a distributed batch ({where})")
            if spy.runs == 0:
                raise Incorrect("strategy.run was never called: the step did not run on every replica; "
                                "run the per-replica work with strategy.run(...)")
            if isinstance(got, tf.distribute.DistributedValues):
                raise Incorrect("the step returned per-replica values (one loss per replica); combine them "
                                "into one number with strategy.reduce(...)")
            try:
                got_loss = float(got)
            except (TypeError, ValueError):
                raise Incorrect(f"the step returned {type(got).__name__} {got!r:.80}, not one loss value") from None
            if not _close(got_loss, expected_loss):
                ratio = got_loss / expected_loss
                note = (f" ({replicas}× too large)" if replicas > 1 and _close(ratio, replicas) else
                        f" (1/{replicas} of it)" if replicas > 1 and _close(ratio, 1 / replicas) else "")
                raise Incorrect(f"the loss of step {step} {where}: expected {expected_loss:.5g}, "
                                f"got {got_loss:.5g}{note}")
            got_weights = model.get_weights()
            if step == 1 and all(np.array_equal(a, b) for a, b in zip(got_weights, initial)):
                raise Incorrect("the loss is right, but the weights did not change after a step: apply the "
                                "gradients with the optimizer")
            for got_array, expected_array in zip(got_weights, weights):
                if not np.allclose(got_array, expected_array, rtol=1e-4, atol=1e-5):
                    difference = float(np.max(np.abs(got_array - expected_array)))
                    raise Incorrect(f"the weights after step {step} {where} differ from the expected ones "
                                    f"by up to {difference:.3g}")


ex_2_4 = Exercise(
    "ex_2_4", "a distributed train step", _check_train_step,
    hints=[
        "Inside make_train_step, define a per-replica function (features, labels) -> loss, and a "
        "tf.function that takes the distributed batch and calls strategy.run(that function, args=(...)).",
        "Per replica: run the model under tf.GradientTape, get per-example losses with loss_fn(labels, "
        "logits), and divide their sum by the GLOBAL batch: tf.nn.compute_average_loss(per_example, "
        "global_batch_size=global_batch_size).",
        "Then tape.gradient(...) and optimizer.apply_gradients(zip(gradients, model.trainable_variables)); "
        "return the loss, and outside strategy.run combine the replicas' losses with "
        "strategy.reduce('SUM', per_replica_loss, axis=None).",
    ])


# ---- ex_2_5: many steps per call --------------------------------------------------------------

def _check_multi_step(answer):
    import tensorflow as tf
    for strategy in _strategies():
        replicas = strategy.num_replicas_in_sync
        with strategy.scope():
            steps_run = tf.Variable(0, trainable=False)
        # Global batch k (from 1) holds (k-1)*replicas+1 ... k*replicas; its "loss" is their sum.
        numbers = tf.data.Dataset.range(1, 10_000).map(lambda n: tf.cast(n, tf.float32))
        iterator = iter(strategy.experimental_distribute_dataset(numbers.batch(replicas, drop_remainder=True)))

        @tf.function
        def compiled_step(batch):
            steps_run.assign_add(1)
            return strategy.reduce("SUM", strategy.run(tf.reduce_sum, args=(batch,)), axis=None)

        traced = []

        def train_step(batch):  # called from Python once per trace of a tf.range loop's body
            traced.append(1)
            return compiled_step(batch)

        multi_step = call(answer, train_step, described_as="a train step")
        if not callable(multi_step):
            raise Incorrect(f"make_multi_step returned {type(multi_step).__name__}, not a function: "
                            "return the multi-step function itself")
        done = 0
        for steps in (3, 1, 4):
            before = len(traced)
            got = call(multi_step, iterator, tf.constant(steps),
                       described_as=f"an iterator and steps=tf.constant({steps})")
            calls = len(traced) - before
            if steps > 1 and calls == steps:
                raise Incorrect(f"with steps={steps}, train_step was called {calls} times in one call: a "
                                "Python loop (run eagerly, or unrolled while tracing) makes one call per "
                                "step; loop with tf.range inside a tf.function so the step is traced once")
            if done and calls:
                raise Incorrect(f"with steps={steps}, after an earlier call, train_step was traced again: "
                                "expected one trace for every step count; keep one tf.function, with the "
                                "step count a tensor")
            ran = int(steps_run.numpy()) - done
            done += ran
            if ran != steps:
                raise Incorrect(f"with steps={steps}, {ran} step(s) ran, expected {steps}")
            if isinstance(got, tf.distribute.DistributedValues):
                raise Incorrect("it returned per-replica values; return the loss train_step returned")
            last = done
            expected = replicas * (last - 1) * replicas + replicas * (replicas + 1) / 2
            try:
                got_loss = float(got)
            except (TypeError, ValueError):
                raise Incorrect(f"with steps={steps} it returned {type(got).__name__} {got!r:.80}, "
                                "not the last step's loss") from None
            if not _close(got_loss, expected, 1e-6):
                raise Incorrect(f"with steps={steps}, it returned {got_loss:g}, expected {expected:g} "
                                "(the loss of the last step run)")
        if not _is_tf_function(multi_step):
            raise Incorrect("make_multi_step returned a plain Python function, not a tf.function")


ex_2_5 = Exercise(
    "ex_2_5", "many train steps in one call", _check_multi_step,
    hints=[
        "Return a tf.function that takes (iterator, steps) and loops inside the graph.",
        "`for _ in tf.range(steps):` inside a tf.function becomes one graph loop, traced once, whatever "
        "the value of the tensor steps; in the body, call train_step(next(iterator)).",
        "Start with loss = tf.constant(0.0) before the loop, assign the step's loss in the body, and "
        "return it after the loop.",
    ])
