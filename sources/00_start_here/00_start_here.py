# ---
# jupyter:
#   course:
#     minutes: 25
#     summary: How the course works; the strategy every notebook starts with; what the CPU fallback shows and what it cannot; your first replicated computation.
# ---

# %% [markdown]
# # Start here: the course, the hardware, and your first replicated computation
#
# This course teaches TensorFlow on TPUs by running it: every claim is a cell you can run,
# every speed claim is a ratio measured in the notebook in front of you. A TPU runs one
# compiled program on several cores at once, so the course keeps coming back to three
# ideas: what gets compiled, what each core (replica) holds, and how values are combined
# across replicas. This notebook shows how the course works and runs your first computation
# on every replica.
#
# **You will learn to**
# - read the one line the set-up cell prints, and choose the hardware with environment variables;
# - tell what the CPU fallback emulates faithfully (replicas) and what it cannot (XLA by default, bfloat16 matrix units, TPU speed);
# - run a function on every replica with `strategy.run` and combine the results with `strategy.reduce`;
# - use the exercise checkers, their hints and their solutions.
#
# **Time:** about 25 minutes. **Prerequisites:** Python, and NumPy-style arrays. No TensorFlow needed yet.

# %% [markdown]
# ## 1. The set-up cell
#
# The first code cell above is the same in every notebook. Run it first, in a fresh kernel.
# It makes the course package `tpu_course` importable (opened alone from a Colab badge, it
# installs it), then calls `tpu_course.start()`, which looks for hardware in this order and
# prints **one line** saying what it found and why it ruled the rest out:
#
# 1. **a TPU attached to this machine** (a Cloud TPU VM, or a Colab TPU runtime): `TPUClusterResolver(tpu="local")`;
# 2. **a TPU named** by the environment variable `TPU_NAME`;
# 3. **GPUs**: `MirroredStrategy` over them;
# 4. **the CPU fallback**: the CPU split into 8 logical devices, with `MirroredStrategy` over them.
#
# Environment variables change the choice: `TPU_COURSE_DEVICE=tpu` (or `gpu`, `cpu`) demands a
# kind and fails loudly if it is absent; `TPU_COURSE_CPU_REPLICAS=2` sets the number of CPU
# replicas (`1` gives TensorFlow's default, unreplicated strategy, for comparison: the course's
# demonstrations of replication need 2 or more). They are read when the
# set-up cell runs: set them in your shell before starting Jupyter, or in a fresh kernel with a
# cell such as `%env TPU_COURSE_CPU_REPLICAS=2` run before the set-up cell.
#
# The strategy it returns is the object the whole course works with. How many replicas
# does it run?

# %% tags=["nbval-ignore-output"]
# What this prints depends on the hardware; the assert checks what must hold everywhere.
print("replicas:", strategy.num_replicas_in_sync)
print("strategy:", type(strategy).__name__)
if strategy.num_replicas_in_sync > 1:  # TensorFlow's default strategy has no device list
    print("devices: ", strategy.extended.worker_devices)
    assert len(strategy.extended.worker_devices) == strategy.num_replicas_in_sync

# %% [markdown]
# On an 8-core TPU such as a v2-8 this says 8 replicas and `TPUStrategy`; on a single-chip
# v5e-1 it says 1, since each v5e chip has one TensorCore
# ([TPU v5e](https://cloud.google.com/tpu/docs/v5e)); on the CPU fallback, 8 replicas and
# `MirroredStrategy`. The rest of the course is written so the same code runs on all of them,
# whatever the number of replicas. On a one-core TPU the replica demonstrations have a single
# replica to show; to see replication there, run the notebook on the CPU fallback
# (`%env TPU_COURSE_DEVICE=cpu` before the set-up cell, in a fresh kernel).
#
# One rule follows from how the fallback works: TensorFlow fixes its devices the first time
# it runs anything, so the CPU can be split into replicas only *before* any other TensorFlow
# code. That is why the set-up cell comes first. Run it late, and it stops with a message
# that says to restart the kernel.

# %% [markdown]
# ## 2. The course, in order
#
# | Module | What you learn |
# |---|---|
# | `00_start_here` | this notebook: the set-up, the fallback, checkers |
# | `01_assignment` | tensors are immutable, variables are not; `tf.function` tracing; variables inside compiled functions and under replication |
# | `02_compile` | XLA and `jit_compile`; the TPUStrategy lifecycle; Keras and custom training loops on replicas; sharding data across replicas |
# | `03_local_tpu` (planned) | what `tpu="local"` means (a Cloud TPU VM), what it does not (an Edge TPU), and the fallbacks |
# | `04_outside_compilation` (planned) | what must run on the host, and how to keep it off the chip |
#
# Take them in order: each one uses what the one before taught. The README lists what is
# ready now, with a time estimate for each notebook.
#
# ### On a real TPU, in Colab
# Open a notebook from its **Open in Colab** badge, choose *Runtime → Change runtime type →
# TPU*, and run the set-up cell. Colab no longer preinstalls TensorFlow on TPU runtimes
# ([googlecolab/colabtools#5164](https://github.com/googlecolab/colabtools/issues/5164)), so
# the set-up cell installs the TPU build at the course's version,
# `tensorflow-tpu==2.20.0` with `libtpu` from Google's release index, as Colab's maintainers
# advise ([googlecolab/colabtools#5228](https://github.com/googlecolab/colabtools/issues/5228)),
# and says so. On a Cloud TPU VM, install `tensorflow-tpu==2.20.0` the same way and run
# the notebooks from a checkout.

# %% [markdown]
# ## 3. What the CPU fallback shows, and what it cannot
#
# **Replicas are real.** Each of the 8 logical CPU devices runs its own copy of the function
# you give `strategy.run`, and sees its own replica number:

# %% tags=["nbval-ignore-output"]
def replica_number():
    return tf.distribute.get_replica_context().replica_id_in_sync_group


@tf.function
def replica_numbers():
    return strategy.run(replica_number)


per_replica = replica_numbers()
numbers = [int(value) for value in strategy.experimental_local_results(per_replica)]
print(type(per_replica).__name__, numbers)
assert numbers == list(range(strategy.num_replicas_in_sync))

# %% [markdown]
# `strategy.run` returns a *per-replica* value: one tensor per replica, wrapped in a single
# object (a `PerReplica` when there are several). `experimental_local_results` unwraps it
# into a tuple you can read. On a TPU the same cell prints the same numbers, one per core.
#
# The call sits inside a `tf.function` (`@tf.function` above; more on it just below)
# because `TPUStrategy` insists: called outside one with a plain Python function, its `run`
# raises `NotImplementedError` ("does not support pure eager execution", module 02 shows the
# source). The course always calls `strategy.run` this way, so the same code runs everywhere.
#
# **XLA is not automatic on the fallback.** On a TPU, the replicated step is compiled by XLA
# for the cores. An operation XLA has no kernel for (string formatting, `tf.py_function`, ...)
# cannot run on the cores: with soft device placement on, which is TensorFlow's default,
# `TPUStrategy` moves it to the host CPU for you ("automatic outside compilation",
# [`tf.config.set_soft_device_placement`](https://www.tensorflow.org/api_docs/python/tf/config/set_soft_device_placement)), at the cost of a round trip between chip and host on every
# step; with it off, the step fails. On the CPU, TensorFlow runs graphs without XLA unless you
# ask, so none of this shows: such code runs here quietly. Here is a function that formats a
# string:

# %%
def describe(x):
    return tf.strings.format("x = {}", [x])


print(describe(tf.constant(3.0)).numpy())

# %% [markdown]
# It runs. Now compile it. `tf.function` turns a Python function into a TensorFlow graph that
# runs as one program (module 01 shows how and when), and `jit_compile=True` asks XLA to
# compile that graph, as a TPU always does:

# %%
print("soft device placement:", tf.config.get_soft_device_placement())
compiled_describe = tf.function(describe, jit_compile=True)
try:
    compiled_describe(tf.constant(3.0))
except tf.errors.InvalidArgumentError as error:
    first_line = str(error).splitlines()[0]
    print("Refused:", first_line[: first_line.index(" when")])
    print("Which op:", "StringFormat" in first_line)

# %% [markdown]
# That is the check to run before you take code to a TPU: wrap the step in
# `tf.function(jit_compile=True)` and call it once, on any machine. What it refuses would, on a
# TPU, be sent to the host on every step (or fail). Module 02 teaches compiling; the planned
# module 04 will cover work that cannot compile.
#
# **No bfloat16 matrix unit, and no TPU speed.** A TPU core multiplies matrices on a matrix
# unit (MXU) that works in bfloat16
# ([Cloud TPU: the bfloat16 numerical format](https://cloud.google.com/tpu/docs/bfloat16);
# [system architecture](https://cloud.google.com/tpu/docs/system-architecture-tpu-vm)).
# The CPU has no such unit: bfloat16 runs here, but as plain CPU arithmetic. So the timings in
# this course are never TPU timings: they are *ratios* measured on the machine at hand
# (compiled vs not, one step vs many), which show the shape of an effect, not its size on a TPU.

# %%
a = tf.random.normal([64, 64])
product = tf.cast(a, tf.bfloat16) @ tf.cast(a, tf.bfloat16)
print(product.dtype, product.shape)
difference = tf.reduce_max(tf.abs(tf.cast(product, tf.float32) - a @ a))
print("differs from the float32 product:", bool(difference > 0))

# %% [markdown]
# bfloat16 keeps float32's range but only 8 bits of precision, so the product differs a little
# from the float32 one.

# %% [markdown]
# ## 4. Combining values across replicas
#
# Most of what a TPU program does across replicas comes down to one move: each replica
# computes something, and the replicas' values are combined. `strategy.reduce(op, value,
# axis=None)` does it for a per-replica value, with `op` `"SUM"` or `"MEAN"`:

# %% tags=["nbval-ignore-output"]
@tf.function
def replica_numbers_as_float():
    return strategy.run(lambda: tf.cast(replica_number(), tf.float32))


as_float = replica_numbers_as_float()
total = float(strategy.reduce("SUM", as_float, axis=None))
mean = float(strategy.reduce("MEAN", as_float, axis=None))
print(f"SUM of the replica numbers: {total}, MEAN: {mean}")
replicas = strategy.num_replicas_in_sync
assert total == replicas * (replicas - 1) / 2 and mean == (replicas - 1) / 2

# %% [markdown]
# Data is split the same way. `experimental_distribute_dataset` takes batches of the
# *global* batch size and gives each replica its share. Below, a global batch of 10 on 8
# replicas: 8 does not divide 10, so some replicas get two examples and others none. Then
# move the slider to see other sizes.
# Module 02 shows why a TPU wants every replica's share the same size.

# %%
import ipywidgets


def split(global_batch):
    """Which examples of one global batch each replica gets, as lists."""
    dataset = tf.data.Dataset.range(global_batch).batch(global_batch)
    batch = next(iter(strategy.experimental_distribute_dataset(dataset)))
    return [examples.numpy().tolist() for examples in strategy.experimental_local_results(batch)]


def show_split(global_batch=16):
    for replica, examples in enumerate(split(global_batch)):
        print(f"replica {replica}: examples {examples}")


# %% tags=["nbval-ignore-output"]
show_split(10)
assert sorted(sum(split(10), [])) == list(range(10))

# %% tags=["nbval-ignore-output"]
ipywidgets.interact(show_split, global_batch=ipywidgets.IntSlider(value=16, min=1, max=40));

# %% [markdown]
# ## 5. How exercises work
#
# Each exercise sits right after the idea it practises. You replace the line
# `raise NotImplementedError` (after a `# TODO`) with your code, run the cell, then run the
# checker cell below it, such as `check.ex_0_1(your_function)`. The checker calls your code on
# several inputs and compares by meaning, not by text, so any correct answer passes. It says
# one of:
#
# - `✅ Exercise ex_0_1: correct.`
# - `⏳ ... not attempted yet` — the stub is still there;
# - `❌ ... not yet —` and the first concrete difference it found (a value, a shape, a count), never the answer;
# - `💥 ... your code raised ...` — what your code raised, and with which input.
#
# Stuck? `check.ex_0_1.hint()` shows one more hint each time you call it, and
# `check.ex_0_1.solution()` shows a worked answer. The solution notebooks (badge at the top)
# have every answer and every output.
#
# ### Exercise 0.1: a value from every replica, summed
#
# Write `sum_of_squares(strategy)`: every replica computes *(its replica number + 1)²*, as
# float32, and the function returns the sum over all replicas as one Python `float`.
# With 8 replicas that is 1 + 4 + 9 + … + 64 = 204; with 1 replica, 1.
# Compute each replica's value inside `strategy.run` (put the call in a `tf.function`, as you
# would on a TPU), then combine.

# %%
def sum_of_squares(strategy):
    """Sum over replicas of (replica number + 1) squared, computed on the replicas."""
    # BEGIN SOLUTION
    def square_of_number():
        number = tf.distribute.get_replica_context().replica_id_in_sync_group
        return tf.cast(number + 1, tf.float32) ** 2

    @tf.function
    def on_every_replica():
        return strategy.run(square_of_number)

    return float(strategy.reduce("SUM", on_every_replica(), axis=None))
    # END SOLUTION


# %%
check.ex_0_1(sum_of_squares)

# %% [markdown]
# ## 6. Measure it: tracing costs once, calls are cheap
#
# Putting `strategy.run` inside a `tf.function` means TensorFlow *traces* your Python once, to
# build a graph, and then runs the graph on every call. On a TPU the first call also compiles
# the graph with XLA, which can take seconds. Here is the first call of a replicated function
# against the calls after it, measured on this machine:

# %%
def replicated_square_sum(x):
    return strategy.run(lambda: tf.reduce_sum(tf.square(x)))


x = tf.ones([64, 64])
traced = tf.function(replicated_square_sum)
first_call = tpu_course.measure.time_calls(traced, x, repeats=1)
later_calls = tpu_course.measure.time_calls(traced, x, repeats=20)
print("traces so far:", traced.experimental_get_tracing_count())

# %% tags=["nbval-ignore-output"]
figure = tpu_course.measure.bar_chart({"first call (trace)": first_call, "later calls": later_calls},
                                      "One replicated tf.function, on this machine")
slower = tpu_course.measure.median(first_call) / tpu_course.measure.median(later_calls)
print(f"The first call took {slower:.0f}× as long as the median later call.")
assert slower > 1

# %% [markdown]
# The ratio you see is this machine's. The lesson carries to a TPU, where the first call
# also compiles: keep the number of traces (and so compilations) small, and do many steps
# per call. Module 01 counts traces; module 02 measures steps per call.

# %% [markdown]
# ## Wrap-up
#
# You can now:
# - read the set-up line, and choose the hardware with `TPU_COURSE_DEVICE` and `TPU_COURSE_CPU_REPLICAS`;
# - say what the CPU fallback shows faithfully (replicas, per-replica values, reductions) and what it does not (XLA unless asked, bfloat16 units, TPU speed);
# - check code for a TPU on any machine with `jit_compile=True`;
# - run a function on every replica and combine the results.
#
# **Check your understanding**
# 1. Why must the set-up cell run before any other TensorFlow code?
# 2. A function runs fast under `strategy.run` on the fallback but fails, or crawls, on a TPU. What is a likely cause, and how could you have caught it here?
# 3. With 8 replicas and a global batch of 10, how many examples does each replica get? Why does a TPU dislike that?
# 4. Why is "the fallback took 2 ms a step" no evidence about TPU speed, while "the first call took 50× longer than the later ones" is worth knowing?
#
# **Further reading**
# - [Use TPUs](https://www.tensorflow.org/guide/tpu) (TensorFlow guide) and [Distributed training with TensorFlow](https://www.tensorflow.org/guide/distributed_training)
# - [Distributed input](https://www.tensorflow.org/tutorials/distribute/input), whose two emulated CPUs are the idea behind the fallback
# - [Cloud TPU system architecture](https://cloud.google.com/tpu/docs/system-architecture-tpu-vm)
