# ---
# jupyter:
#   course:
#     minutes: 25
#     summary: What compiling for a TPU means; XLA and jit_compile; ops that cannot compile; reading HLO and fusion; what compiling buys, measured; static shapes, in functions and in tf.data.
# ---

# %% [markdown]
# # Compiling for a TPU: XLA, fusion and static shapes
#
# A TPU runs nothing op by op: every step you send it is first compiled, as a whole, by the
# XLA compiler. That one fact explains most of what is different about TPU code: some
# operations cannot run on the chip, a chain of small operations can become one fast loop, and a batch
# of a new shape means a new compilation. This notebook shows each of these on the machine
# in front of you, because `tf.function(jit_compile=True)` asks TensorFlow for the same XLA
# compilation on a CPU or GPU.
#
# **You will learn to**
# - say what XLA is, and demand it with `tf.function(jit_compile=True)` to find code that cannot run on a TPU's cores;
# - read the HLO program XLA compiles, and see operations fused into one;
# - measure what compiling buys (and when it does not), as ratios on this machine;
# - keep shapes static: count compilations, mask instead of filter, and batch with `drop_remainder=True` or padding.
#
# **Time:** about 25 minutes. **Prerequisites:** `00_start_here`; `tf.function` and tracing
# (module `01_assignment`).

# %% [markdown]
# ## 1. XLA, and asking for it
#
# [XLA](https://openxla.org/xla) (Accelerated Linear Algebra) is a compiler for machine learning
# programs. TensorFlow hands it a whole graph, translated into XLA's own program format, HLO;
# XLA optimises that program for one target (TPU, GPU or CPU) and emits machine code for it
# ([TensorFlow: XLA](https://www.tensorflow.org/xla)). A TPU has no other way in: "TensorFlow
# models for Cloud TPU are translated to an XLA graph, which XLA then compiles to a TPU
# executable" ([Cloud TPU performance guide](https://cloud.google.com/tpu/docs/performance-guide)).
#
# TensorFlow can run your Python function in three ways:
#
# | How | What runs | Compiled by XLA? |
# |---|---|---|
# | eagerly | one TensorFlow kernel per operation, called from Python | no |
# | `tf.function(f)` | a graph of TensorFlow kernels | no on a CPU or GPU; on a TPU, the step run by `strategy.run` is |
# | `tf.function(f, jit_compile=True)` | one program compiled by XLA | yes, on any device, or an error |
#
# `jit_compile=True` *demands* compilation
# ([`tf.function`](https://www.tensorflow.org/api_docs/python/tf/function)): the whole function
# is compiled, or the call fails. Compiled, it computes the same values:

# %%
def wave(x):
    return tf.sin(x * 2.0 + 1.0) * tf.exp(-x)


compiled_wave = tf.function(wave, jit_compile=True)
x = tf.linspace(0.0, 1.0, 5)
print("eager:   ", np.round(wave(x).numpy(), 3))
print("compiled:", np.round(compiled_wave(x).numpy(), 3))
assert np.allclose(wave(x), compiled_wave(x), atol=1e-6)

# %% [markdown]
# An operation XLA has no kernel for makes the whole call fail, with an error that names it.
# Strings and Python code are the usual culprits:

# %%
import re


def unsupported_op(error):
    """The op an XLA 'Detected unsupported operations' error names."""
    return re.search(r"on XLA_\w+: (\w+)", str(error)).group(1)


def mean_as_text(x):
    return tf.strings.as_string(tf.reduce_mean(x))


def doubled_in_python(x):
    return tf.py_function(lambda values: values * 2.0, [x], tf.float32)


for function in (mean_as_text, doubled_in_python):
    try:
        tf.function(function, jit_compile=True)(x)
    except tf.errors.InvalidArgumentError as error:
        print(f"{function.__name__}: {type(error).__name__}: "
              f"Detected unsupported operations: {unsupported_op(error)}")

# %% [markdown]
# `AsString` is `tf.strings.as_string`, `EagerPyFunc` is `tf.py_function`. Without
# `jit_compile=True`, both run on the CPU without complaint. In a TPU step they cannot run
# on the TPU either. TensorFlow's default there is not an error but a detour: with soft device
# placement on, as it is unless you turn it off, `TPUStrategy` enables *automatic outside
# compilation*, and "ops without XLA kernels will be automatically placed on CPU", the host's
# CPU (the log message in
# [tensorflow/python/tpu/tpu.py](https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/tpu/tpu.py)).
# The step then runs, but stops for a round trip to the host each time (the planned module
# 04_outside_compilation is about that detour). The setting, here:

# %%
print("soft device placement:", tf.config.get_soft_device_placement())

# %% [markdown]
# So to find the ops that would leave the TPU, on any machine, wrap the step in
# `tf.function(jit_compile=True)` and call it once: there, they are errors.
#
# > **Myth:** Keras compiles your model with XLA unless you say otherwise, so a Keras model
# > that trains on the CPU has been checked for XLA. (Its docstring says `"auto"` "enables XLA
# > compilation if the model supports it".) **Fact:** Keras 3's default,
# > `compile(jit_compile="auto")`, turns XLA *off* on a machine without an accelerator, and
# > whenever a distribution strategy was in scope when the model was made (see
# > `_resolve_auto_jit_compile` in
# > [keras/src/trainers/trainer.py](https://github.com/keras-team/keras/blob/master/keras/src/trainers/trainer.py)).
# > On a TPU that costs nothing, because the TPU strategy compiles the step anyway; on the
# > CPU fallback it means nothing was compiled.

# %% tags=["nbval-ignore-output"]
def tiny_model():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")  # jit_compile="auto", the default
    return model


accelerators = [device.device_type for device in tf.config.list_physical_devices()
                if device.device_type != "CPU"]
print("accelerators on this machine:", accelerators)
print("jit_compile, model made outside the strategy:", tiny_model().jit_compile)
with strategy.scope():
    print("jit_compile, model made in strategy.scope(): ", tiny_model().jit_compile)
if not accelerators:
    assert tiny_model().jit_compile is False

# %% [markdown]
# On the CPU fallback both lines say `False`. Pass `jit_compile=True` to `compile` when you
# want Keras to compile on a CPU or GPU.

# %% [markdown]
# ## 2. Read what XLA compiles: HLO, and fusion
#
# `experimental_get_compiler_ir(x)` on a jit-compiled function returns the program XLA gets
# for an input like `x`, as text. `stage="hlo"` is the program as TensorFlow wrote it;
# `stage="optimized_hlo"` is what XLA made of it. The HLO of `wave`, first lines:

# %% tags=["nbval-ignore-output"]
hlo = compiled_wave.experimental_get_compiler_ir(x)(stage="hlo")
without_metadata = re.sub(r", metadata=\{[^}]*\}", "", hlo)
print("\n".join(without_metadata.splitlines()[:8]))


# %% [markdown]
# Each line is one operation: a name, a result type such as `f32[5]` (five float32 numbers,
# a shape fixed in the program), the operation and its operands. The arithmetic ops of the
# ENTRY computation, the program's main function, in order:

# %%
def entry_ops(hlo_text):
    """The operations of an HLO module's ENTRY computation, in order."""
    entry = hlo_text.split("\nENTRY ", 1)[1].split("\n}", 1)[0]
    return re.findall(r"= .*? ([a-z][\w-]*)\(", entry)


PLUMBING = {"parameter", "constant", "broadcast", "reshape", "tuple", "get-tuple-element"}
print([op for op in entry_ops(hlo) if op not in PLUMBING])

# %% [markdown]
# One HLO op per TensorFlow op: `x * 2.0` is `multiply`, `tf.sin` is `sine`, `-x` is
# `negate`. Now what XLA made of it:

# %% tags=["nbval-ignore-output"]
optimized = compiled_wave.experimental_get_compiler_ir(x)(stage="optimized_hlo")
fused_part = optimized.split("\nENTRY ", 1)[0]
fused_ops = re.findall(r"= .*? ([a-z][\w-]*)\(", fused_part)
print("ENTRY now runs:      ", entry_ops(optimized))
print("inside the fusion:   ", [op for op in fused_ops if op not in PLUMBING])
print(re.search(r"fusion\(.*?kind=\w+", optimized).group(0))
assert "fusion" in entry_ops(optimized) and {"sine", "exponential"} <= set(fused_ops)

# %% [markdown]
# The six arithmetic operations became **one** `fusion`: one loop that reads `x` once, does
# all the arithmetic per element, and writes one result (`kind=kLoop`). Run op by op, each
# operation would write its full-size result to memory for the next one to read back.
# Fusion is the main thing XLA buys on chains like this one, which spend their time moving
# data rather than computing. The next section measures it.

# %% [markdown]
# ## 3. What compiling buys, measured
#
# A polynomial evaluated by Horner's rule is a chain of 18 elementwise operations (multiply,
# add, multiply, add, ...). On a million numbers, run three ways, on **one device** (with a
# `MirroredStrategy` over several devices, as on the CPU fallback, `jit_compile=True` around
# `strategy.run` fails once variables are involved: section 6):

# %%
COEFFICIENTS = [0.3, -0.5, 0.2, 1.1, -0.7, 2.0, 0.3, -1.0, 0.5]


def polynomial(x):
    value = tf.zeros_like(x)
    for coefficient in COEFFICIENTS:
        value = value * x + coefficient
    return value


values = tf.random.uniform([1_000_000], -1.0, 1.0)
graph_polynomial = tf.function(polynomial)
compiled_polynomial = tf.function(polynomial, jit_compile=True)
results = [f(values).numpy() for f in (polynomial, graph_polynomial, compiled_polynomial)]
print("same values all three ways:", all(np.allclose(r, results[0], rtol=1e-5, atol=1e-5) for r in results))

# %% tags=["nbval-ignore-output"]
timings = {
    "eager": tpu_course.measure.time_calls(polynomial, values, repeats=60),
    "tf.function": tpu_course.measure.time_calls(graph_polynomial, values, repeats=60),
    "jit_compile=True": tpu_course.measure.time_calls(compiled_polynomial, values, repeats=60),
}
figure = tpu_course.measure.bar_chart(timings, "Horner's rule on 1M numbers, on this machine")
for label, ratio in tpu_course.measure.ratios(timings).items():
    print(f"{label:17s} {ratio:5.2f}× the speed of eager")
assert all(t > 0 for seconds in timings.values() for t in seconds)

# %% [markdown]
# Look at the last bar. Eager runs each of the 18 operations as its own TensorFlow kernel,
# called from Python, each writing a full array; `tf.function` runs the same kernels from a
# graph, without Python in between; XLA runs one fused loop. Each bar is the median of many
# calls. On the 2-core CPU this course was tested on, the fused, compiled chain was several
# times faster than eager in every run, while the `tf.function` bar moved from run to run.
# Your ratios are this machine's, and say nothing about a TPU's.
#
# > **Myth:** `jit_compile=True` always makes code faster. **Fact:** XLA removes per-op
# > overhead and fuses, but its code for a given operation can be slower than TensorFlow's
# > hand-written kernel. Measure. Here is a chain of sines and cosines, the same three ways:

# %% tags=["nbval-ignore-output"]
def trigonometry(x):
    for _ in range(3):
        x = tf.sin(x) + tf.cos(x)
    return x


graph_trigonometry = tf.function(trigonometry)
compiled_trigonometry = tf.function(trigonometry, jit_compile=True)
assert np.allclose(compiled_trigonometry(values), trigonometry(values), atol=1e-5)
graph_trigonometry(values)
timings = {
    "eager": tpu_course.measure.time_calls(trigonometry, values, repeats=30),
    "tf.function": tpu_course.measure.time_calls(graph_trigonometry, values, repeats=30),
    "jit_compile=True": tpu_course.measure.time_calls(compiled_trigonometry, values, repeats=30),
}
figure = tpu_course.measure.bar_chart(timings, "sin + cos, three times, on 1M numbers")
for label, ratio in tpu_course.measure.ratios(timings).items():
    print(f"{label:17s} {ratio:5.2f}× the speed of eager")

# %% [markdown]
# On the 2-core CPU this course was tested on, the compiled chain was *slower* than eager in
# every run: there, XLA's CPU code for sine and cosine ran slower than TensorFlow's kernels.
# On a TPU the choice does not arise (the step is always compiled), but on a CPU or GPU,
# compile where the measurement says so.

# %% [markdown]
# ## 4. A new shape is a new program
#
# XLA compiles for **concrete shapes**: every `f32[...]` in the HLO above is a fixed size.
# So a jit-compiled function called with a batch of a shape it has not seen is traced and
# compiled again. `experimental_get_tracing_count()` counts the traces:

# %%
@tf.function(jit_compile=True)
def normalise_rows(batch):
    return batch / tf.norm(batch, axis=1, keepdims=True)


traces = []
for rows in (8, 16, 8, 24, 16, 8):
    normalise_rows(tf.ones([rows, 128]))
    traces.append(normalise_rows.experimental_get_tracing_count())
print("batch sizes:      ", [8, 16, 8, 24, 16, 8])
print("traces after each:", traces)

# %% [markdown]
# Three shapes, three traces, three compilations; a shape seen before reuses its program.
#
# > **Myth:** if `experimental_get_tracing_count()` stays flat, nothing is recompiled.
# > **Fact:** `reduce_retracing=True` (or an `input_signature` with `None`) lets one trace
# > serve every batch size, but XLA still compiles a program for each concrete shape.

# %%
relaxed_normalise = tf.function(normalise_rows.python_function, jit_compile=True, reduce_retracing=True)
traces = []
for rows in (8, 16, 24, 32, 40):
    relaxed_normalise(tf.ones([rows, 128]))
    traces.append(relaxed_normalise.experimental_get_tracing_count())
print("traces after each:", traces)
print(relaxed_normalise.get_concrete_function(tf.ones([40, 128])).structured_input_signature[0][0])

# %% [markdown]
# After the second shape, the one trace has a `None` batch dimension, and the count stays at 2.
# The time of each call tells the rest: below, first calls at new shapes with a fresh trace,
# first calls at new shapes that reuse the trace, and calls at a shape seen before.

# %% tags=["nbval-ignore-output"]
def first_and_repeated_calls(function, row_counts):
    first, repeated = [], []
    for rows in row_counts:
        batch = tf.random.normal([rows, 128])
        first += tpu_course.measure.time_calls(function, batch, repeats=1)
        repeated += tpu_course.measure.time_calls(function, batch, repeats=5)
    return first, repeated


strict = tf.function(normalise_rows.python_function, jit_compile=True)
new_shape_traced, seen_shape = first_and_repeated_calls(strict, (48, 56, 64))
relaxed = tf.function(normalise_rows.python_function, jit_compile=True, reduce_retracing=True)
relaxed(tf.ones([1, 128]))
relaxed(tf.ones([2, 128]))  # the second shape makes it trace with a None batch dimension
new_shape_same_trace, _ = first_and_repeated_calls(relaxed, (48, 56, 64))
print("traces of the relaxed function:", relaxed.experimental_get_tracing_count())
timings = {"new shape, new trace": new_shape_traced,
           "new shape, same trace": new_shape_same_trace,
           "shape seen before": seen_shape}
figure = tpu_course.measure.bar_chart(timings, "One jit-compiled function, batches of new and seen shapes")
median = tpu_course.measure.median
assert relaxed.experimental_get_tracing_count() == 2
assert median(new_shape_same_trace) > 2 * median(seen_shape)

# %% [markdown]
# The first two bars are both tall: compiling, not tracing, is the cost, and a new shape pays
# it whatever the trace count says. The bigger the program, the longer XLA takes, and a real
# model's training step is far bigger than this function: a stream of batch shapes is a stream
# of compilations.
#
# ### Shapes that depend on the data
#
# Some operations make a shape that depends on the *values*: `tf.boolean_mask` keeps the
# elements where a condition holds, so how many come out is known only at run time. XLA
# compiles it here only by giving the result a *bound*: look at the result type of the
# compiled program, `<=8` means "at most 8".

# %%
def positive_values(x):
    return tf.boolean_mask(x, x > 0)


batch = tf.constant([[1.0, -2.0, 3.0, 0.0], [0.5, 0.5, -1.0, 4.0]])
compiled_positive_values = tf.function(positive_values, jit_compile=True)
print(compiled_positive_values(batch).numpy())
result_type = re.search(r"ENTRY .*-> (\S+) \{", compiled_positive_values.experimental_get_compiler_ir(batch)()).group(1)
print("compiled result type:", result_type)
print("set-dimension-size in the HLO:", "set-dimension-size" in compiled_positive_values.experimental_get_compiler_ir(batch)())


# %% [markdown]
# The program computes the real length at run time and attaches it to the result
# (`set-dimension-size` in the HLO), while the result's type reserves room for the bound. Other
# data-dependent shapes are simply refused. A ragged result, one list per row, is:

# %%
def positive_values_per_row(x):
    return tf.reduce_sum(tf.ragged.boolean_mask(x, x > 0), axis=1)


try:
    tf.function(positive_values_per_row, jit_compile=True)(batch)
except tf.errors.InvalidArgumentError as error:
    print(type(error).__name__, "...", re.search(r"must be a compile-time constant", str(error)).group(0))

# %% [markdown]
# The way out is to keep the shape and **mask** instead of selecting: compute on every
# element, and zero out (or weight by 0) the ones that do not count. `tf.where(condition,
# x, 0.0)` has the shape of `x`, whatever the values:

# %%
def zero_the_rest(x):
    return tf.where(x > 0, x, 0.0)


masked = tf.function(zero_the_rest, jit_compile=True)
print(masked(batch).numpy())
print("compiled result type:", re.search(r"ENTRY .*-> (\S+) \{", masked.experimental_get_compiler_ir(batch)()).group(1))

# %% [markdown]
# Masking also makes a much smaller program: selecting needs XLA to work out where each kept
# value goes (a gather and a scatter) and to carry a size known only at run time. The number
# of HLO operations in each program:

# %% tags=["nbval-ignore-output"]
selecting_ops = entry_ops(compiled_positive_values.experimental_get_compiler_ir(batch)())
masking_ops = entry_ops(masked.experimental_get_compiler_ir(batch)())
print(f"boolean_mask: {len(selecting_ops)} ops, tf.where: {len(masking_ops)} ops")
print("boolean_mask uses:", sorted(set(selecting_ops) - PLUMBING))
assert len(selecting_ops) > len(masking_ops)
assert {"gather", "scatter", "set-dimension-size"} <= set(selecting_ops)
assert not {"gather", "scatter", "set-dimension-size"} & set(masking_ops)


# %% [markdown]
# ### Exercise 2.1: make it compile, with static shapes
#
# Here is a function someone wrote for the CPU: for each row of a batch, the mean of its
# positive values (0 for a row with none). It calls NumPy through `tf.numpy_function`, so XLA
# refuses it:

# %%
def mean_of_positives_on_host(x):
    """For each row of x, the mean of its values > 0; 0 for a row with none. Runs NumPy."""
    def numpy_rows(rows):
        return np.array([row[row > 0].mean() if (row > 0).any() else 0.0 for row in rows], np.float32)
    return tf.numpy_function(numpy_rows, [x], tf.float32)


print("on the host:", mean_of_positives_on_host(batch).numpy())
try:
    tf.function(mean_of_positives_on_host, jit_compile=True)(batch)
except tf.errors.InvalidArgumentError as error:
    print("compiled:   ", type(error).__name__, "Detected unsupported operations:", unsupported_op(error))

# %% [markdown]
# Write `mean_of_positives(x)` with TensorFlow ops only, for `x` of shape `[rows, columns]`
# (float32), returning shape `[rows]`, and set `compiled_mean_of_positives` to it compiled
# with `tf.function(..., jit_compile=True)`. Keep every shape static: the checker reads your
# compiled HLO and refuses a data-dependent shape (`<=`) even when the values are right.
# It tries rows with no positive value, rows with only positive values, zeros, and other
# numbers of columns.

# %%
def mean_of_positives(x):
    """For each row of x, the mean of its values > 0; 0 for a row with none."""
    # BEGIN SOLUTION
    positive = x > 0
    total = tf.reduce_sum(tf.where(positive, x, 0.0), axis=-1)
    count = tf.reduce_sum(tf.cast(positive, tf.float32), axis=-1)
    return tf.math.divide_no_nan(total, count)
    # END SOLUTION


# BEGIN SOLUTION
compiled_mean_of_positives = tf.function(mean_of_positives, jit_compile=True)
# END SOLUTION

# %%
check.ex_2_1(compiled_mean_of_positives)

# %% [markdown]
# ## 5. Static shapes in the input pipeline
#
# Most shapes come from the data. `Dataset.batch(4)` on 10 examples gives batches of 4, 4
# and then 2, and its `element_spec`, the shape every batch is promised to have, says
# `None` for the batch dimension. `drop_remainder=True` drops the short last batch and makes
# the dimension a fixed 4
# ([`tf.data.Dataset.batch`](https://www.tensorflow.org/api_docs/python/tf/data/Dataset#batch)):

# %%
examples = tf.data.Dataset.range(10).map(lambda i: tf.fill([3], tf.cast(i, tf.float32)))
print("batch(4):                     ", examples.batch(4).element_spec)
print("batch(4, drop_remainder=True):", examples.batch(4, drop_remainder=True).element_spec)
print("batch sizes, batch(4):", [int(b.shape[0]) for b in examples.batch(4)])


# %% [markdown]
# For a compiled step, that short batch is one more shape, so one more program to compile
# (once: later epochs reuse it):

# %%
def traces_in_one_epoch(dataset):
    @tf.function(jit_compile=True)
    def step(batch):
        return tf.reduce_sum(batch * batch)

    for batch in dataset:
        step(batch)
    return step.experimental_get_tracing_count()


print("batch(4):                     ", traces_in_one_epoch(examples.batch(4)), "traces")
print("batch(4, drop_remainder=True):", traces_in_one_epoch(examples.batch(4, drop_remainder=True)), "trace")

# %% [markdown]
# Distributed over replicas, the same holds per replica. Below, a global batch of 2 examples
# per replica, on a dataset whose last batch is short: without `drop_remainder`, each
# replica's batch dimension is `None`, and in the last step some replicas get fewer
# examples or none at all.

# %%
replicas = strategy.num_replicas_in_sync
uneven = tf.data.Dataset.range(4 * replicas + 3).map(lambda i: tf.fill([3], tf.cast(i, tf.float32)))
specs = {}
for drop in (False, True):
    distributed = strategy.experimental_distribute_dataset(uneven.batch(2 * replicas, drop_remainder=drop))
    specs[drop] = distributed
    per_replica_specs = set(tf.nest.flatten(distributed.element_spec, expand_composites=True))
    print(f"drop_remainder={drop!s:5}: every replica gets {per_replica_specs}")

# %% tags=["nbval-ignore-output"]
last_step = list(specs[False])[-1]
sizes = [int(t.shape[0]) for t in strategy.experimental_local_results(last_step)]
print("last step without drop_remainder, examples per replica:", sizes)
assert sum(sizes) == 3 or strategy.num_replicas_in_sync == 1  # the default strategy does not split

# %% [markdown]
# > **Myth:** `TPUStrategy` cannot run a batch whose size is unknown, so
# > `drop_remainder=True` is mandatory. **Fact:** by default `TPUStrategy.run` accepts a
# > dynamic batch dimension and pads it, through XLA's dynamic padder; an option to bucket
# > shapes exists "to reduce XLA recompilation"
# > ([`tf.distribute.RunOptions`](https://www.tensorflow.org/api_docs/python/tf/distribute/RunOptions)).
# > So it runs, but each new shape can cost a compilation and the padding costs work. Static
# > shapes compile once. (The [TPU guide](https://www.tensorflow.org/guide/tpu) repeats its
# > training data "to avoid the potential last partial batch", for another reason: the loss
# > scaling stays right. The [performance guide](https://cloud.google.com/tpu/docs/performance-guide)
# > adds batch and feature sizes that XLA does not have to pad.) The defaults, as documented:

# %%
print(tf.distribute.RunOptions())

# %% [markdown]
# ### When the examples have different lengths
#
# Sequences (sentences, events, time series) have their own length, so even a fixed batch
# size leaves a `None`. `padded_batch` pads each batch to its longest sequence: every batch
# a different width, every width a compilation. Give it fixed `padded_shapes`, after cutting
# longer sequences, and every batch has the same shape:

# %%
lengths = tf.constant([3, 1, 4, 1, 5, 9, 2, 6])
sequences = tf.data.Dataset.range(8).map(lambda i: tf.range(1, lengths[i] + 1))
print("sequences:          ", sequences.element_spec)
print("padded_batch(3):    ", sequences.padded_batch(3).element_spec,
      [tuple(b.shape) for b in sequences.padded_batch(3)])
fixed = sequences.map(lambda s: s[:6]).padded_batch(3, padded_shapes=[6], drop_remainder=True)
print("cut to 6, padded to 6, remainder dropped:", fixed.element_spec)
print(next(iter(fixed)).numpy())

# %% [markdown]
# Dropping the last batch is fine for training on shuffled, repeated data. For evaluation,
# where every example must count, **pad the last batch** with filler examples of weight 0,
# and weight the metric:

# %%
weighted = examples.map(lambda features: (features, 1.0))
missing = -examples.cardinality() % 4  # filler examples that complete the last batch of 4
filler = tf.data.Dataset.from_tensors((tf.zeros([3]), 0.0)).repeat(missing)
padded_epoch = weighted.concatenate(filler).batch(4, drop_remainder=True)
print(padded_epoch.element_spec)
total = sum(float(tf.reduce_sum(f[:, 0] * w)) for f, w in padded_epoch)
count = sum(float(tf.reduce_sum(w)) for _, w in padded_epoch)
print("weights of the last batch:", list(padded_epoch)[-1][1].numpy(), " mean over real examples:", total / count)


# %% [markdown]
# The mean is that of the 10 real examples (0 to 9), and every batch has the shape `(4, 3)`.
#
# ### Exercise 2.2: a TPU-friendly dataset
#
# Write `tpu_friendly(dataset, batch_size, length)`. `dataset` yields 1-D int32 sequences of
# different lengths (`element_spec` shape `(None,)`). Return a dataset of batches of shape
# exactly `(batch_size, length)`, as its `element_spec` must say: each sequence cut to its
# first `length` values, or padded with zeros at the end; the order kept; a last, incomplete
# batch dropped. The checker tries long and short sequences, empty ones, an exact multiple of
# the batch size, and fewer sequences than one batch.

# %%
def tpu_friendly(dataset, batch_size, length):
    """Batches of shape exactly (batch_size, length): cut or zero-padded, in order, remainder dropped."""
    # BEGIN SOLUTION
    cut = dataset.map(lambda sequence: sequence[:length])
    return cut.padded_batch(batch_size, padded_shapes=[length], drop_remainder=True)
    # END SOLUTION


# %%
check.ex_2_2(tpu_friendly)

# %% [markdown]
# ## 6. Errors you will meet
#
# | Message (key phrase) | Cause | Fix |
# |---|---|---|
# | `InvalidArgumentError: Detected unsupported operations ... : StringFormat` (or `EagerPyFunc`, `PyFunc`, `AsString`, ...) | an op with no XLA kernel in a function compiled with `jit_compile=True` | rewrite with TensorFlow ops; move string and Python work into `tf.data` or after the step |
# | `InvalidArgumentError: ... must be a compile-time constant` | a shape computed from the values that XLA cannot bound (a ragged result, for one) | static shapes: mask with `tf.where` instead of selecting |
# | `ValueError: Compiler IR can only be returned for functions marked with 'jit_compile=True'` | `experimental_get_compiler_ir` on a plain `tf.function` | add `jit_compile=True` |
# | `DataLossError: Attempted to pad to a smaller size than the input element` | `padded_batch` with fixed `padded_shapes` shorter than an element | cut the sequences first: `map(lambda s: s[:length])` |
# | `InvalidArgumentError: Trying to access resource ... located in device CPU:1 from device CPU:0` | a compiled function that reads or writes a variable on another device: `jit_compile=True` around `strategy.run`, with a `MirroredStrategy` over several devices (the CPU fallback's, or several GPUs); "XLA cluster runs on exactly one device" ([XLA known issues](https://www.tensorflow.org/xla/known_issues#tfvariable_on_a_different_device)) | do not wrap `strategy.run` in `jit_compile=True`; for XLA under `MirroredStrategy`, compile the per-replica computation as a function of tensors, and read and update the variables outside it; on a TPU the replicated step is compiled anyway |
#
# The first two appeared above. The others, reproduced:

# %%
def show_error(action, phrase, label=""):
    """Run `action`; print `label`, the error's type and `phrase` if its message holds it."""
    try:
        action()
    except Exception as error:
        shown = phrase if phrase in str(error) else str(error).splitlines()[0][:100]
        print(f"{label}{type(error).__name__}: ...{shown}...")
    else:
        print(f"{label}no error")


show_error(lambda: graph_polynomial.experimental_get_compiler_ir(values)(),
           "Compiler IR can only be returned for functions marked with 'jit_compile=True'")
show_error(lambda: list(sequences.padded_batch(3, padded_shapes=[6])),
           "Attempted to pad to a smaller size than the input element")

# %% [markdown]
# The last one needs a `MirroredStrategy` over several devices, as on the CPU fallback (the
# cell below checks which strategy it has). One compiled program runs on one device, and the
# replicas' copies of a mirrored variable live on several. Compiling the function passed to
# `strategy.run` does not help here either, as long as it touches the variable. What works is
# to compile only the arithmetic, a function of tensors, and to read and update the variable
# around it, in the replica function:

# %% tags=["nbval-ignore-output"]
if isinstance(strategy, tf.distribute.MirroredStrategy) and strategy.num_replicas_in_sync > 1:
    with strategy.scope():
        counter = tf.Variable(0.0)

    def count():
        return counter.assign_add(1.0)

    show_error(tf.function(lambda: strategy.run(count), jit_compile=True),
               "Trying to access resource", "jit_compile=True around strategy.run:     ")
    compiled_count = tf.function(count, jit_compile=True)
    show_error(tf.function(lambda: strategy.run(compiled_count)),
               "Trying to access resource", "jit_compile=True on the replica function: ")

    @tf.function(jit_compile=True)
    def plus_one(value):  # tensors in, tensors out: no variable inside
        return value + 1.0

    @tf.function
    def replicated_step():
        def count_with_compiled_arithmetic():
            return counter.assign(plus_one(counter.read_value()))
        return strategy.run(count_with_compiled_arithmetic)

    replicated_step()
    copies = [float(copy) for copy in strategy.experimental_local_results(counter)]
    print(f"compiled arithmetic, variable outside it: the counter's {len(copies)} copies:", set(copies))
    assert copies == [1.0] * strategy.num_replicas_in_sync
else:
    print(f"{type(strategy).__name__} with {strategy.num_replicas_in_sync} replica(s): not a MirroredStrategy over several devices, nothing to show")

# %% [markdown]
# ## Wrap-up
#
# You can now:
# - say what XLA is and why every TPU step goes through it;
# - find code that cannot run on a TPU's cores, on any machine, with `tf.function(jit_compile=True)`;
# - read a function's HLO with `experimental_get_compiler_ir`, and spot a fusion and a data-dependent (`<=`) shape;
# - measure what compiling buys as a ratio on the machine at hand, and know it can be below 1;
# - keep shapes static: mask instead of filtering, `drop_remainder=True`, fixed `padded_shapes`, or pad and weight the last batch.
#
# **Check your understanding**
# 1. A training step runs fine on your laptop. On a TPU it runs, but slowly, and the log says ops were placed on the CPU. What one change finds those ops on the laptop?
# 2. Why can fusing six elementwise operations into one loop make them faster, even though the arithmetic is the same?
# 3. Your jit-compiled step's trace count stays at 2 over the first epoch, yet many of its steps are slow. What could be compiling, and how would you check?
# 4. Why is `tf.where(x > 0, x, 0.0)` better for a TPU than `tf.boolean_mask(x, x > 0)`, even though both compile here?
# 5. When is dropping the last batch wrong, and what do you do instead?
#
# **Further reading**
# - [XLA on openxla.org](https://openxla.org/xla) and [XLA in TensorFlow](https://www.tensorflow.org/xla), with its [known issues](https://www.tensorflow.org/xla/known_issues)
# - [`tf.function`](https://www.tensorflow.org/api_docs/python/tf/function) (`jit_compile`, `reduce_retracing`, `experimental_get_compiler_ir`) and the [tf.function guide](https://www.tensorflow.org/guide/function) on tracing
# - [Use TPUs](https://www.tensorflow.org/guide/tpu) and the [Cloud TPU performance guide](https://cloud.google.com/tpu/docs/performance-guide)
# - [Distributed input](https://www.tensorflow.org/tutorials/distribute/input), on partial batches across replicas
