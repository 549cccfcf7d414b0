# ---
# jupyter:
#   course:
#     minutes: 25
#     summary: Your own training loop on replicas; the loss scaled by the global batch; strategy.run in a tf.function; many steps per call; a popular loop's faults, fixed and measured.
# ---

# %% [markdown]
# # A custom training loop on replicas
#
# Keras `fit` runs a training loop for you under the strategy. When it is slow or fails (on
# the course's CPU fallback some of its settings stop with a placeholder error, like the one
# recalled in section 2; a similar placeholder error is reported in keras-team/keras#19246),
# or when you need control of every step, you write the loop yourself. It is
# short, but three details decide whether it is right and fast: how each replica scales its
# loss, where `strategy.run` sits, and how many steps one call runs. This notebook trains a
# small classifier on real handwritten digits with a loop of your own, then takes apart a
# popular-style loop that gets those details wrong, and measures the fix.
#
# **You will learn to**
# - build a model, an optimizer and a distributed dataset under `strategy.scope()`, ready for the first step;
# - scale each replica's loss by the *global* batch with `tf.nn.compute_average_loss`, and say why;
# - write a train step with `strategy.run` inside a `tf.function`, and combine the replicas' losses;
# - run many steps in one call with a `tf.range` loop, traced once, and measure what it saves;
# - find and fix the faults of a popular custom loop.
#
# **Time:** about 25 minutes. **Prerequisites:** `00_start_here` (strategy, `strategy.run`,
# `strategy.reduce`), and the module's first two notebooks (tracing, the strategy's scope).

# %% [markdown]
# ## 1. What changes when a step runs on every replica
#
# A training step on one device: run the model, compute the mean loss of the batch, take the
# gradients, apply them. Under a strategy, four things change:
#
# 1. **Variables are created in `strategy.scope()`**: the model's weights and the optimizer's
#    slots become *mirrored*, one copy per replica, kept equal.
# 2. **The dataset is distributed**: `strategy.experimental_distribute_dataset` takes batches of
#    the *global* batch size and hands each replica its share.
# 3. **The step runs on every replica** with `strategy.run`, inside a `tf.function` (on a TPU
#    the function is compiled once and runs on all cores).
# 4. **The replicas' results are combined**: the optimizer *sums* the replicas' gradients
#    before it applies them, and you combine the losses with `strategy.reduce`.
#
# The data: scikit-learn's 8×8 handwritten digits (it ships with the package, nothing to
# download), pixel values scaled from 0–16 to 0–1.

# %%
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

digits = load_digits()
images = (digits.data / 16.0).astype("float32")
digit_labels = digits.target.astype("int32")
x_train, x_test, y_train, y_test = train_test_split(
    images, digit_labels, test_size=0.2, random_state=0, stratify=digit_labels)
print("train:", x_train.shape, "test:", x_test.shape)

# %% [markdown]
# Batches of the global batch size, `drop_remainder=True` so every batch has the same, static
# shape (a TPU compiles for one shape), repeated so the loop never runs dry:

# %%
GLOBAL_BATCH = 64
assert GLOBAL_BATCH % strategy.num_replicas_in_sync == 0, "pick a global batch the replicas divide"

train_batches = (tf.data.Dataset.from_tensor_slices((x_train, y_train))
                 .shuffle(len(x_train), seed=0)
                 .repeat()
                 .batch(GLOBAL_BATCH, drop_remainder=True))
distributed_batches = strategy.experimental_distribute_dataset(train_batches)
print(train_batches.element_spec[0])

# %% tags=["nbval-ignore-output"]
batch_features, batch_labels = next(iter(distributed_batches))
per_replica_shapes = [tuple(t.shape) for t in strategy.experimental_local_results(batch_features)]
print("each replica's features:", per_replica_shapes)
assert [shape[0] for shape in per_replica_shapes] == [GLOBAL_BATCH // strategy.num_replicas_in_sync] * strategy.num_replicas_in_sync

# %% [markdown]
# With 8 replicas each gets 8 of the 64 examples.
#
# ### Why each replica divides by the *global* batch
#
# The optimizer adds up the replicas' gradients. So if every replica took the mean loss of
# its own 8 examples, the sum over 8 replicas would be 8 times the mean over the 64: an update
# 8 times too large. Instead, each replica divides the *sum* of its per-example losses by the
# global batch, `tf.nn.compute_average_loss(per_example_loss, global_batch_size=GLOBAL_BATCH)`;
# the sum over replicas is then exactly the mean over the global batch, and so are its
# gradients. See it with the numbers 0 to 63 as "per-example losses" (their mean is 31.5):

# %%
def two_averages(per_example_loss):
    return (tf.nn.compute_average_loss(per_example_loss, global_batch_size=GLOBAL_BATCH),
            tf.reduce_mean(per_example_loss))


@tf.function
def summed_over_replicas(per_example_losses):
    by_global_batch, by_own_batch = strategy.run(two_averages, args=(per_example_losses,))
    return (strategy.reduce("SUM", by_global_batch, axis=None),
            strategy.reduce("SUM", by_own_batch, axis=None))


fake_losses = tf.data.Dataset.range(GLOBAL_BATCH).map(lambda n: tf.cast(n, tf.float32)).batch(GLOBAL_BATCH)
with_global_batch, with_own_batch = summed_over_replicas(next(iter(strategy.experimental_distribute_dataset(fake_losses))))
print("compute_average_loss, summed over replicas:", float(with_global_batch))

# %% tags=["nbval-ignore-output"]
print("tf.reduce_mean per replica, summed:        ", float(with_own_batch))
assert float(with_own_batch) == strategy.num_replicas_in_sync * float(with_global_batch)

# %% [markdown]
# The second line is the replica count times too large (8 × 31.5 = 252 with 8 replicas).
#
# > **Myth:** "Average the loss with `tf.reduce_mean`, as on one device; the strategy takes care
# > of the rest." **Fact:** the strategy *sums* gradients across replicas; `reduce_mean` per
# > replica makes the loss and the update `num_replicas` times too large. With plain SGD that is
# > an 8× learning rate; the exercise's checker compares your update with the single-device one.
#
# ### Exercise 2.4: the distributed train step
#
# Write `make_train_step(strategy, model, optimizer, loss_fn, global_batch_size)`. It returns a
# `tf.function` `train_step(batch)` that takes one distributed batch `(features, labels)`,
# runs one step on every replica (forward pass under `tf.GradientTape`, loss, gradients,
# `optimizer.apply_gradients`) and returns the loss of the global batch, one number: the
# replicas' losses summed with `strategy.reduce`. `loss_fn(labels, logits)` returns one loss
# per example (it was made with `reduction=None`). The model and the optimizer were created in
# the strategy's scope; use them from the enclosing function, not as arguments of `strategy.run`.
#
# The checker trains a tiny model one step at a time with your function and compares the loss
# and the weights with plain SGD on the whole batch on one device, on the course's strategy and
# on one device (the default strategy).

# %%
def make_train_step(strategy, model, optimizer, loss_fn, global_batch_size):
    """A tf.function: one distributed batch -> one step on every replica -> the global batch's loss."""
    # BEGIN SOLUTION
    def replica_step(features, labels):
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            loss = tf.nn.compute_average_loss(loss_fn(labels, logits), global_batch_size=global_batch_size)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    @tf.function
    def train_step(batch):
        features, labels = batch
        per_replica_loss = strategy.run(replica_step, args=(features, labels))
        return strategy.reduce("SUM", per_replica_loss, axis=None)

    return train_step
    # END SOLUTION


# %%
check.ex_2_4(make_train_step)

# %% [markdown]
# ## 2. Train on the digits
#
# A small model and Adam, both created in the scope. One more line matters on TensorFlow 2.20:
# `optimizer.build(model.trainable_variables)`, which creates Adam's slot variables (its moment
# estimates) now, instead of inside the first traced step.
#
# > **Myth:** "Create the model and the optimizer in `strategy.scope()` and the loop will run."
# > **Fact:** on TensorFlow 2.20 with Keras 3, under `MirroredStrategy` (the CPU fallback), an
# > Adam that creates its slots lazily in the first step stops with "You must feed a value for
# > placeholder tensor". Building it first avoids that on the CPU fallback, as the training
# > below shows.
#
# You saw that error in `02_tpu_strategy_and_keras` ("The optimizer that was never built").
# Here is one train step written out (the same shape as the exercise's answer):

# %%
per_example_loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)


def make_model():
    return tf.keras.Sequential([tf.keras.Input((64,)),
                                tf.keras.layers.Dense(32, activation="relu"),
                                tf.keras.layers.Dense(10)])


def make_step(model, optimizer):
    def replica_step(features, labels):
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            loss = tf.nn.compute_average_loss(per_example_loss(labels, logits), global_batch_size=GLOBAL_BATCH)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    @tf.function
    def train_step(batch):
        return strategy.reduce("SUM", strategy.run(replica_step, args=batch), axis=None)

    return train_step


# %% [markdown]
# The working set-up:

# %%
with strategy.scope():
    model = make_model()
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
    optimizer.build(model.trainable_variables)  # slots now, not in the first traced step

train_step = make_step(model, optimizer)
batches = iter(distributed_batches)
STEPS_PER_EPOCH = len(x_train) // GLOBAL_BATCH


def test_accuracy(model):
    predictions = np.argmax(model(x_test, training=False), axis=1)
    return float(np.mean(predictions == y_test))


print("steps per epoch:", STEPS_PER_EPOCH)

# %% tags=["nbval-ignore-output"]
epoch_losses, accuracies = [], [test_accuracy(model)]
for epoch in range(5):
    losses = [float(train_step(next(batches))) for _ in range(STEPS_PER_EPOCH)]
    epoch_losses.append(np.mean(losses))
    accuracies.append(test_accuracy(model))
    print(f"epoch {epoch + 1}: mean loss {epoch_losses[-1]:.3f}, test accuracy {accuracies[-1]:.3f}")
assert epoch_losses[-1] < epoch_losses[0] / 2 and accuracies[-1] > 0.85 > accuracies[0]

# %%
print("loss fell by more than half:", bool(epoch_losses[-1] < epoch_losses[0] / 2))
print("test accuracy from chance to above 85%:", bool(accuracies[0] < 0.3 and accuracies[-1] > 0.85))

# %% [markdown]
# (`float(train_step(...))` pulls every step's loss back to Python: fine for a first loop,
# and exactly what the next section gets rid of.)
#
# ## 3. Many steps in one call
#
# Every call of a `tf.function` is a trip from Python to the devices and back: the host
# launches the program, waits, and reads the result. On a TPU that trip goes from the host CPU
# to the TPU, and for a small step it can cost more than the step itself. The TPU guide's
# answer is to run many steps inside one `tf.function`, with a `tf.range` loop
# ([Use TPUs: Improving performance with multiple steps inside tf.function](https://www.tensorflow.org/guide/tpu#improving_performance_with_multiple_steps_inside_tffunction)).
# Keras does the same with `compile(steps_per_execution=...)`.
#
# Two details make such a loop right. The iterator is passed in and `next(iterator)` is
# called *inside* the loop, so each step gets a new batch. And the number of steps is a
# **tensor**: a loop over `tf.range(steps)` becomes one graph loop, traced once whatever the
# count. A Python `range` over a Python int is *unrolled* while tracing, one copy of the body
# per step, and traced again for every new count. See it on a counter:

# %%
counter = tf.Variable(0)


@tf.function
def count_python_range(steps):
    for _ in range(steps):
        counter.assign_add(1)


@tf.function
def count_tf_range(steps):
    for _ in tf.range(steps):
        counter.assign_add(1)


for steps in (5, 50):
    count_python_range(steps)
    count_tf_range(tf.constant(steps))
print("traces, Python range over an int:", count_python_range.experimental_get_tracing_count())
print("traces, tf.range over a tensor:  ", count_tf_range.experimental_get_tracing_count())
print("counter:", int(counter.numpy()))

# %%
def graph_size(function, *args):
    return len(function.get_concrete_function(*args).graph.as_graph_def().node)


print("graph nodes, Python range, 5 and 50 steps:",
      graph_size(count_python_range, 5) < graph_size(count_python_range, 50))
print("graph nodes, tf.range, 5 and 50 steps:    ",
      graph_size(count_tf_range, tf.constant(5)) == graph_size(count_tf_range, tf.constant(50)))

# %% [markdown]
# The unrolled graph grows with the step count; the `tf.range` graph does not. (Inside a
# `tf.function`, AutoGraph also turns `for _ in range(steps)` into a graph loop when `steps`
# is a tensor; it is the Python int that unrolls. `tf.range` says what you mean either way.)
#
# ### Exercise 2.5: many train steps per call
#
# Write `make_multi_step(train_step)`. `train_step` is a step like yours from exercise 2.4: it
# takes one distributed batch and returns the loss. Return a `tf.function`
# `multi_step(iterator, steps)` that runs `steps` steps (a scalar int tensor) in one call, each
# on `next(iterator)`, and returns the **last** step's loss. It must be traced once for any
# step count, and work with `steps=1`.
#
# The checker counts the steps that ran, the times `train_step` was traced, and the loss you
# return, over calls with 3, 1 and 4 steps.

# %%
def make_multi_step(train_step):
    """A tf.function (iterator, steps) -> runs `steps` train steps in one call -> the last loss."""
    # BEGIN SOLUTION
    @tf.function
    def multi_step(iterator, steps):
        loss = tf.constant(0.0)
        for _ in tf.range(steps):
            loss = train_step(next(iterator))
        return loss

    return multi_step
    # END SOLUTION


# %%
check.ex_2_5(make_multi_step)

# %% [markdown]
# ### Measure it: one step per call against many
#
# Below, the loop calls the one-step function of section 2, as your answer does (the TPU guide
# calls `strategy.run` directly in the loop: the same idea). Both ways train the same model,
# from the same iterator, first one step per call, then 20 steps per call:

# %%
def make_steps(model, optimizer):
    one_step = make_step(model, optimizer)

    @tf.function
    def train_many_steps(iterator, steps):
        loss = tf.constant(0.0)
        for _ in tf.range(steps):
            loss = one_step(next(iterator))
        return loss

    return one_step, train_many_steps


train_step, train_many_steps = make_steps(model, optimizer)
STEPS = 20
loss_after_calls = [float(train_many_steps(batches, tf.constant(steps))) for steps in (1, 5, STEPS)]
print("traces of train_many_steps for 1, 5 and 20 steps:", train_many_steps.experimental_get_tracing_count())

# %% tags=["nbval-ignore-output"]
def one_step_per_call(iterator, steps):
    for _ in range(steps):
        loss = train_step(next(iterator))
    return loss


one_step_per_call(batches, 2)  # trace the one-step function before timing it
per_step = {
    "1 step per call": [t / STEPS for t in tpu_course.measure.time_calls(one_step_per_call, batches, STEPS, repeats=15)],
    f"{STEPS} steps per call": [t / STEPS for t in tpu_course.measure.time_calls(
        train_many_steps, batches, tf.constant(STEPS), repeats=15)],
}
figure = tpu_course.measure.bar_chart(per_step, "Time per training step, on this machine",
                                      ylabel="milliseconds per step (median)")
speedup = tpu_course.measure.ratios(per_step)[f"{STEPS} steps per call"]
print(f"{STEPS} steps per call ran {speedup:.2f}× as fast per step as 1 step per call (medians of 15).")
assert train_many_steps.experimental_get_tracing_count() == 1

# %% [markdown]
# Look for the many-steps bar to be lower (each bar is the median of 15 timings). On the CPU fallback what it saves is the work each
# call costs the host: Python, launching the function on 8 replicas, waiting for the result.
# On a TPU each call is also a round trip from the host to the TPU, which is why the TPU guide
# recommends many steps per call. The ratio here is this machine's, not a TPU's.
#
# Log once per call, from the loss `train_many_steps` returns, not once per step.

# %% [markdown]
# ## 4. Fix the snippet
#
# Loops in this style are common in forum answers and blog posts. It trains, and it prints a loss that
# looks plausible. Read it and find three faults before you read on.

# %%
plain_batches = (tf.data.Dataset.from_tensor_slices((x_train, y_train))
                 .shuffle(len(x_train), seed=0).repeat()
                 .batch(GLOBAL_BATCH, drop_remainder=True))


@tf.function
def popular_train_step(model, optimizer, features, labels):
    def step_fn(features, labels):
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            loss = tf.nn.compute_average_loss(per_example_loss(labels, logits), global_batch_size=GLOBAL_BATCH)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    per_replica_loss = strategy.run(step_fn, args=(features, labels))
    return strategy.reduce("SUM", per_replica_loss, axis=None)


def popular_loop(model, optimizer, steps):
    for step, (features, labels) in enumerate(plain_batches.take(steps)):
        loss = popular_train_step(model, optimizer, features, labels)
        print(f"step {step}: loss {loss.numpy():.4f}")


with strategy.scope():
    popular_model = make_model()
    popular_optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
    popular_optimizer.build(popular_model.trainable_variables)

# %% tags=["nbval-ignore-output"]
popular_loop(popular_model, popular_optimizer, steps=3)

# %% [markdown]
# The faults, and what each one really does on TensorFlow 2.20:
#
# **Fault 1: the model and the optimizer are arguments of the `tf.function`.** It buys
# nothing: what makes the weights replicated is that they were *created* in
# `strategy.scope()`, not how the step reaches them. And a model passed to a `tf.function`
# becomes part of its trace key: every other model is a new trace.
#
# Many versions of this loop go one step further and pass the model and the optimizer on
# through `strategy.run(step_fn, args=(model, optimizer, ...))`. `MirroredStrategy` hands
# such arguments to every replica unchanged, so that runs on the fallback; `TPUStrategy`
# converts every argument of the replicated step to a tensor (`tpu.replicate`, in
# `tensorflow/python/tpu/tpu.py`), and a model is not one. This version keeps that fault out,
# so that it runs on a TPU too; here is what the conversion says:

# %%
try:
    tf.convert_to_tensor(popular_model)
except ValueError as error:
    print("ValueError:", str(error).split(" (<")[0], "(a Keras model) with an unsupported type")

# %%
with strategy.scope():
    other_model = make_model()
    other_optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
    other_optimizer.build(other_model.trainable_variables)
features, labels = next(iter(plain_batches))
popular_train_step(other_model, other_optimizer, features, labels)
print("traces of popular_train_step, after two models:", popular_train_step.experimental_get_tracing_count())

# %% [markdown]
# **Fault 2: the dataset is not distributed.** `features` is one ordinary tensor of 64
# examples. `strategy.run` does not split an ordinary tensor: it gives *every* replica the
# whole global batch.

# %% tags=["nbval-ignore-output"]
@tf.function
def rows_each_replica_gets(features):
    return strategy.experimental_local_results(strategy.run(lambda f: tf.shape(f)[0], args=(features,)))


rows = [int(n) for n in rows_each_replica_gets(features)]
print("rows per replica, plain tensor:     ", rows)
print("rows per replica, distributed batch:", [shape[0] for shape in per_replica_shapes])
assert rows == [GLOBAL_BATCH] * strategy.num_replicas_in_sync

# %% [markdown]
# So every replica does the same work on the same 64 examples: 8 times the computation for
# one batch's worth of learning, and since each replica still divides by the global batch, the
# summed loss and the summed gradients are 8 times too large. Measure it: one step of each
# loop from the same weights, on the same batch, once with SGD and once with Adam.

# %%
start_weights = model.get_weights()
one_distributed_batch = next(iter(strategy.experimental_distribute_dataset(
    tf.data.Dataset.from_tensor_slices((features, labels)).batch(GLOBAL_BATCH))))


def one_step_from_start(optimizer_class, popular):
    """(loss, size of the weight update) of one step from start_weights."""
    with strategy.scope():
        fresh_model = make_model()
        fresh_model.set_weights(start_weights)
        fresh_optimizer = optimizer_class(learning_rate=0.01)
        fresh_optimizer.build(fresh_model.trainable_variables)
    if popular:
        loss = popular_train_step(fresh_model, fresh_optimizer, features, labels)
    else:
        loss = make_step(fresh_model, fresh_optimizer)(one_distributed_batch)
    update = np.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(fresh_model.get_weights(), start_weights)))
    return float(loss), update


too_large = {}
for optimizer_class in (tf.keras.optimizers.SGD, tf.keras.optimizers.Adam):
    popular_loss, popular_update = one_step_from_start(optimizer_class, popular=True)
    right_loss, right_update = one_step_from_start(optimizer_class, popular=False)
    too_large[optimizer_class.__name__] = (popular_loss / right_loss, popular_update / right_update)

# %% tags=["nbval-ignore-output"]
for name, (loss_ratio, update_ratio) in too_large.items():
    print(f"{name}: the popular loop's loss is {loss_ratio:.2f}×, its update {update_ratio:.2f}× the right one")
replicas = strategy.num_replicas_in_sync
assert abs(too_large["SGD"][0] - replicas) < 1e-3 and abs(too_large["SGD"][1] - replicas) < 1e-3
assert abs(too_large["Adam"][1] - 1) < 0.05

# %% [markdown]
# With SGD the update is 8 times too large: an 8× learning rate nobody chose. With Adam it is
# about right, because Adam divides each gradient by a running estimate of its own size, so
# the 8× cancels. That is why the fault hides: training looks fine, the printed loss is
# simply 8 times too high, and 7 of the 8 replicas do nothing useful.
#
# **Fault 3: every step is its own call, and every step's loss is pulled to Python and
# printed.** `loss.numpy()` makes the host wait for each step to finish before it launches the
# next; on a TPU that is a round trip per step (section 3).
#
# One more difference, not a fault of the step: `popular_loop` starts a new pass over
# `plain_batches.take(steps)` on every call, so each call builds a fresh iterator and refills
# a shuffle buffer as large as the training set. The measurement below gives that its own bar.
#
# The fix uses what you built: the step reaches the model and the optimizer from its enclosing
# function, the dataset is distributed, and many steps run per call, with one log line per call.

# %%
def fixed_loop(multi_step, iterator, steps):
    loss = multi_step(iterator, tf.constant(steps))
    print(f"after {steps} steps: loss {float(loss):.4f}")


with strategy.scope():
    fixed_model = make_model()
    fixed_optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
    fixed_optimizer.build(fixed_model.trainable_variables)
_, fixed_multi_step = make_steps(fixed_model, fixed_optimizer)
fixed_batches = iter(distributed_batches)

# %% tags=["nbval-ignore-output"]
import contextlib
import io

def popular_loop_one_iterator(model, optimizer, iterator, steps):
    """popular_loop, but reading from one iterator kept across calls."""
    for step in range(steps):
        features, labels = next(iterator)
        loss = popular_train_step(model, optimizer, features, labels)
        print(f"step {step}: loss {loss.numpy():.4f}")


plain_iterator = iter(plain_batches)
LOOP_STEPS = 20
with contextlib.redirect_stdout(io.StringIO()):  # both loops print to a buffer, not the notebook
    popular_loop(popular_model, popular_optimizer, LOOP_STEPS)  # once, to trace
    popular_loop_one_iterator(popular_model, popular_optimizer, plain_iterator, LOOP_STEPS)
    fixed_loop(fixed_multi_step, fixed_batches, LOOP_STEPS)
    loop_seconds = {
        "popular loop": tpu_course.measure.time_calls(
            popular_loop, popular_model, popular_optimizer, LOOP_STEPS, repeats=15),
        "popular, one iterator": tpu_course.measure.time_calls(
            popular_loop_one_iterator, popular_model, popular_optimizer, plain_iterator, LOOP_STEPS, repeats=15),
        "fixed loop": tpu_course.measure.time_calls(
            fixed_loop, fixed_multi_step, fixed_batches, LOOP_STEPS, repeats=15),
    }
figure = tpu_course.measure.bar_chart(loop_seconds, f"{LOOP_STEPS} training steps, on this machine")
for label, ratio in list(tpu_course.measure.ratios(loop_seconds).items())[1:]:
    print(f"{label}: {ratio:.2f}× as fast as the popular loop (medians of 15)")
assert fixed_multi_step.experimental_get_tracing_count() == 1  # one trace for every call

# %% [markdown]
# Each bar is the median of 15 timings, and both popular loops print into a buffer, so the
# printing itself costs little; what stays is `loss.numpy()` waiting for every step. Look for
# the fixed loop's bar to be the lowest. The first two bars differ only in the iterator
# (rebuilt on every call or kept), and how much that costs varies from run to run here. The
# second and third differ in two ways at once, calls per step and rows per replica (64
# against 8), and this measurement does not separate them. The fixed loop also *learns* the
# same per step: each step still uses one global batch of 64 examples, now spread across
# the replicas.

# %% [markdown]
# ## Wrap-up
#
# You can now:
# - create the model, the optimizer (built before the first step) and a distributed dataset for a custom loop under a strategy;
# - scale each replica's loss by the global batch with `tf.nn.compute_average_loss`, and combine the replicas' losses with `strategy.reduce("SUM", ...)`;
# - write a train step with `strategy.run` inside a `tf.function`;
# - run many steps per call with a `tf.range` loop over a tensor step count, traced once;
# - spot a loop that feeds every replica the whole batch, and one that makes a call and a host round trip per step.
#
# **Check your understanding**
# 1. With 4 replicas and a global batch of 32, a replica's per-example losses sum to 6.4. What does `compute_average_loss` return on that replica, and what would `tf.reduce_mean` return?
# 2. Your loop's loss is correct but your SGD model diverges after you move from 1 replica to 8. Which line do you look at first?
# 3. Why does `multi_step(iterator, 100)` (a Python int) trace again for `multi_step(iterator, 200)`, while `multi_step(iterator, tf.constant(100))` does not?
# 4. A loop calls `strategy.run(step_fn, args=(features, labels))` with `features` a batch from an ordinary `tf.data.Dataset`. What does each replica receive, and what does that do to the cost of a step?
# 5. Why is `strategy.reduce("MEAN", ...)` the wrong way to combine losses that `compute_average_loss` produced?
#
# **Further reading**
# - [Use TPUs](https://www.tensorflow.org/guide/tpu), in particular its custom training loop and "Improving performance with multiple steps inside tf.function"
# - [Custom training with tf.distribute.Strategy](https://www.tensorflow.org/tutorials/distribute/custom_training), the official tutorial on loss scaling across replicas
# - [`tf.nn.compute_average_loss`](https://www.tensorflow.org/api_docs/python/tf/nn/compute_average_loss) and [Distributed training with TensorFlow](https://www.tensorflow.org/guide/distributed_training)
# - [Better performance with tf.function](https://www.tensorflow.org/guide/function), on tracing and AutoGraph loops
# - [Writing a training loop from scratch in TensorFlow](https://keras.io/guides/writing_a_custom_training_loop_in_tensorflow/) (Keras 3 guide)
# - [keras-team/keras#19246](https://github.com/keras-team/keras/issues/19246): a similar placeholder error is reported there
