# ---
# jupyter:
#   course:
#     minutes: 30
#     summary: Variables inside compiled functions (create once, assign every call, what XLA makes of an assign); AutoGraph control flow; what an assign means on 8 replicas, and which aggregation keeps them consistent.
# ---

# %% [markdown]
# # Variables in compiled and replicated functions
#
# The first notebook of this module showed that tensors never change, that a `tf.Variable`
# does, and that `tf.function` traces your Python once into a graph. A TPU program is such a
# graph, compiled by XLA and run on every core at once. This notebook follows a variable
# into that program: how to create it so that tracing does not trip over it, what XLA makes
# of an assignment, how Python `if` and `for` survive compilation, and what `assign_add`
# means when 8 replicas each run it on their own copy of the variable.
#
# **You will learn to**
# - create a variable once and assign it on every call, and fix the "singleton tf.Variables" error;
# - read in XLA's HLO how a compiled function updates a variable (a value in, a new value out, in the same buffer);
# - write data-dependent control flow that compiles, and tell which conditions are decided while tracing;
# - choose a variable's aggregation (`NONE`, `SUM`, `MEAN`, `ONLY_FIRST_REPLICA`) or `synchronization=ON_READ`, so that replicas keep consistent state.
#
# **Time:** about 30 minutes. **Prerequisites:** `00_start_here`, and the first notebook of
# this module (tensors vs variables, `tf.function` tracing).

# %% [markdown]
# ## 1. Create a variable once, assign it on every call
#
# A `tf.function` may run your Python body more than once: once to trace, and again
# whenever it retraces. A `tf.Variable(...)` in that body would make a new variable every
# time, so TensorFlow refuses it. Here is the mistake:

# %%
@tf.function
def count_calls_broken(amount):
    total = tf.Variable(0.0)  # a new variable on every call
    return total.assign_add(amount)


try:
    count_calls_broken(tf.constant(1.0))
except ValueError as error:
    print("ValueError:", "tf.function only supports singleton tf.Variables created on the first call"
          if "singleton tf.Variables created on the first call" in str(error) else str(error)[:120])

# %% [markdown]
# It fails on the very first call. Even if it ran, each call would start from a fresh 0.0,
# which is not what a counter is for. There are two fixes, and both keep the variable's
# *creation* out of the repeated part:
#
# 1. **create it outside** the function, and let the function only *assign* it;
# 2. **create it on the first call only**, and keep it on an object. This is what Keras
#    layers do when they create their weights in `build()`, the first time they are called.

# %%
total = tf.Variable(0.0)


@tf.function
def count_calls(amount):
    return total.assign_add(amount)  # assigning on every call is fine


print([float(count_calls(tf.constant(amount))) for amount in (1.0, 2.0, 3.0)])


class LazyCounter(tf.Module):
    def __init__(self):
        self.total = None

    @tf.function
    def __call__(self, amount):
        if self.total is None:  # a Python check: true only while tracing the first time
            self.total = tf.Variable(0.0)
        return self.total.assign_add(amount)


lazy = LazyCounter()
print([float(lazy(tf.constant(amount))) for amount in (1.0, 2.0, 3.0)])

# %% [markdown]
# ### Exercise 1.4: a counter that remembers
#
# Write `make_counter()`. Each time it is called, it returns a **new** counter: something you
# call with an amount (a float32 scalar tensor), which adds it to a running total and
# returns the new total. So `c = make_counter()`, then `c(tf.constant(1.0))` and
# `c(tf.constant(2.5))`, return 1.0, then 3.5.
# Two counters must not share a total, and a counter must also work when a training step
# calls it from inside its own `tf.function`. Start from `count_calls_broken` above.

# %%
def make_counter():
    """A new counter: call it with an amount; it returns the running total."""
    # BEGIN SOLUTION
    total = tf.Variable(0.0)

    @tf.function
    def counter(amount):
        return total.assign_add(amount)

    return counter
    # END SOLUTION


# %%
check.ex_1_4(make_counter)

# %% [markdown]
# ## 2. What XLA makes of an assignment
#
# On a TPU every step is compiled by XLA. On any machine, `tf.function(jit_compile=True)`
# asks for the same: compile with XLA, or fail. An `assign_add` compiles without fuss.

# %%
running_total = tf.Variable(0.0)


@tf.function(jit_compile=True)
def add_to_total(amount):
    running_total.assign_add(amount)


for amount in (1.0, 2.0, 3.0):
    add_to_total(tf.constant(amount))
print("running_total:", running_total.numpy())
assert running_total.numpy() == 6.0

# %% [markdown]
# XLA's programs have no variables: a compiled computation takes values in and gives values
# out. So how does it update one? Ask for the program XLA was given, in its own language
# (HLO). The helper below prints the module's header and its `ENTRY` computation (the
# program itself), with each line's metadata cut down to the TensorFlow op it came from:

# %% tags=["nbval-ignore-output"]
import re


def hlo_header(hlo):
    """The HLO module's first line, split into its name, input_output_alias and entry_computation_layout."""
    return re.split(r", (?=\w+=)", hlo.splitlines()[0])


def hlo_entry(hlo):
    """The ENTRY computation: from the line starting with ENTRY to its closing brace."""
    start = hlo.index("\nENTRY") + 1
    return hlo[start:hlo.index("\n}", start) + 2]


def without_metadata(line):
    """An HLO line, keeping of its metadata only the TensorFlow op type, as a comment."""
    op_type = re.search(r'op_type="(\w+)"', line)
    line = re.sub(r", (metadata|parameter_replication)=\{[^{}]*\}", "", line)
    return f"{line}    # from {op_type.group(1)}" if op_type else line


hlo = add_to_total.experimental_get_compiler_ir(tf.constant(1.0))(stage="hlo")
print("\n".join(hlo_header(hlo)), end="\n\n")
print("\n".join(without_metadata(line) for line in hlo_entry(hlo).splitlines()))

# %% [markdown]
# Read it like this:
# - `entry_computation_layout` is the program's signature: two `f32[]` (float32 scalar)
#   parameters in, one `f32[]` out. Parameter 0 is `amount`; parameter 1 is the variable's
#   **current value**, passed in like any other input.
# - The `add` line, which XLA made of `AssignAddVariableOp`, adds the two parameters (`amount`
#   through a `reshape`); the `ROOT` line returns that sum, the **new value**, as the output.
# - `input_output_alias={ {}: (1, ...) }` says that the output (`{}`: the only one) may reuse
#   parameter 1's memory, so the new value can go straight into the variable's own buffer.
#
# The mutation is compiled *functionally* (old value in, new value out), and it can still
# happen in place. The exact names vary with the version, so here is the same reading done
# by code, one step at a time:

# %%
entry = hlo_entry(hlo)
# 1. The parameters: HLO name -> parameter number.
parameters = dict(re.findall(r"%(\S+) = \S+ parameter\((\d+)\)", entry))
# 2. The line XLA made of the assign_add, and the names it reads.
update = next(line for line in entry.splitlines() if 'op_type="AssignAddVariableOp"' in line)
read_names = re.findall(r"%([\w.\-]+)", update.split(" = ", 1)[1].split(", metadata=")[0])
read_by_update = [parameters[name] for name in read_names if name in parameters]
# 3. The aliases: {output}: (parameter number, ...).
aliased = re.findall(r"\{[^{}]*\}: \((\d+),", hlo.splitlines()[0])

print("parameters of the compiled program:", len(parameters))
print("parameters the add reads directly:", read_by_update)
print("parameters whose buffer the output may reuse:", aliased)
assert len(parameters) == 2 and read_by_update == aliased == ["1"]

# %% [markdown]
# > **Myth:** "TPUs cannot assign variables; a TPU program must be stateless."
# > **Fact:** every training step on a TPU assigns variables: the optimizer writes every
# > weight, and its step count, on every step. What is true behind the myth: a compiled
# > function may not *create* a variable on every call (section 1), and on several replicas
# > the variable's *aggregation* decides what an assign means (section 4).
#
# Here is an optimizer step compiled by XLA. Which of its parameters are written back?

# %%
weights = tf.Variable([1.0, 2.0], name="weights")
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
optimizer.build([weights])  # create the optimizer's own variables once, before compiling


@tf.function(jit_compile=True)
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum((weights * x) ** 2)
    optimizer.apply_gradients([(tape.gradient(loss, weights), weights)])
    return loss


x = tf.constant([1.0, 1.0])
print("weights before:", weights.numpy())
train_step(x)
print("weights after: ", weights.numpy().round(3), " optimizer steps:", int(optimizer.iterations))

# %% [markdown]
# Its header, and a table of its parameters: parameter 0 is `x`, then come the variables
# the step captured, in the order of `get_concrete_function(x).captured_inputs`. An HLO
# type such as `f32[2]` is a float32 vector of 2; `s64[]` is an int64 scalar.

# %% tags=["nbval-ignore-output"]
step_hlo = train_step.experimental_get_compiler_ir(x)(stage="hlo")
print("\n".join(hlo_header(step_hlo)[1:]), end="\n\n")

HLO_DTYPES = {"float32": "f32", "int64": "s64", "int32": "s32"}


def hlo_type(tensor):
    """How HLO writes a tensor's dtype and shape: f32[2], s64[], ..."""
    return f"{HLO_DTYPES[tensor.dtype.name]}[{','.join(str(size) for size in tensor.shape)}]"


layout = re.search(r"entry_computation_layout=\{\((.*?)\)->", step_hlo).group(1)
parameter_types = [re.sub(r"\{[^{}]*\}", "", part) for part in layout.split(", ")]  # drop the {0} layouts
step_function = train_step.get_concrete_function(x)
# After x come the variables, in the order the function captured them (by their handles).
captured = [next(v for v in step_function.variables if v.handle is handle) for handle in step_function.captured_inputs]
parameter_names = ["x"] + [v.name for v in captured]
parameter_values = [x] + captured
written_back = {int(parameter): int(output or 0)
                for output, parameter in re.findall(r"\{(\d*)\}: \((\d+),", hlo_header(step_hlo)[1])}
print(f"{'parameter':10} {'holds':22} {'HLO type':9} written back?")
for number, (name, hlo_type_here) in enumerate(zip(parameter_names, parameter_types)):
    fate = f"yes, as output {written_back[number]}" if number in written_back else "no: only read"
    print(f"{number:<10} {name:22} {hlo_type_here:9} {fate}")

assert parameter_types == [hlo_type(value) for value in parameter_values]  # the names line up with the types
assert sorted(parameter_names[n] for n in written_back) == ["sgd/iteration:0", "weights:0"]
assert any("learning_rate" in name for name in parameter_names)

# %% [markdown]
# Two parameters are written back: the weights and the optimizer's step count
# (`iteration`). The learning rate is a variable too, but the step only reads it, so it is
# an input and not an output.
#
# **On the CPU fallback, show XLA on one device.** `jit_compile=True` on a function that
# `MirroredStrategy` runs over the logical CPU devices fails, because XLA is asked to
# reach variables on the other devices. That is a limit of the fallback, not of TPUs: a TPU
# "always requires the XLA compiler"
# ([`tf.config.set_soft_device_placement`](https://www.tensorflow.org/api_docs/python/tf/config/set_soft_device_placement)),
# so a step that runs on a TPU is compiled by XLA with no flag. On the fallback, the error
# names the page that explains it:

# %% tags=["nbval-ignore-output"]
with strategy.scope():
    replicated_total = tf.Variable(0.0, aggregation=tf.VariableAggregation.SUM)


@tf.function(jit_compile=True)
def compiled_replicated_step():
    strategy.run(lambda: replicated_total.assign_add(tf.constant(1.0)))


try:
    compiled_replicated_step()
    outcome = "ran"
except Exception as error:  # on the fallback: InvalidArgumentError, "Trying to access resource ..."
    found = re.search(r"Trying to access resource \S+", str(error))
    link = re.search(r"Cf\. (https://\S+)", str(error))
    outcome = f"{type(error).__name__}: {found.group(0) if found else str(error)[:100]} ..."
    if link:
        outcome += f"\nthe error links to: {link.group(1)}"
print(outcome)
on_cpu_replicas = isinstance(strategy, tf.distribute.MirroredStrategy) and not tf.config.list_physical_devices("GPU")
assert outcome != "ran" or not on_cpu_replicas

# %% [markdown]
# ### Exercise 1.5: a compiled step counter that traces once
#
# On a TPU, every new trace of a step is a new XLA compilation. A training loop often passes plain Python numbers, and a `tf.function` traces again for
# every new Python value it sees. Write `make_step_counter()`, which returns a pair
# `(counter, step)`:
# - `counter`: a new `tf.Variable` of dtype `int32`, starting at 0;
# - `step`: a `tf.function` compiled with XLA; `step(n)` adds `n` to the counter. It is called
#   with plain Python ints (`step(3)`, `step(1)`, ...) and with int32 tensors, and must be
#   **traced once** for all of them.
#
# The checker reads the trace count with `step.experimental_get_tracing_count()`. (The
# first notebook showed why Python numbers retrace: they are part of the signature.)

# %%
def make_step_counter():
    """(counter, step): an int32 variable, and a compiled step that adds its argument to it."""
    # BEGIN SOLUTION
    counter = tf.Variable(0, dtype=tf.int32)

    @tf.function(jit_compile=True, input_signature=[tf.TensorSpec([], tf.int32)])
    def step(n):
        counter.assign_add(n)

    return counter, step
    # END SOLUTION


# %%
check.ex_1_5(make_step_counter)

# %% [markdown]
# The first notebook measured what a retrace costs; new here is that with `jit_compile=True`
# every retrace is also an XLA compilation. The same compiled step, called with a new Python
# int each time (a trace and an XLA compilation per call) and with one signature (compiled
# once):

# %% tags=["nbval-ignore-output"]
timed_counter = tf.Variable(0, dtype=tf.int32)


def add_steps(n):
    timed_counter.assign_add(n)


step_per_value = tf.function(add_steps, jit_compile=True)
step_once = tf.function(add_steps, jit_compile=True, input_signature=[tf.TensorSpec([], tf.int32)])
step_once(0)  # compile before timing
new_values = iter(range(1, 1000))
retracing = tpu_course.measure.time_calls(lambda: step_per_value(next(new_values)), repeats=8)
one_trace = tpu_course.measure.time_calls(lambda: step_once(1), repeats=8)
figure = tpu_course.measure.bar_chart({"new Python int each call": retracing, "input_signature": one_trace},
                                      "A jit-compiled step, on this machine")
slower = tpu_course.measure.median(retracing) / tpu_course.measure.median(one_trace)
print("traces:", step_per_value.experimental_get_tracing_count(), "vs", step_once.experimental_get_tracing_count())
print(f"A call with a new Python int took {slower:.0f}× as long as a call of the one-trace step.")
assert step_per_value.experimental_get_tracing_count() == 8 and step_once.experimental_get_tracing_count() == 1
assert slower > 1

# %% [markdown]
# Look for the retracing bar towering over the other: each of its calls traces and compiles.
# On a TPU every trace is an XLA compilation too, which is why a TPU training step gets
# tensors (or an `input_signature`), never fresh Python numbers.

# %% [markdown]
# ## 3. Control flow that compiles
#
# A compiled program cannot call back into Python to decide which way to go. Inside a
# `tf.function`, **AutoGraph** rewrites Python `if` and `while`/`for` whose condition is a
# *tensor* into graph control flow, `tf.cond` and `tf.while_loop`, which XLA compiles.
#
# The TensorFlow 1 documentation's example of `tf.cond`, copied widely, needed a session to
# print anything:
#
# ```python
# # TensorFlow 1: does not run in TensorFlow 2 (no tf.Session)
# x = tf.constant(2)
# y = tf.constant(5)
# def f1(): return tf.multiply(x, 17)
# def f2(): return tf.add(y, 23)
# r = tf.cond(tf.less(x, y), f1, f2)
# with tf.Session() as sess:
#     print(sess.run(r))  # 34
# ```
#
# In TensorFlow 2, `tf.cond` runs at once, and inside a `tf.function` you write a plain `if`:

# %%
x, y = tf.constant(2), tf.constant(5)
print("tf.cond, eagerly:", tf.cond(x < y, lambda: x * 17, lambda: y + 23).numpy())


@tf.function
def pick(x, y):
    if x < y:  # a tensor condition: AutoGraph turns this into tf.cond
        result = x * 17
    else:
        result = y + 23
    return result


print("if, in a tf.function:", pick(x, y).numpy(), pick(tf.constant(9), y).numpy())

# %% [markdown]
# You can see AutoGraph's rewrite, and the graph's control-flow ops:

# %%
rewritten = tf.autograph.to_code(pick.python_function)
print("\n".join(line.strip() for line in rewritten.splitlines() if "ag__.if_stmt" in line))


def control_flow_ops(function, *args):
    """The control-flow op types in a tf.function's graph, nested functions included."""
    graph = function.get_concrete_function(*args).graph.as_graph_def()
    nodes = list(graph.node) + [node for f in graph.library.function for node in f.node_def]
    return sorted({node.op for node in nodes if node.op.endswith(("If", "While"))})


print("ops:", control_flow_ops(pick, x, y))

# %% [markdown]
# Loops work the same way, even when the number of iterations depends on the data, and XLA
# compiles them. The Collatz sequence of 27 takes 111 steps to reach 1:

# %%
@tf.function(jit_compile=True)
def collatz_steps(n):
    steps = 0
    while n != 1:  # a tensor condition: a tf.while_loop
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


print("steps:", collatz_steps(tf.constant(27)).numpy())
print("ops:", control_flow_ops(collatz_steps, tf.constant(27)))

# %% [markdown]
# **Conditions on Python values are decided while tracing.** A Python `bool` or `int` is
# not in the graph: AutoGraph leaves the `if` alone, Python takes one branch while tracing,
# and the graph holds only that branch. Each new Python value means a new trace (and on a
# TPU, a new compilation). A tensor condition gives one graph that holds both branches:

# %%
@tf.function
def scale(x, training):
    if training:
        x = x * 0.5
    return x


for training in (True, False, True, False):
    scale(tf.constant(2.0), training)
print("Python bool:  traces", scale.experimental_get_tracing_count(), " ops", control_flow_ops(scale, tf.constant(2.0), True))

scale_by_tensor = tf.function(scale.python_function)
for training in (True, False, True, False):
    scale_by_tensor(tf.constant(2.0), tf.constant(training))
print("bool tensor:  traces", scale_by_tensor.experimental_get_tracing_count(),
      " ops", control_flow_ops(scale_by_tensor, tf.constant(2.0), tf.constant(True)))

# %% [markdown]
# Which is right depends on the job. A setting fixed for the whole run (training or not) is
# fine as a Python value: two traces, each with only the work it needs. A value that changes
# every step must be a tensor. The same holds for loops: a `for` over a Python `range` is
# unrolled while tracing (a copy of the body per iteration, no loop op), while a `for` over
# `tf.range` becomes one `tf.while_loop`:

# %%
def add_one_three_times(x, numbers):
    for _ in numbers:
        x = x + 1.0
    return x


unrolled = tf.function(lambda x: add_one_three_times(x, range(3)))
looped = tf.function(lambda x: add_one_three_times(x, tf.range(3)))
for name, function in (("range(3):   ", unrolled), ("tf.range(3):", looped)):
    print(name, "result", function(tf.constant(0.0)).numpy(),
          " control flow", control_flow_ops(function, tf.constant(0.0)))

# %% [markdown]
# ## 4. Variables on several replicas
#
# Under `strategy.scope()`, a `tf.Variable` becomes a *distributed* variable: one copy on
# every replica (on a TPU, one per core). The code below is written to run unchanged with
# `TPUStrategy`: variables created in `strategy.scope()`, `strategy.run` inside a
# `tf.function`.

# %% tags=["nbval-ignore-output"]
with strategy.scope():
    replicated = tf.Variable(0.0)
copies = strategy.experimental_local_results(replicated)
print(type(replicated).__name__, "with", len(copies), "copies, on:")
for copy in copies:
    print("  ", copy.device)
assert len(copies) == strategy.num_replicas_in_sync

# %% [markdown]
# Each replica runs the step on its own data, and so each computes its own update. When
# every replica calls `assign_add` on its copy, what should the copies hold afterwards? The
# variable's `aggregation` answers:
#
# | `aggregation` | an `assign_add(x)` in replica context... |
# |---|---|
# | `NONE` (the default) | updates only this replica's own copy: the copies drift apart, silently |
# | `SUM` | adds the **sum** of every replica's `x` to every copy |
# | `MEAN` | adds the **mean** of the `x`s to every copy |
# | `ONLY_FIRST_REPLICA` | adds replica 0's `x` to every copy; the others' are dropped |
#
# A fifth choice, `synchronization=ON_READ`, keeps a separate copy per replica on purpose
# and combines them (here with `SUM`) only when you read the variable outside the replicas.
#
# The function below creates a variable with a given aggregation, lets every replica add
# *its replica number + 1*, and returns each replica's copy and the value read outside the
# replicas. The explorer at the end of this section calls it too.

# %%
CHOICES = {
    "NONE": dict(aggregation=tf.VariableAggregation.NONE),
    "SUM": dict(aggregation=tf.VariableAggregation.SUM),
    "MEAN": dict(aggregation=tf.VariableAggregation.MEAN),
    "ONLY_FIRST_REPLICA": dict(aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA),
    "ON_READ + SUM (metrics)": dict(aggregation=tf.VariableAggregation.SUM,
                                    synchronization=tf.VariableSynchronization.ON_READ),
}
AMOUNTS = {
    "replica number + 1": lambda number: tf.cast(number + 1, tf.float32),
    "1.0 on every replica": lambda number: tf.constant(1.0),
}


def after_assign_add(choice, amount="replica number + 1"):
    """(each replica's copy, the value read outside) after one assign_add in replica context."""
    with strategy.scope():
        variable = tf.Variable(0.0, **CHOICES[choice])

    def on_each_replica():
        number = tf.distribute.get_replica_context().replica_id_in_sync_group
        variable.assign_add(AMOUNTS[amount](number))

    @tf.function
    def step():
        strategy.run(on_each_replica)

    step()
    copies = [float(copy) for copy in strategy.experimental_local_results(variable)]
    return copies, float(variable.read_value())


def show_assign_add(choice="NONE", amount="replica number + 1"):
    copies, read_outside = after_assign_add(choice, amount)
    print(f"{choice:24} copies {copies}   read outside: {read_outside}")


# %% tags=["nbval-ignore-output"]
for choice in CHOICES:
    show_assign_add(choice)

replicas = strategy.num_replicas_in_sync
summed = replicas * (replicas + 1) / 2
assert after_assign_add("NONE") == ([n + 1.0 for n in range(replicas)], 1.0)
assert after_assign_add("SUM") == ([summed] * replicas, summed)
assert after_assign_add("MEAN") == ([summed / replicas] * replicas, summed / replicas)
assert after_assign_add("ONLY_FIRST_REPLICA") == ([1.0] * replicas, 1.0)
assert after_assign_add("ON_READ + SUM (metrics)") == ([n + 1.0 for n in range(replicas)], summed)

# %% [markdown]
# With 8 replicas, read the lines like this:
# - `NONE`: each copy holds only its own replica's update, 1 to 8. Nothing raised, and
#   reading the variable outside the replicas gives replica 0's copy, 1.0: the other seven
#   updates are invisible. On a TPU that is 8 cores that no longer agree on the model.
# - `SUM`: every copy holds 1 + 2 + ... + 8 = 36. `MEAN`: 4.5. Both keep the copies equal.
# - `ONLY_FIRST_REPLICA`: every copy holds replica 0's 1.0. Right when every replica
#   computes the *same* update; wrong when they differ, as here.
# - `ON_READ + SUM`: the copies differ on purpose, and the read adds them up: 36.
#
# > **Myth:** "A variable created in `strategy.scope()` is mirrored, so its copies always agree."
# > **Fact:** the copies agree only if every update keeps them equal. With the default
# > aggregation, `NONE`, an `assign_add` in replica context updates each copy on its own,
# > and nothing warns you (the `NONE` line above).
#
# `SUM` refuses to guess in one case: a Python number added on every replica. Is `1.0` meant
# once, or once per replica?

# %% tags=["nbval-ignore-output"]
with strategy.scope():
    examples_seen = tf.Variable(0.0, aggregation=tf.VariableAggregation.SUM)


@tf.function
def add_one_per_replica():
    strategy.run(lambda: examples_seen.assign_add(1.0))


try:
    add_one_per_replica()
    raised = False
except ValueError as error:
    print("ValueError:", re.search(r"A non-DistributedValues value .* cannot be reduced", str(error)).group(0))
    raised = True
assert raised == (strategy.num_replicas_in_sync > 1)

# %% [markdown]
# A tensor is unambiguous: `assign_add(tf.constant(1.0))` with `SUM` adds 1.0 from every
# replica (try "1.0 on every replica" in the explorer below).
#
# **Which to use when.** Keep replicated state consistent across cores; pick the meaning
# you want:
# - `SUM` for totals of what the replicas did: examples seen, tokens processed;
# - `MEAN` for a value each replica estimates from its own data, such as a running statistic;
# - `ONLY_FIRST_REPLICA` for updates every replica computes identically, such as a step
#   count: Keras optimizers create their `iterations` variable with it;
# - `synchronization=ON_READ` with `SUM` for metrics, updated often and read rarely: each
#   replica updates its copy with no communication, and the read combines them. Keras metrics
#   create their variables this way;
# - `NONE` for variables never assigned in replica context, or assigned only in
#   cross-replica context, where one assignment updates every copy alike. That is how Keras
#   treats model weights: they have aggregation `NONE`, and the optimizer first all-reduces
#   the gradients across replicas, then updates the weights from cross-replica context
#   (through `merge_call`), never with a per-replica `assign` that would let copies drift
#   ([Keras's TensorFlow optimizer](https://github.com/keras-team/keras/blob/master/keras/src/backend/tensorflow/optimizer.py),
#   `_backend_update_step`).
#
# Here is what Keras chose, in its own words:

# %%
metric = tf.keras.metrics.Mean()
dense = tf.keras.layers.Dense(2)
dense.build((None, 3))
print("Keras Dense kernel:        ", dense.kernel.aggregation)
print("Keras optimizer iterations:", optimizer.iterations.aggregation)
print("Keras metric variables:    ", [(v.synchronization, v.aggregation) for v in metric.variables])
assert dense.kernel.aggregation == "none" and optimizer.iterations.aggregation == "only_first_replica"

# %% [markdown]
# ### Explorer: one assign_add on every replica
#
# Choose an aggregation and what each replica adds, and see every replica's copy afterwards
# and the value read outside the replicas.

# %% tags=["nbval-ignore-output"]
import ipywidgets

ipywidgets.interact(show_assign_add, choice=ipywidgets.Dropdown(options=list(CHOICES), value="NONE"),
                    amount=ipywidgets.Dropdown(options=list(AMOUNTS)));

# %% [markdown]
# ### Exercise 1.6: count every example, on every replica
#
# On a TPU every replica's batch has the same static shape, so the last, short batch of a
# dataset is dropped or padded; if padded, a `mask` marks the real examples (1.0) and the
# padding (0.0). Write `make_example_counter(strategy)`, which returns a pair
# `(counter, count_examples)`:
# - `counter`: a new float32 variable, starting at 0.0, replicated by `strategy`;
# - `count_examples(mask)`: runs **in replica context** (the checker calls it with
#   `strategy.run` inside a `tf.function`) with this replica's float32 mask of shape `[4]`,
#   and adds the number of real examples to the counter.
#
# After every step, **every replica's copy** must hold the total number of real examples
# seen by all the replicas so far: a step could read it to schedule its learning rate.
# The checker runs your counter on the course's strategy and on the default strategy (one
# replica), with batches that differ from replica to replica.

# %%
def make_example_counter(strategy):
    """(counter, count_examples): a replicated total of the real examples seen."""
    # BEGIN SOLUTION
    with strategy.scope():
        counter = tf.Variable(0.0, aggregation=tf.VariableAggregation.SUM)

    def count_examples(mask):
        counter.assign_add(tf.reduce_sum(mask))

    return counter, count_examples
    # END SOLUTION


# %%
check.ex_1_6(make_example_counter)

# %% [markdown]
# ## Wrap-up
#
# You can now:
# - create variables once (outside, or on the first call) and assign them on every call;
# - read an XLA program's HLO and see an assignment as a value in, a new value out, aliased;
# - write `if` and `while` on tensors that compile, and keep Python-valued conditions for
#   settings fixed for the run;
# - choose the aggregation or synchronization that keeps a variable consistent across
#   replicas, and spot `NONE` copies drifting apart.
#
# **Check your understanding**
# 1. Why does TensorFlow refuse a `tf.Variable(...)` inside a `tf.function` body, while it
#    accepts `v.assign_add(...)` there?
# 2. In the HLO of a compiled `assign_add`, where does the variable's old value come from,
#    and where does the new value go?
# 3. A step is called as `step(learning_rate=0.01 * epoch)`. What happens on a TPU every
#    epoch, and how do you avoid it?
# 4. Eight replicas each count the examples in their own batch into a mirrored variable
#    with the default aggregation. What does the variable read after one step, and which
#    aggregation gives the total instead?
# 5. Why do Keras metrics use `synchronization=ON_READ` rather than `SUM` on write?
#
# **Further reading**
# - [Introduction to variables](https://www.tensorflow.org/guide/variable) and
#   [Better performance with tf.function](https://www.tensorflow.org/guide/function)
#   (its section on creating variables)
# - [AutoGraph: tf.function and control flow](https://www.tensorflow.org/guide/function#autograph_transformations)
# - [`tf.VariableAggregation`](https://www.tensorflow.org/api_docs/python/tf/VariableAggregation) and
#   [`tf.VariableSynchronization`](https://www.tensorflow.org/api_docs/python/tf/VariableSynchronization)
# - [Custom training with tf.distribute.Strategy](https://www.tensorflow.org/tutorials/distribute/custom_training)
#   and [Use TPUs](https://www.tensorflow.org/guide/tpu)
# - [XLA: known issues](https://www.tensorflow.org/xla/known_issues#tfvariable_on_a_different_device)
#   (a tf.Variable on a different device: on the CPU fallback, the error above links to it)
