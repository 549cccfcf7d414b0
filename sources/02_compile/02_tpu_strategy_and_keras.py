# ---
# jupyter:
#   course:
#     minutes: 25
#     summary: The TPUStrategy lifecycle step by step; what must be created inside strategy.scope() and the errors when it is not; strategy.run, reduce and local results; Keras compile and fit under a strategy, and steps_per_execution.
# ---

# %% [markdown]
# # TPUStrategy, step by step, and Keras under a strategy
#
# Every notebook of this course starts with a `strategy`. On a TPU it is a `TPUStrategy`: one
# program, compiled once, run on every TPU core, with each core holding its own copy of the
# model's variables. This notebook opens that box. You will see the four steps that produce
# a `TPUStrategy`, which objects must be created "inside the strategy" (and the errors,
# some loud and some silent, when they are not), how a replicated step returns and combines
# values, and how Keras `compile` and `fit` fit in, including a setting that matters on
# TPUs, `steps_per_execution`.
#
# **You will learn to**
# - explain each step of the TPUStrategy lifecycle (resolver, connect, initialise, strategy) and what fails off a TPU;
# - create the model, the optimizer (built) and the metrics inside `strategy.scope()`, and recognise the errors when you do not;
# - run a training step with `strategy.run` inside `tf.function`, and read its result with `strategy.reduce` and `strategy.experimental_local_results`;
# - tell the real compile entry points from a popular myth;
# - train a Keras model under a strategy, and measure what `steps_per_execution` does.
#
# **Time:** about 25 minutes. **Prerequisites:** `00_start_here` (`strategy.run`,
# `strategy.reduce`); the first notebook of this module,
# [01_xla_and_static_shapes](01_xla_and_static_shapes.ipynb) (XLA, `jit_compile`), helps.

# %% [markdown]
# ## 1. The TPUStrategy lifecycle
#
# The set-up cell found this machine's hardware with the course's `tpu_course.start()`. On a
# TPU it ran the four lines below. Here they are, printed from the package itself so you see
# exactly what ran:

# %%
import inspect

print(inspect.getsource(tpu_course.hardware._connect_tpu))

# %% [markdown]
# Step by step:
#
# 1. **`TPUClusterResolver(tpu=...)`** finds the TPU and describes it as a "cluster".
#    `tpu="local"` means a TPU attached to this very machine: a Cloud TPU VM, or a Colab TPU
#    runtime. A name or a `grpc://` address means a TPU reached over the network (the older
#    TPU Node set-up). With no argument, it reads the environment variables `TPU_NAME` (or
#    `KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS`, `TPU_CONFIG`); with none set, it gives up at once
#    ([tensorflow/python/tpu/client/client.py](https://github.com/tensorflow/tensorflow/blob/v2.20.0/tensorflow/python/tpu/client/client.py)).
# 2. **`tf.config.experimental_connect_to_cluster(resolver)`** connects TensorFlow's runtime
#    to the TPU's host, so that operations can be placed there. For a local TPU there is
#    nothing to connect to: the function returns without doing anything when the resolver's
#    master is local (see `connect_to_cluster` in
#    [tensorflow/python/eager/remote.py](https://github.com/tensorflow/tensorflow/blob/v2.20.0/tensorflow/python/eager/remote.py)).
# 3. **`tf.tpu.experimental.initialize_tpu_system(resolver)`** starts the TPU system and
#    returns its topology (how many chips and cores). Off a TPU, this is the step that fails,
#    with `NotFoundError` ("TPUs not found"). It also *resets* the TPU: run it again and
#    TensorFlow warns that "Reinitializing the TPU can cause previously created variables on
#    TPU to be lost"
#    ([tpu_strategy_util.py](https://github.com/tensorflow/tensorflow/blob/v2.20.0/tensorflow/python/tpu/tpu_strategy_util.py)).
#    That is why it runs once, at the top of the program.
# 4. **`tf.distribute.TPUStrategy(resolver)`** builds the strategy: one replica per TPU core.
#
# This notebook does not run step 3 here: initialising starts TensorFlow's runtime and talks
# to hardware that may not be there. The first two steps are safe to look at. A resolver for
# a local TPU has an empty master address, which is why step 2 does nothing for it:

# %%
local_resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")
print("master:", repr(local_resolver.master()))

# %% [markdown]
# And the resolver with no argument, where no TPU name is set in the environment, fails
# straight away, without touching the network (on Google Cloud with `TPU_NAME` set it would
# look the TPU up through the Cloud TPU API instead, so the cell skips it there):

# %% tags=["nbval-ignore-output"]
import os

tpu_name_variables = [name for name in ("TPU_NAME", "KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS", "TPU_CONFIG")
                      if name in os.environ]
if tpu_name_variables:
    print("skipped: a TPU is named by", tpu_name_variables)
else:
    try:
        tf.distribute.cluster_resolver.TPUClusterResolver()
    except ValueError as error:
        print("ValueError:", error)
        assert "Please provide a TPU Name" in str(error)

# %% [markdown]
# ### One strategy for the whole program
#
# The course calls that lifecycle once and hands you the result as `strategy`. Use that
# object everywhere, and never make a second one:
#
# - on a TPU, a second initialisation resets the chips (step 3 above);
# - every variable belongs to the strategy whose scope created it. A second strategy object is
#   a different world, even over the very same devices.
#
# The course's `tpu_course.hardware.connect_quietly()`, which `tpu_course.start()` called
# (through `tpu_course.connect()`, which also prints the line you saw), runs the lifecycle
# only the first time; calling it again gives back the same object:

# %%
print(tpu_course.hardware.connect_quietly() is strategy)

# %% [markdown]
# Here is what happens when two strategies meet. The cell below makes a second
# `MirroredStrategy` over exactly the same devices as the fallback's, creates a variable in
# its scope, and updates it from the course strategy's replicas:

# %% tags=["nbval-ignore-output"]
if isinstance(strategy, tf.distribute.MirroredStrategy):
    other_strategy = tf.distribute.MirroredStrategy(strategy.extended.worker_devices)
    with other_strategy.scope():
        counter = tf.Variable(0.0)

    @tf.function
    def add_one_on_every_replica():
        return strategy.run(lambda: counter.assign_add(1.0))

    try:
        add_one_on_every_replica()
    except RuntimeError as error:
        phrase = "Mixing different tf.distribute.Strategy objects"
        shown = phrase if phrase in str(error) else str(error).strip().splitlines()[0][:120]
        print("RuntimeError:", shown)
        assert phrase in str(error)
else:
    print("Shown under MirroredStrategy (the CPU fallback, GPUs); the rule is the same here: one strategy.")

# %% [markdown]
# ## 2. What goes inside `strategy.scope()`
#
# A variable created inside `with strategy.scope():` is a *distributed* variable: one copy
# per replica, kept in sync (a `MirroredVariable`, or `TPUMirroredVariable` on a TPU). A
# variable created outside it is an ordinary variable on one device. So everything that owns
# variables is created inside the scope:
#
# - **the model** (its weights),
# - **the optimizer**, *and its slot variables* (Adam's two moments per weight, momentum, ...).
#   Keras 3 optimizers create slots lazily, at the first `apply_gradients`; build them up
#   front with `optimizer.build(model.trainable_variables)`, inside the scope,
# - **the metrics** (their running totals and counts).
#
# The data for this notebook: scikit-learn's handwritten digits, 1,797 images of 8×8 pixels,
# which ship with the package (nothing is downloaded). Each image becomes 64 numbers in [0, 1].

# %%
import keras
from sklearn.datasets import load_digits

digits = load_digits()
images = (digits.data / 16.0).astype("float32")
labels = digits.target.astype("int32")
train_images, train_labels = images[:1536], labels[:1536]
test_images, test_labels = images[1536:], labels[1536:]
print(train_images.shape, test_images.shape, sorted(set(labels.tolist())))

# %%
def digits_model():
    """64 pixels in, 10 logits out: small enough to train in seconds on a CPU."""
    return keras.Sequential([keras.Input((64,)),
                             keras.layers.Dense(32, activation="relu"),
                             keras.layers.Dense(10)])


with strategy.scope():
    model = digits_model()
    optimizer = keras.optimizers.Adam(learning_rate=1e-2)
    optimizer.build(model.trainable_variables)
    accuracy = keras.metrics.SparseCategoricalAccuracy()

kernel = model.trainable_variables[0]
print("Keras variable:", kernel.path)
print("  holds a distributed variable:", isinstance(kernel.value, tf.distribute.DistributedValues))
print("  created in this strategy's scope:", strategy.extended.variable_created_in_scope(kernel.value))
print("optimizer variables:", len(optimizer.variables), "all in scope:",
      all(strategy.extended.variable_created_in_scope(v.value) for v in optimizer.variables))
print("metric variables:", [v.path for v in accuracy.variables])

# %% [markdown]
# A Keras 3 variable wraps a TensorFlow one: `.value` is the `tf.Variable` underneath, and
# `strategy.extended.variable_created_in_scope(...)` is the public way to ask whether it was
# created in this strategy's scope. The distributed variable holds one copy per replica:

# %% tags=["nbval-ignore-output"]
copies = strategy.experimental_local_results(kernel.value)
for copy in copies[:3]:
    print(copy.device)
print("...", len(copies), "copies")
assert len(copies) == strategy.num_replicas_in_sync

# %% [markdown]
# ### When something is created outside the scope
#
# Some mistakes fail loudly. Create the model outside the scope, and the optimizer, built
# inside it, refuses to put its slot variables next to weights that are not distributed:

# %%
stray_model = digits_model()  # outside the scope: ordinary variables
with strategy.scope():
    stray_optimizer = keras.optimizers.Adam()
    try:
        stray_optimizer.build(stray_model.trainable_variables)
        print("no error: with one replica there is nothing to mirror")
    except ValueError as error:
        print("ValueError:", str(error).split(", not")[0])

# %% [markdown]
# And build an optimizer outside the scope it was created in, and it says where it must be:

# %%
with strategy.scope():
    unbuilt_optimizer = keras.optimizers.Adam()
try:
    unbuilt_optimizer.build(model.trainable_variables)  # outside the scope
    print("no error: with one replica there is nothing to mirror")
except RuntimeError as error:
    print("RuntimeError:", str(error).split(" for ")[0])

# %% [markdown]
# Other mistakes are silent, and worse. To see one, you need a training step.

# %% [markdown]
# ## 3. A replicated step: `strategy.run`, `reduce`, local results
#
# `strategy.run(step, args=batch)` calls `step` once per replica, each on its own share of the
# batch, and returns *per-replica* values. Put it inside a `tf.function`: then the step and
# everything around it (the reduction, a loop over several steps) become one program, traced
# once and, on a TPU, compiled once. `TPUStrategy` does not run a plain Python step eagerly
# ([its API page](https://www.tensorflow.org/api_docs/python/tf/distribute/TPUStrategy):
# "TPUStrategy doesn't support pure eager execution"). Called outside a `tf.function`,
# `TPUStrategy.run` first calls `validate_run_function`, which raises `NotImplementedError`
# unless the step is itself a `tf.function` (or a `ConcreteFunction`, or an object whose
# `__call__` is a `tf.function`). A step that passes is wrapped in a `tf.function` of
# TPUStrategy's own, kept in a cache keyed by that step object, so calling `run` again with
# the same `tf.function` does not trace again (`validate_run_function`, `tpu_run` and
# `_tpu_function_creator` in
# [tensorflow/python/distribute/tpu_strategy.py](https://github.com/tensorflow/tensorflow/blob/v2.20.0/tensorflow/python/distribute/tpu_strategy.py)).
# That check needs no TPU, so here it is, the function itself (an internal one, imported
# only to show it):

# %%
from tensorflow.python.distribute.tpu_strategy import validate_run_function

try:
    validate_run_function(lambda: 1.0)  # a plain Python function, called eagerly
except NotImplementedError as error:
    phrase = "TPUStrategy.run(fn, ...) does not support pure eager execution"
    print("NotImplementedError:", phrase if phrase in str(error) else str(error)[:120])
    assert phrase in str(error)
validate_run_function(tf.function(lambda: 1.0))
print("a tf.function passes the check")

# %% [markdown]
#
# Each replica sees only its share, so the loss is averaged over the **global** batch with
# `tf.nn.compute_average_loss`: the replicas' gradients are summed when they are applied, and
# the sum is then the gradient of the mean loss.

# %%
GLOBAL_BATCH = 64
per_example_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
train_batches = (tf.data.Dataset.from_tensor_slices((train_images, train_labels))
                 .shuffle(len(train_images), seed=0)
                 .batch(GLOBAL_BATCH, drop_remainder=True))


def make_train_step(model, optimizer, metric):
    """A tf.function that runs one training step on every replica; returns per-replica losses."""
    def step(images, labels):  # runs on each replica, on its share of the batch
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss = tf.nn.compute_average_loss(per_example_loss(labels, logits),
                                              global_batch_size=GLOBAL_BATCH)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        metric.update_state(labels, logits)
        return loss

    @tf.function
    def train_step(batch):
        return strategy.run(step, args=batch)

    return train_step


batch = next(iter(strategy.experimental_distribute_dataset(train_batches)))
train_step = make_train_step(model, optimizer, accuracy)
per_replica_loss = train_step(batch)

# %% [markdown]
# `per_replica_loss` holds one loss per replica. `experimental_local_results` unwraps it into
# a tuple; `strategy.reduce` combines it into one tensor. Each replica's loss is its share of
# the global mean, so their **SUM** is the mean loss over the whole batch:

# %% tags=["nbval-ignore-output"]
local_losses = strategy.experimental_local_results(per_replica_loss)
mean_loss = float(strategy.reduce("SUM", per_replica_loss, axis=None))
print("per replica:", [round(float(loss), 3) for loss in local_losses])
print(f"SUM over replicas: {mean_loss:.3f}")
print("optimizer steps:", int(optimizer.iterations.numpy()))
assert abs(mean_loss - sum(float(loss) for loss in local_losses)) < 1e-5
assert abs(mean_loss - np.log(10)) < 0.5  # an untrained 10-class model scores about ln 10
assert int(optimizer.iterations.numpy()) == 1

# %% [markdown]
# The first loss is close to ln 10 ≈ 2.30, what a model that guesses evenly among 10 classes
# scores, and the optimizer counted **one** step: one update of the mirrored weights, applied
# on every replica alike.
#
# ### A silent mistake: the optimizer outside the scope
#
# Now the same step with an optimizer created and built *outside* the scope. Its step
# counter is an ordinary variable, so every replica increments it:

# %% tags=["nbval-ignore-output"]
with strategy.scope():
    model_b = digits_model()
    accuracy_b = keras.metrics.SparseCategoricalAccuracy()
outside_optimizer = keras.optimizers.Adam(learning_rate=1e-2)  # outside the scope
outside_optimizer.build(model_b.trainable_variables)

try:
    train_step_b = make_train_step(model_b, outside_optimizer, accuracy_b)
    for _ in range(2):
        train_step_b(batch)
    steps_counted = int(outside_optimizer.iterations.numpy())
    print(f"2 training steps, the optimizer counted {steps_counted}")
    if isinstance(strategy, tf.distribute.MirroredStrategy):
        assert steps_counted == 2 * strategy.num_replicas_in_sync
except Exception as error:  # other strategies may refuse outright
    print(type(error).__name__, str(error).strip().splitlines()[0][:120])

# %% [markdown]
# No error, and a wrong answer: on the CPU fallback it counts 2 steps as 16 (2 × 8 replicas).
# Adam's step size depends on that count (its bias correction), so the updates are not the
# ones you asked for either. Checking where variables were created is the reliable defence:
# in the exercise below you create the objects, and the checker checks where their variables
# were created.
#
# ### The optimizer that was never built
#
# And one more: an Adam optimizer created inside the scope but not built. Its slots are
# then created lazily, inside the first compiled, replicated step. On the CPU fallback
# (`MirroredStrategy`) with TensorFlow 2.20 and Keras 3 that step fails:

# %% tags=["nbval-ignore-output"]
with strategy.scope():
    model_c = digits_model()
    lazy_optimizer = keras.optimizers.Adam(learning_rate=1e-2)  # not built
    accuracy_c = keras.metrics.SparseCategoricalAccuracy()

try:
    make_train_step(model_c, lazy_optimizer, accuracy_c)(batch)
    print("ran: this strategy tolerates slots created in the first step")
except Exception as error:  # on the fallback, InvalidArgumentError; another strategy may differ
    phrase = "You must feed a value for placeholder tensor"
    shown = phrase if phrase in str(error) else str(error).strip().splitlines()[0][:120]
    print(f"{type(error).__name__}:", shown)
    assert phrase in str(error) or not isinstance(strategy, tf.distribute.MirroredStrategy)

# %% [markdown]
# The cure is the line you already saw: `optimizer.build(model.trainable_variables)` inside
# the scope, before the first step. It costs nothing, and it makes the step's variables fixed
# before anything is compiled, which is what a TPU wants anyway.

# %% [markdown]
# ### Exercise 2.3: create everything where it belongs
#
# Write `build_for_strategy(strategy)` that returns a tuple `(model, optimizer, metric)`:
#
# - `model`: a Keras model from 64 pixel values to 10 logits (like `digits_model()`);
# - `optimizer`: an Adam optimizer, **built** for the model's trainable variables;
# - `metric`: a `keras.metrics.SparseCategoricalAccuracy()`;
#
# all three created inside the scope of the `strategy` you are given (not the global one).
# The checker calls it with the course's strategy and with TensorFlow's default strategy,
# checks where every variable was created, then runs one replicated training step with your
# objects and counts the optimizer's steps.

# %%
def build_for_strategy(strategy):
    """(model, optimizer, metric), all created inside strategy.scope(), the optimizer built."""
    # BEGIN SOLUTION
    with strategy.scope():
        model = digits_model()
        optimizer = keras.optimizers.Adam(learning_rate=1e-2)
        optimizer.build(model.trainable_variables)
        metric = keras.metrics.SparseCategoricalAccuracy()
    return model, optimizer, metric
    # END SOLUTION


# %%
check.ex_2_3(build_for_strategy)

# %% [markdown]
# ## 4. Where compilation really happens
#
# > **Myth:** "To run on a TPU, compile your function with `tf.tpu.experimental.compile`."
# > (The name turns up in popular tutorials and LLM-generated snippets.)
# > **Fact:** there is no such function. TensorFlow 1 code used `tf.compat.v1.tpu.rewrite`
# > or `TPUEstimator`; the Estimator API is gone since TensorFlow 2.16
# > ([release notes](https://github.com/tensorflow/tensorflow/releases/tag/v2.16.1)). In
# > TensorFlow 2, XLA compiles a TPU program when a `tf.function` runs on the TPU:
# > `strategy.run` inside a `tf.function`, or Keras `compile`/`fit`, which builds that
# > function for you.

# %%
print("tf.tpu.experimental.compile exists:", hasattr(tf.tpu.experimental, "compile"))
print("tf.compat.v1.tpu.rewrite exists:   ", hasattr(tf.compat.v1.tpu, "rewrite"))
print("tf.compat.v1.estimator exists:     ", hasattr(tf.compat.v1, "estimator"))

# %% [markdown]
# The real entry points:
#
# | You write | What is compiled |
# |---|---|
# | `tf.function(f, jit_compile=True)` | `f`, with XLA, on any device; an op XLA cannot compile is an error (the first notebook of this module) |
# | `strategy.run(step, ...)` inside a `tf.function` | on a TPU, the step, always with XLA, once per input signature, replicated on every core |
# | `model.compile(..., jit_compile=..., steps_per_execution=N)` | Keras's own train function, running `N` steps per call |
#
# On a TPU, XLA is not optional: `jit_compile` matters on CPUs and GPUs. Keras 3's default,
# `jit_compile="auto"`, resolves to off under a strategy, as
# [01_xla_and_static_shapes](01_xla_and_static_shapes.ipynb) (section 1) showed; under
# `TPUStrategy` the step is compiled for the TPU all the same. That notebook also shows when
# a `tf.function` is compiled again (a new input signature) and how to avoid it.

# %% [markdown]
# ## 5. Keras under a strategy
#
# Keras does the replicated step for you. The rule of section 2 stays: create **and compile**
# the model inside `strategy.scope()` (compile creates the optimizer and the metrics). Then
# `fit` takes a dataset of *global* batches and splits each across the replicas itself.

# %%
with strategy.scope():
    keras_model = digits_model()
    keras_model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                        metrics=["accuracy"])

fit_batches = (tf.data.Dataset.from_tensor_slices((train_images, train_labels))
               .shuffle(len(train_images), seed=0)
               .batch(GLOBAL_BATCH, drop_remainder=True)
               .repeat())
test_batches = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(GLOBAL_BATCH)
# Two passes over the data as one "epoch" of 48 steps: each epoch boundary costs time here.
# shuffle=False: the dataset shuffles itself (Keras would only warn that it cannot).
history = keras_model.fit(fit_batches, epochs=1, steps_per_epoch=48, verbose=0, shuffle=False)
test_accuracy = keras_model.evaluate(test_batches, verbose=0, return_dict=True)["accuracy"]

# %% tags=["nbval-ignore-output"]
print(f"training accuracy, averaged over the 48 steps: {history.history['accuracy'][-1]:.2f}")
print(f"accuracy on the {len(test_images)} held-out digits: {test_accuracy:.2f}")
assert test_accuracy > 0.7

# %%
print("held-out accuracy above 70%:", test_accuracy > 0.7)
print("Keras chose jit_compile:", keras_model.jit_compile)  # "auto" resolved: off under a strategy

# %% [markdown]
# ### `steps_per_execution`: many steps per call
#
# By default `fit` calls its compiled train function once per batch: one trip from Python to
# the device and back per step. On a TPU that trip is expensive next to a small step, so
# Keras lets one call run several steps: `compile(..., steps_per_execution=N)` puts `N` steps
# in a loop inside the compiled function. The official TPU guide sets it to 50 ("Anything
# between 2 and `steps_per_epoch` could help here", [Use TPUs](https://www.tensorflow.org/guide/tpu)).
#
# On the CPU fallback, with TensorFlow 2.20 and Keras 3, `fit` with `steps_per_execution > 1`
# under `MirroredStrategy` fails, with the same placeholder error message as the unbuilt
# optimizer's above (a similar placeholder error is reported in
# [keras-team/keras#19246](https://github.com/keras-team/keras/issues/19246)). On a TPU it is
# expected to run (not run here): the TPU guide above uses `steps_per_execution` under
# `TPUStrategy`.

# %% tags=["nbval-ignore-output"]
with strategy.scope():
    looping_model = digits_model()
    looping_model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                          loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                          steps_per_execution=8)
try:
    looping_model.fit(fit_batches, epochs=1, steps_per_epoch=16, verbose=0, shuffle=False)
    print("fit with steps_per_execution=8 ran under", type(strategy).__name__)
except Exception as error:  # on the fallback, InvalidArgumentError; another strategy may differ
    phrase = "You must feed a value for placeholder tensor"
    shown = phrase if phrase in str(error) else str(error).strip().splitlines()[0][:120]
    print(f"{type(error).__name__}:", shown)
    assert phrase in str(error) or not isinstance(strategy, tf.distribute.MirroredStrategy)

# %% [markdown]
# What you can measure here is the effect itself, on **one device, not replicated**: the
# same model, compiled outside any scope (so under TensorFlow's default strategy), trained
# one epoch at a time with 1 step per call and with 8. Each is called once first, to leave
# tracing out of the timings.

# %%
one_device_batches = (tf.data.Dataset.from_tensor_slices((train_images, train_labels))
                      .batch(32, drop_remainder=True))
epoch_seconds = {}
for steps in (1, 8):
    one_device_model = digits_model()  # outside any scope: one device, default strategy
    one_device_model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                             loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                             steps_per_execution=steps)

    def one_epoch(model=one_device_model):
        return model.fit(one_device_batches, epochs=1, verbose=0, shuffle=False).history["loss"][-1]

    one_epoch()  # trace first
    epoch_seconds[f"{steps} step(s) per call"] = tpu_course.measure.time_calls(one_epoch, repeats=7)

# %% tags=["nbval-ignore-output"]
figure = tpu_course.measure.bar_chart(
    epoch_seconds, "One epoch of fit on ONE device (not replicated), this machine",
    ylabel="milliseconds per epoch (median)")
speedup = tpu_course.measure.ratios(epoch_seconds)["8 step(s) per call"]
print(f"8 steps per call: {speedup:.2f}× the speed of 1 step per call")
assert speedup > 0

# %% [markdown]
# Look for the 8-steps bar to be lower: the same work with fewer calls from Python. On a TPU
# the saving per call is larger, because each call also crosses from the host to the chip.
# The ratio here says nothing about TPU speed, only about the shape of the effect.
#
# On the fallback, then, Keras `fit` runs replicated, but one step per call. The next
# notebook writes the training loop itself, with several steps inside one `tf.function`,
# which works on the fallback and on a TPU alike.

# %% [markdown]
# ## Wrap-up
#
# You can now:
# - say what each step of the TPUStrategy lifecycle does, which one fails off a TPU, and why it runs once per program;
# - create the model, the built optimizer and the metrics inside `strategy.scope()`, and check it with `variable_created_in_scope`;
# - recognise the loud errors (`colocate_vars_with`, `Need to be inside`, `Mixing different tf.distribute.Strategy objects`, the placeholder error) and the silent one (an optimizer counting replicas × steps);
# - run a replicated step with `strategy.run` inside `tf.function`, and read it with `experimental_local_results` and `reduce`;
# - train with Keras under a strategy, and know what `steps_per_execution` buys and where it fails on the fallback.
#
# **Check your understanding**
# 1. On a Cloud TPU VM, which of the four lifecycle steps actually talks to the TPU, and which does nothing? What happens if a second notebook cell runs the lifecycle again?
# 2. An optimizer created outside the scope trains without an error on the fallback. How would you notice, and what would you check in code?
# 3. Each replica returns `tf.nn.compute_average_loss(..., global_batch_size=64)`. Why is `SUM`, not `MEAN`, the right reduction to get the batch's mean loss?
# 4. Why does `steps_per_execution` matter more on a TPU than on the CPU here?
#
# **Further reading**
# - [Use TPUs](https://www.tensorflow.org/guide/tpu) (TensorFlow guide) and [Distributed training with TensorFlow](https://www.tensorflow.org/guide/distributed_training)
# - [`tf.distribute.TPUStrategy`](https://www.tensorflow.org/api_docs/python/tf/distribute/TPUStrategy) and [`tf.distribute.Strategy.scope`](https://www.tensorflow.org/api_docs/python/tf/distribute/Strategy#scope)
# - [Custom training with tf.distribute.Strategy](https://www.tensorflow.org/tutorials/distribute/custom_training) (`compute_average_loss`, the replicated step)
# - [Cloud TPU: run TensorFlow on a TPU VM](https://cloud.google.com/tpu/docs/run-calculation-tensorflow)
