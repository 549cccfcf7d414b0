# ---
# jupyter:
#   course:
#     minutes: 30
#     summary: Tensors are immutable and variables are not; updating a tensor functionally; why TF1 Session snippets fail; what tf.function traces, when it traces again, and how to stop it.
# ---

# %% [markdown]
# # Tensors, variables and tracing
#
# On a TPU your step runs as one compiled program. TensorFlow gets that program by *tracing*
# your Python function into a graph, and a graph holds two kinds of things: values that never
# change (tensors) and state that does (variables). Several common surprises in TensorFlow
# code come from mixing these up: writing into a tensor as if it were a NumPy array,
# running a TensorFlow 1 snippet, expecting a `print` to fire every step, or retracing (and on a
# TPU, recompiling) on every call. This notebook sorts them out, each with a cell you can run.
#
# **You will learn to**
# - update a tensor *functionally* (`tf.where`, `tf.clip_by_value`, `tf.tensor_scatter_nd_update`), and tell when you need a `tf.Variable` instead;
# - recognise why a TensorFlow 1 `Session` snippet fails in TensorFlow 2, and write its TensorFlow 2 equivalent;
# - tell tracing from running: what `print` and `tf.print` show, and when;
# - predict when a `tf.function` traces again, count its traces, and stop needless retracing with tensors, `input_signature` or `reduce_retracing`.
#
# **Time:** about 30 minutes. **Prerequisites:** [00_start_here](../00_start_here/00_start_here.ipynb), and NumPy-style arrays.
# The next notebook of this module puts variables inside compiled functions, under control flow and under replication.

# %% [markdown]
# ## 1. Tensors cannot be changed; variables can
#
# A `tf.Tensor` is a value, like a Python number: you compute new tensors from it, you never
# write into it. So the NumPy habit of assigning to an element fails:

# %%
numbers = tf.constant([1, 2, 3])
try:
    numbers[0] = 10
except TypeError as error:
    print(f"{type(error).__name__}: {error}")

# %% [markdown]
# ### Pre-process the input, don't assign into it
#
# A common snippet cleans a batch in place, NumPy style: `batch[batch < 0] = 0`. Here is a batch
# with out-of-range values and a missing one (`nan`). NumPy writes into its array; a tensor
# refuses:

# %%
pixels = np.array([[0.2, -0.1, 1.3], [0.7, np.nan, -2.0]], dtype=np.float32)

cleaned_in_place = pixels.copy()
cleaned_in_place[cleaned_in_place < 0] = 0.0  # NumPy: writes into the array
print("NumPy, in place:\n", cleaned_in_place)

batch = tf.constant(pixels)
try:
    batch[batch < 0] = 0.0
except TypeError as error:
    print(f"TensorFlow: {type(error).__name__}: {error}")

# %% [markdown]
# A `TypeError` again, with a confusing message: given a mask as the index, Python first tries
# to turn it into one integer position and fails there, before it even finds out that a tensor
# cannot be written to. With an integer or a slice as the index, you get the plain "does not
# support item assignment".
#
# The TensorFlow 2 way computes a *new* tensor from the old one. `tf.where(condition, a, b)`
# takes `a` where the condition holds and `b` elsewhere; `tf.clip_by_value` clamps to a range.
# The input is left as it was:

# %%
def clean(images):
    """Missing values become 0, then everything is clamped to [0, 1]: a new tensor."""
    without_nan = tf.where(tf.math.is_nan(images), 0.0, images)
    return tf.clip_by_value(without_nan, 0.0, 1.0)


print("cleaned:\n", clean(batch).numpy())
print("batch, unchanged:\n", batch.numpy())

# %% [markdown]
# Because `clean` is a function from tensors to tensors, it drops straight into an input
# pipeline, which is where pre-processing belongs: `tf.data` runs it on the host, so the
# accelerator only sees clean batches.

# %%
dataset = tf.data.Dataset.from_tensor_slices(pixels).batch(2).map(clean)
for cleaned_batch in dataset:
    print(cleaned_batch.numpy())

# %% [markdown]
# To set chosen *positions* rather than values that match a condition, use
# `tf.tensor_scatter_nd_update(tensor, indices, updates)`. Despite the "update" in its name, it
# returns a new tensor:

# %%
scores = tf.constant([10, 20, 30, 40])
with_two_set = tf.tensor_scatter_nd_update(scores, indices=[[0], [2]], updates=[-1, -3])
print("new tensor:", with_two_set.numpy())
print("original:  ", scores.numpy())

# %% [markdown]
# ### Variables: state that persists
#
# A `tf.Variable` is the one thing you *do* change. It keeps its value between calls, which is
# what model weights, step counters and running statistics need. You change it through its
# methods (item assignment fails on it too): `assign` (a new value), `assign_add`, and
# `scatter_nd_update` (chosen positions), or `assign` on a slice.

# %%
weights = tf.Variable([1.0, 2.0, 3.0, 4.0])
before = tf.convert_to_tensor(weights)  # a tensor: the value as it is now

weights.assign([0.5, 0.5, 0.5, 0.5])
weights.assign_add([1.0, 0.0, 0.0, 0.0])
weights.scatter_nd_update(indices=[[3]], updates=[9.0])
weights[1].assign(-1.0)
print("variable now:  ", weights.numpy())
print("tensor before: ", before.numpy())

try:
    weights[0] = 1.0
except TypeError as error:
    print(f"{type(error).__name__}: {error}")

# %% [markdown]
# Which tool when?
#
# | You want | Use | You get |
# |---|---|---|
# | a value computed from the inputs: a cleaned batch, a masked loss, a result with some entries set | `tf.where`, `tf.clip_by_value`, `tf.tensor_scatter_nd_update`, arithmetic | a new tensor; the input is untouched |
# | state that must outlive the call: weights, a step counter, a running mean | a `tf.Variable`, created once, changed with `assign`, `assign_add`, `scatter_nd_update` | the same variable, with a new value |
#
# If the value is recomputed from the inputs on every call, it is a tensor. Reach for a variable
# only when the next call must see what this call left behind. How variables behave inside a
# compiled function and across replicas is the subject of the next notebook.

# %% [markdown]
# ### Exercise 1.1: replace negative values, functionally
#
# Write `replace_negatives(x, value)`: it returns a tensor like `x` (same shape, same dtype) in
# which every element strictly below zero is replaced by `value`, a Python number. No Python
# loops, and leave `x` as it is (it may be a `tf.Variable`). The checker tries several shapes
# and dtypes, a scalar and an empty tensor.

# %%
def replace_negatives(x, value):
    """x with its negative elements replaced by value; same shape and dtype, x untouched."""
    # BEGIN SOLUTION
    return tf.where(x < 0, value, x)
    # END SOLUTION


# %%
check.ex_1_1(replace_negatives)

# %% [markdown]
# ## 2. TensorFlow 1 `Session` snippets, in TensorFlow 2
#
# Much material still online was written for TensorFlow 1, where you first *built* a graph
# and then *ran* it in a session:
#
# ```python
# a = tf.constant(5.0)
# b = tf.constant(6.0)
# product = a * b
# sess = tf.Session()
# print(sess.run(product))
# ```
#
# In TensorFlow 2 the first three lines run; the `tf.Session()` line is the one that fails:

# %%
first_factor = tf.constant(5.0)
second_factor = tf.constant(6.0)
product = first_factor * second_factor
try:
    session = tf.Session()
except AttributeError as error:
    print(f"{type(error).__name__}: {error}")

# %% [markdown]
# > **Myth:** "Replace `tf.Session()` with `tf.compat.v1.Session()` and the snippet runs in
# > TensorFlow 2." **Fact:** TensorFlow 2 runs operations *eagerly*: `first_factor * second_factor`
# > was computed on the spot, and nothing was added to any graph. The session has nothing to run.

# %%
try:
    with tf.compat.v1.Session() as session:
        session.run(product)
except RuntimeError as error:
    print(f"{type(error).__name__}: {error}")

# %% [markdown]
# You will also find online that calling `tf.compat.v1.disable_eager_execution()` first makes
# the snippet run. It does exist, but it must be called before anything else, before any graph,
# operation or tensor is created
# ([`tf.compat.v1.disable_eager_execution`](https://www.tensorflow.org/api_docs/python/tf/compat/v1/disable_eager_execution)),
# and it switches eager execution off for the whole program, not just for one snippet. So this
# notebook, which has already made tensors, cannot show it without restarting the kernel; and
# TensorFlow 2 code, TPU code included, does not use it: `tf.function` builds the graph instead.
#
# The TensorFlow 2 equivalents are shorter. A tensor already holds its value; a placeholder
# becomes a function argument; "build the graph once, run it many times" becomes `tf.function`;
# and variables need no initializer, they get their value when you create them
# ([Migrate to TensorFlow 2](https://www.tensorflow.org/guide/migrate)).
#
# | TensorFlow 1 | TensorFlow 2 |
# |---|---|
# | `sess.run(product)` | `product` (or `product.numpy()`) |
# | `fed_in = tf.placeholder(tf.float32, [None])`, `doubled = 2 * fed_in`, then `sess.run(doubled, feed_dict={fed_in: [1.0, 2.0]})` | `doubled_tf2(tf.constant([1.0, 2.0]))`, with `doubled_tf2` a `tf.function` whose argument replaces the placeholder (below) |
# | build a graph, run it in a `Session` | decorate the function with `@tf.function`, call it |
# | `sess.run(tf.global_variables_initializer())` | nothing: a variable is initialised on creation |

# %%
print("product:", product.numpy())


@tf.function
def doubled_tf2(values):
    return 2 * values


print("doubled:", doubled_tf2(tf.constant([1.0, 2.0])).numpy())
print("variable:", weights.numpy())

# %% [markdown]
# ## 3. `tf.function`: tracing, then running
#
# The first time you call a `tf.function`, TensorFlow runs your Python code once, with
# symbolic tensors that have a shape and a dtype but no value, and records every TensorFlow
# operation into a graph. That is *tracing*. Later calls with matching arguments skip the
# Python and run the graph. So Python side effects, like `print`, happen only while tracing;
# `tf.print` is an operation in the graph and runs on every call.

# %%
@tf.function
def double(x):
    print("print:    tracing, x is", x)
    tf.print("tf.print: running, x is", x)
    return 2 * x


for value in [1.0, 2.0, 3.0]:
    double(tf.constant(value))
print("traces:", double.experimental_get_tracing_count())

# %% [markdown]
# > **Myth:** "Put a `print` in your training step to see what happens at every step."
# > **Fact:** `print` is Python: it runs while tracing, once per trace, and shows a symbolic
# > tensor (`Tensor("x:0", shape=(), dtype=float32)`), not a value. Above, three calls printed
# > once; `tf.print` printed three times, with values.
#
# `experimental_get_tracing_count()` says how many traces a `tf.function` has made. A Python
# counter in the function body works too, because it only runs while tracing.

# %% [markdown]
# ### When does it trace again?
#
# A trace is kept for each kind of arguments it has seen, and a call whose arguments match
# one reuses it. What counts as "the same" differs
# ([Better performance with tf.function: rules of tracing](https://www.tensorflow.org/guide/function#rules_of_tracing)):
# - a **tensor** argument matches by dtype and shape; its values do not matter;
# - a **Python** argument (an int, a float, a string) matches by value: every new value is a new trace.

# %%
traces_by_python_counter = []


@tf.function
def add_one(x):
    traces_by_python_counter.append(1)  # Python: runs only while tracing
    return x + 1


calls = [
    ("Python int 1", 1),
    ("Python int 2", 2),
    ("Python int 1 again", 1),
    ("int32 tensor 5", tf.constant(5)),
    ("int32 tensor 6", tf.constant(6)),
    ("int32 vector, length 3", tf.constant([1, 2, 3])),
    ("int32 vector, length 4", tf.constant([1, 2, 3, 4])),
    ("float32 tensor 5.0", tf.constant(5.0)),
]
for label, argument in calls:
    traces_before = add_one.experimental_get_tracing_count()
    add_one(argument)
    traced = add_one.experimental_get_tracing_count() > traces_before
    print(f"{label:24} {'new trace' if traced else 'reused a trace'}")
print("traces:", add_one.experimental_get_tracing_count(), "| Python counter:", len(traces_by_python_counter))

# %% [markdown]
# > **Myth:** "TensorFlow converts Python numbers to tensors, so `step(x, 1)`, `step(x, 2)` …
# > compile once." **Fact:** Operations convert Python numbers; a plain `tf.function` does not. It keys
# > its traces on Python values, so a loop that passes `epoch` or `step` as a Python int traces
# > once per value, as the first two calls above did. Pass `tf.constant(step)` instead.

# %% [markdown]
# ### Measure it: the first call pays for the trace
#
# Time the first call of a fresh `tf.function` against the calls after it:

# %%
@tf.function
def small_step(x):
    return tf.reduce_sum(tf.tanh(x @ x))


x = tf.random.normal([64, 64])
first_call = tpu_course.measure.time_calls(small_step, x, repeats=1)
later_calls = tpu_course.measure.time_calls(small_step, x, repeats=30)
print("traces:", small_step.experimental_get_tracing_count())

# %% tags=["nbval-ignore-output"]
figure = tpu_course.measure.bar_chart({"first call (traces)": first_call, "later calls": later_calls},
                                      "One tf.function, on this machine")
slower = tpu_course.measure.median(first_call) / tpu_course.measure.median(later_calls)
print(f"The first call took {slower:.0f}× as long as the median later call.")
assert slower > 1

# %% [markdown]
# Now the cost of the myth above: ten calls that each pass a new Python int, against ten
# calls that pass the same numbers as tensors.

# %%
@tf.function
def times_python_number(x, factor):
    return x * factor


@tf.function
def times_tensor(x, factor):
    return x * factor


fresh_numbers = iter(range(1, 1000))
by_python_int = tpu_course.measure.time_calls(lambda: times_python_number(x, next(fresh_numbers)), repeats=10)
by_tensor = tpu_course.measure.time_calls(lambda: times_tensor(x, tf.constant(next(fresh_numbers), tf.float32)), repeats=10)
print("traces with Python ints:", times_python_number.experimental_get_tracing_count())
print("traces with tensors:    ", times_tensor.experimental_get_tracing_count())

# %% tags=["nbval-ignore-output"]
figure = tpu_course.measure.bar_chart({"tensor each call": by_tensor, "new Python int each call": by_python_int},
                                      "10 calls of x * factor, on this machine")
retrace_cost = tpu_course.measure.median(by_python_int) / tpu_course.measure.median(by_tensor)
print(f"A call that retraces took {retrace_cost:.0f}× as long as one that reuses its trace.")
assert retrace_cost > 1

# %% [markdown]
# ### Stop needless retracing
#
# Three tools, from the most to the least explicit:
# 1. **Pass tensors**, not Python numbers, for anything that changes between calls.
# 2. **`input_signature`**: declare the arguments up front as `tf.TensorSpec(shape, dtype)`; a
#    `None` in a shape accepts any size there. One trace; an argument that does not fit is an
#    error, not a silent retrace.
# 3. **`reduce_retracing=True`**: TensorFlow generalises by itself. When a second shape turns up,
#    it traces once more with the differing dimensions unknown, and reuses that trace.

# %%
def plus_one(x):
    return x + 1


with_signature = tf.function(plus_one, input_signature=[tf.TensorSpec([None], tf.int32)])
reducing = tf.function(plus_one, reduce_retracing=True)
plain = tf.function(plus_one)
for length in range(1, 7):
    vector = tf.range(length)
    for function in (with_signature, reducing, plain):
        function(vector)

print("6 vector lengths, traces:")
for name, function in [("input_signature", with_signature), ("reduce_retracing", reducing), ("plain", plain)]:
    print(f"  {name:17} {function.experimental_get_tracing_count()}")

try:
    with_signature(tf.constant([1.0, 2.0]))
except TypeError as error:  # the message goes on to list the arguments received
    print(f"{type(error).__name__}: {str(error).split('. Received args')[0]}")

# %% [markdown]
# ### Exercise 1.2: trace once
#
# `sum_of_powers` is called with 1-D float32 vectors of many lengths and with Python int
# powers. Wrapped in a plain `tf.function`, it traces again and again:

# %%
def sum_of_powers(values, power):
    """sum(values ** power) for a 1-D float32 vector and an integer power."""
    return tf.reduce_sum(values ** tf.cast(power, values.dtype))


plain_sum_of_powers = tf.function(sum_of_powers)
for length, power in [(3, 2), (5, 3), (4, 1)]:
    plain_sum_of_powers(tf.ones([length]), power)
print("traces for 3 calls:", plain_sum_of_powers.experimental_get_tracing_count())

# %% [markdown]
# Write `compile_once(function)`: it returns a `tf.function` of `function(values, power)` that
# traces **once** for all such calls: float32 vectors of any length (tensors, NumPy arrays,
# even empty ones), and powers given as Python ints. The checker calls what you return with
# several of them, compares the values, and counts the traces with
# `experimental_get_tracing_count()`. Return the `tf.function` itself, not a wrapper around it.

# %%
def compile_once(function):
    """A tf.function of function(values, power) that traces once for any vector length and int power."""
    # BEGIN SOLUTION
    return tf.function(function, input_signature=[tf.TensorSpec([None], tf.float32),
                                                  tf.TensorSpec([], tf.int32)])
    # END SOLUTION


# %%
check.ex_1_2(compile_once)

# %% [markdown]
# ### Why this matters more on a TPU
#
# On a CPU or GPU a trace costs some Python time, as measured above. On a TPU it costs more:
# code that runs on a TPU must be compiled by XLA, and TensorFlow programs for Cloud TPU are
# translated to an XLA graph that XLA compiles to a TPU executable
# ([Introduction to Cloud TPU](https://cloud.google.com/tpu/docs/intro-to-tpu);
# [Cloud TPU performance guide](https://cloud.google.com/tpu/docs/performance-guide)). Each new
# trace is a new graph, so on a TPU each retrace also means a new XLA compilation of your step
# before it can run. The guides say that tracing is expensive and how to control it
# ([tf.function guide: controlling retracing](https://www.tensorflow.org/guide/function#controlling_retracing)),
# and the [TPU guide](https://www.tensorflow.org/guide/tpu) runs its training step as a
# `tf.function` around `strategy.run`. This notebook cannot measure a TPU compilation on the
# CPU fallback: the cost is cited, not measured. What you can do anywhere is count traces, and
# keep the count at one per step function.

# %% [markdown]
# ### Explore: what makes it trace?
#
# Pick a kind of argument and call a traced function with it. Each call uses a new number, so
# Python ints and shapes are new on every call. Dtypes run out: "another dtype" cycles through
# five, so it soon brings back a dtype already seen; each line names the dtype and says whether
# that call traced again. First the explorer's logic, run once over every kind:

# %%
import itertools

ARGUMENT_KINDS = ["Python int", "tensor, same shape", "tensor, new shape", "tensor, another dtype"]
DTYPES = [tf.int32, tf.int64, tf.float16, tf.float64, tf.bfloat16]


def argument_of(kind, number):
    """An argument of `kind`; `number` makes Python values and shapes new on each call."""
    if kind == "Python int":
        return number
    if kind == "tensor, same shape":
        return tf.fill([3], float(number))
    if kind == "tensor, new shape":
        return tf.range(float(number))  # a float32 vector of length `number`
    return tf.cast(tf.fill([3], number), DTYPES[number % len(DTYPES)])


def label_of(kind, number):
    """The kind, with the dtype named for "tensor, another dtype"."""
    if kind == "tensor, another dtype":
        return f"tensor, {DTYPES[number % len(DTYPES)].name}"
    return kind


def call_with(function, kind, number):
    """Call `function` once; (did it trace again?, traces so far, seconds the call took)."""
    traces_before = function.experimental_get_tracing_count()
    seconds = tpu_course.measure.time_calls(function, argument_of(kind, number), repeats=1)[0]
    traces = function.experimental_get_tracing_count()
    return traces > traces_before, traces, seconds


explored = tf.function(lambda x: x * 2)
for number, kind in enumerate([kind for kind in ARGUMENT_KINDS for _ in range(2)], start=1):
    traced, traces, _ = call_with(explored, kind, number)
    print(f"{label_of(kind, number):19} {'new trace' if traced else 'reused a trace':15} traces so far: {traces}")

# %% [markdown]
# Now try it yourself, in any order. Watch the time of a call that traces against one that
# does not (each click is one call; the times are this machine's, and vary from run to run).

# %% tags=["nbval-ignore-output"]
import ipywidgets

explorer_calls = itertools.count(10)


def show_call(kind):
    number = next(explorer_calls)
    traced, traces, seconds = call_with(explored, kind, number)
    print(f"{label_of(kind, number)}: {'NEW TRACE' if traced else 'reused a trace'}; "
          f"traces so far: {traces}; this call took {1000 * seconds:.2f} ms on this machine")


show_call("tensor, same shape")
ipywidgets.interact_manual(show_call, kind=ipywidgets.Dropdown(options=ARGUMENT_KINDS));

# %% [markdown]
# ### Exercise 1.3: predict the traces
#
# Each sequence below defines a fresh `scale` and calls it. Predict, without running them, how
# many traces each one makes (its `experimental_get_tracing_count()` at the end).

# %%
tpu_course.exercises_tracing.print_sequences()

# %% [markdown]
# Write your predictions as `predicted_traces = {"A": ..., "B": ..., "C": ..., "D": ..., "E": ...}`,
# with a whole number for each. The checker runs the sequences and tells you the first
# prediction that is off.

# %%
# BEGIN SOLUTION
predicted_traces = {"A": 3, "B": 1, "C": 3, "D": 2, "E": 2}
# END SOLUTION
check.ex_1_3(predicted_traces)

# %% [markdown]
# Once you have checked, run the sequences yourself:

# %%
for name in tpu_course.exercises_tracing.SEQUENCES:
    print(name, tpu_course.exercises_tracing.actual_traces(name))

# %% [markdown]
# ## Wrap-up
#
# You can now:
# - update tensors functionally with `tf.where`, `tf.clip_by_value` and `tf.tensor_scatter_nd_update`, and keep `tf.Variable` (`assign`, `assign_add`, `scatter_nd_update`) for state that outlives a call;
# - explain why `tf.Session` snippets fail in TensorFlow 2 (no `tf.Session`; a `compat.v1` session has an empty graph) and write the eager or `tf.function` equivalent;
# - tell tracing from running, and use `tf.print` to see values at every call;
# - predict retracing, count it with `experimental_get_tracing_count()`, and stop it with tensors, `input_signature` or `reduce_retracing=True`.
#
# **Check your understanding**
# 1. Why does `tf.tensor_scatter_nd_update(t, ...)` leave `t` unchanged, while `v.scatter_nd_update(...)` changes `v`? When would you want each?
# 2. A training loop calls `train_step(batch, epoch)` with `epoch` a Python int. How many traces after 10 epochs, and what is the one-word fix?
# 3. Your `print` inside a `tf.function` shows `Tensor("x:0", ...)` once and never again. Why, and what do you use instead?
# 4. `input_signature=[tf.TensorSpec([None], tf.float32)]` and `reduce_retracing=True` both stop a function from tracing for every length. How do they differ when an int32 vector comes in?
# 5. Why is a retrace more expensive on a TPU than on the CPU fallback, and how would you notice one there?
#
# **Further reading**
# - [Introduction to graphs and tf.function](https://www.tensorflow.org/guide/intro_to_graphs) and [Better performance with tf.function](https://www.tensorflow.org/guide/function)
# - [Introduction to variables](https://www.tensorflow.org/guide/variable) and [Introduction to tensors](https://www.tensorflow.org/guide/tensor)
# - [Migrate to TensorFlow 2](https://www.tensorflow.org/guide/migrate)
# - [Use TPUs](https://www.tensorflow.org/guide/tpu) and the [Cloud TPU performance guide](https://cloud.google.com/tpu/docs/performance-guide)
