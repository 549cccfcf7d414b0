# ---
# jupyter:
#   course:
#     minutes: 25
#     summary: Global and per-replica batches; how distribute_datasets_from_function feeds replicas; sharding by input pipeline, AutoShardPolicy, input speed; module 02's errors gallery.
# ---

# %% [markdown]
# # Sharding data across replicas, and feeding them fast
#
# A replicated step is only as good as its input: every replica needs its own batch, of the
# same size, every step, without waiting. This notebook shows exactly which examples land on
# which replica with the two ways `tf.distribute` feeds a strategy, where sharding happens
# (across hosts, not across the cores of one host), the `shard` mistakes that silently lose or
# duplicate data, how to measure and fix a slow input pipeline, and, to close module 02, a
# gallery of the errors you are most likely to meet, each reproduced here or in the notebook
# that first showed it.
#
# **You will learn to**
# - tell the global batch from the per-replica batch, and see which examples each replica gets;
# - write an input function for `strategy.distribute_datasets_from_function` that shards by input pipeline and batches per replica;
# - say what `AutoShardPolicy` does, and why it does not split data among the replicas of one host;
# - speed up an input pipeline with parallel `map`, `cache` and `prefetch`, and measure it;
# - recognise module 02's common errors from their messages, and fix them.
#
# **Time:** about 25 minutes. **Prerequisites:** `00_start_here`, and the earlier notebooks of
# module 02 (`strategy.run` inside `tf.function`, static shapes and `drop_remainder`).

# %% [markdown]
# ## 1. Global batch, per-replica batch
#
# `strategy.experimental_distribute_dataset(dataset)` takes a dataset batched with the
# **global** batch size, the number of examples one step consumes on all replicas together,
# and splits each batch among the replicas. `experimental_local_results` shows each
# replica's share. Here, 20 examples in global batches of 16:

# %%
def shares(per_replica_values):
    """Each replica's part of a per-replica value, as Python lists."""
    return [value.numpy().tolist() for value in strategy.experimental_local_results(per_replica_values)]


replicas = strategy.num_replicas_in_sync
examples = tf.data.Dataset.range(20)


# %% tags=["nbval-ignore-output"]
steps = [shares(batch) for batch in strategy.experimental_distribute_dataset(examples.batch(16))]
for step, per_replica in enumerate(steps):
    print(f"step {step}:", per_replica)
assert sorted(example for step in steps for share in step for example in share) == list(range(20))

# %% [markdown]
# With 8 replicas, step 0 gives each replica 2 consecutive examples (16 / 8). The last,
# partial batch of 4 is split as evenly as it can be: one example each for four replicas,
# none for the other four. A global batch that 8 does not divide is split the same way, so
# some replicas get more than others, or nothing at all:

# %% tags=["nbval-ignore-output"]
uneven = shares(next(iter(strategy.experimental_distribute_dataset(examples.batch(10)))))
print("global batch 10:", uneven)
sizes = [len(share) for share in uneven]
assert sum(sizes) == 10 and max(sizes) - min(sizes) <= 2

# %% [markdown]
# On 8 replicas that prints `[[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [], [], []]`: five
# replicas get two examples and three get none. It runs, but the replicas' batch shapes differ.
# A TPU compiles its program for fixed shapes: by default `TPUStrategy.run` runs such a batch,
# but only by padding it, and each new shape costs a new compilation
# ([`01_xla_and_static_shapes`](../02_compile/01_xla_and_static_shapes.ipynb), section 5). So
# keep the global batch a multiple of the replica count, and drop the partial last batch
# (`drop_remainder=True`).
#
# ### The other way: `distribute_datasets_from_function`
#
# `strategy.distribute_datasets_from_function(input_fn)` calls *your* function with a
# `tf.distribute.InputContext` and expects a dataset back. You shard it with
# `dataset.shard(context.num_input_pipelines, context.input_pipeline_id)` and batch it with
# `context.get_per_replica_batch_size(global_batch)`. How many times is it called, and with
# what? Record the contexts:

# %%
contexts_seen = []


def recording_input_fn(context):
    contexts_seen.append(context)
    per_replica_batch = context.get_per_replica_batch_size(16)
    return (tf.data.Dataset.range(32)
            .shard(context.num_input_pipelines, context.input_pipeline_id)
            .batch(per_replica_batch, drop_remainder=True))


from_function = strategy.distribute_datasets_from_function(recording_input_fn)
print("calls:", len(contexts_seen))
print("num_input_pipelines:", contexts_seen[0].num_input_pipelines,
      "input_pipeline_id:", contexts_seen[0].input_pipeline_id)

# %% tags=["nbval-ignore-output"]
print("num_replicas_in_sync:", contexts_seen[0].num_replicas_in_sync)
for step, batch in enumerate(from_function):
    print(f"step {step}:", shares(batch))
assert contexts_seen[0].num_replicas_in_sync == replicas

# %% [markdown]
# On one machine (one worker, or one TPU host) the function is called **once**, with one input
# pipeline: `shard(1, 0)` keeps everything. So where do 8 per-replica batches come from? The
# strategy takes *consecutive elements* of that one dataset and hands them out in turn: element
# 0 to replica 0, element 1 to replica 1, and so on. Which is why the function must batch by the
# *per-replica* size. To see the rule, return batches of 3, whatever the context says:

# %% tags=["nbval-ignore-output"]
def batches_of_three(context):
    return tf.data.Dataset.range(60).batch(3)


first_step = shares(next(iter(strategy.distribute_datasets_from_function(batches_of_three))))
print(first_step)
assert first_step == [[3 * r, 3 * r + 1, 3 * r + 2] for r in range(replicas)]

# %% [markdown]
# Each replica got one whole element, in order: replica *k* gets element *k* of the step.
# That is what the API documentation says: the function is called on each worker's CPU, and
# "every replica on that worker will dequeue one batch of inputs" per step; the strategy
# "does not batch or shard" what the function returns
# ([`Strategy.distribute_datasets_from_function`](https://www.tensorflow.org/api_docs/python/tf/distribute/Strategy#distribute_datasets_from_function)).
# So with 8 replicas, a function that batched by the global 16 would give every replica 16
# examples: 8 times the batch you meant.
#
# `get_per_replica_batch_size` refuses a global batch the replicas cannot share evenly. A
# context made by hand shows it for 8 replicas on any machine:

# %%
eight_replicas = tf.distribute.InputContext(num_input_pipelines=1, input_pipeline_id=0,
                                            num_replicas_in_sync=8)
print("global 16 ->", eight_replicas.get_per_replica_batch_size(16), "per replica")
try:
    eight_replicas.get_per_replica_batch_size(10)
except ValueError as error:
    print(type(error).__name__ + ":", str(error).strip())

# %% [markdown]
# ### Exercise 2.6: the per-replica batch size, or a clear error
#
# Write `per_replica_batch_size(global_batch, num_replicas)`: return how many examples each
# replica gets, as an `int`. If the global batch does not divide evenly, or either number is
# 0 or negative, raise `ValueError` with a message that says what is wrong. (Rounding would
# hide the problem: replicas would then disagree on shapes, or examples would be lost.)

# %%
def per_replica_batch_size(global_batch, num_replicas):
    """Examples per replica for one step; ValueError unless it splits evenly."""
    # BEGIN SOLUTION
    if global_batch <= 0 or num_replicas <= 0:
        raise ValueError(f"need a positive global batch and replica count, got "
                         f"{global_batch} and {num_replicas}")
    if global_batch % num_replicas:
        raise ValueError(f"a global batch of {global_batch} does not split evenly over "
                         f"{num_replicas} replicas; use a multiple of {num_replicas}")
    return global_batch // num_replicas
    # END SOLUTION


# %%
check.ex_2_6(per_replica_batch_size)

# %% [markdown]
# ## 2. Explore: which example lands where?
#
# `placement` below batches a small dataset by a global batch, distributes it over a strategy,
# and returns, step by step, the examples each replica gets. The explorer calls it with a
# `MirroredStrategy` over the first *k* logical CPU devices, so you can change the replica
# count. On a TPU it offers only the real count: the cores are what they are.
# (`02_tpu_strategy_and_keras` says never to make a second strategy. These extra ones are safe
# because they create no variables and train nothing: they only show where examples land.)

# %%
import ipywidgets


def placement(strategy, dataset_size, global_batch, drop_remainder, options=None):
    """For each step, the list of examples each replica of `strategy` gets."""
    dataset = tf.data.Dataset.range(dataset_size).batch(global_batch, drop_remainder=drop_remainder)
    if options is not None:
        dataset = dataset.with_options(options)
    return [[value.numpy().tolist() for value in strategy.experimental_local_results(batch)]
            for batch in strategy.experimental_distribute_dataset(dataset)]


# %% tags=["nbval-ignore-output"]
steps = placement(strategy, dataset_size=20, global_batch=2 * replicas, drop_remainder=True)
for step, per_replica in enumerate(steps):
    print(f"step {step}:", per_replica)
assert all(len(share) == 2 for step in steps for share in step)

# %%
cpu_devices = [device.name for device in tf.config.list_logical_devices("CPU")]
on_cpu_fallback = (isinstance(strategy, tf.distribute.MirroredStrategy)
                   and all("CPU" in device for device in strategy.extended.worker_devices))
_strategies = {}


def strategy_with(count):
    """The course strategy, or (on the CPU fallback) one over the first `count` CPU devices."""
    if not on_cpu_fallback or count == strategy.num_replicas_in_sync:
        return strategy
    if count not in _strategies:
        _strategies[count] = tf.distribute.MirroredStrategy(cpu_devices[:count])
    return _strategies[count]


def show_placement(replica_count, global_batch, drop_remainder, dataset_size=20):
    for step, per_replica in enumerate(placement(strategy_with(replica_count), dataset_size,
                                                 global_batch, drop_remainder)):
        print(f"step {step}: " + "  ".join(f"r{r}:{share}" for r, share in enumerate(per_replica)))


replica_choices = (list(range(1, len(cpu_devices) + 1)) if on_cpu_fallback
                   else [strategy.num_replicas_in_sync])

# %% [markdown]
# The explorer needs a live kernel: run the cell. A static view of this notebook (GitHub, a
# rendered page) shows only a line of text in its place.

# %% tags=["nbval-ignore-output"]
ipywidgets.interact(show_placement,
                    replica_count=ipywidgets.Dropdown(options=replica_choices, value=replica_choices[-1]),
                    global_batch=ipywidgets.IntSlider(value=8, min=1, max=24),
                    drop_remainder=ipywidgets.Checkbox(value=False),
                    dataset_size=ipywidgets.IntSlider(value=20, min=1, max=40));

# %% [markdown]
# Things to try: a global batch the replica count does not divide; `drop_remainder` on and
# off with a dataset size that is not a multiple of the global batch; one replica.

# %% [markdown]
# ## 3. Sharding: across hosts, not across replicas
#
# **Sharding** gives each *input pipeline* its own part of the data. There is one input
# pipeline per worker, that is, per host machine: one on a single TPU VM or on this machine,
# one per host on a multi-host TPU slice. Within one host, replicas are not fed by sharding:
# they get their parts of each step's data as you saw above.
#
# With `experimental_distribute_dataset`, TensorFlow shards across workers for you, as the
# dataset's `AutoShardPolicy` says
# ([tf.data.experimental.AutoShardPolicy](https://www.tensorflow.org/api_docs/python/tf/data/experimental/AutoShardPolicy);
# [distributed input tutorial](https://www.tensorflow.org/tutorials/distribute/input)):
#
# | Policy | What each worker gets |
# |---|---|
# | `AUTO` (default) | shards by files if it can find the files the dataset reads, else by data |
# | `FILE` | its own subset of the input files (an error if there are fewer files than workers) |
# | `DATA` | every worker reads everything and keeps its every *n*-th element |
# | `HINT` | replaces `shard(tf.data.experimental.SHARD_HINT, ...)` in your pipeline by the worker's shard |
# | `OFF` | a full copy of the dataset |
#
# With `distribute_datasets_from_function` there is no autosharding: sharding is yours.

# %% [markdown]
# > **Myth:** "Set `AutoShardPolicy.DATA` (or `FILE`) so each of your 8 TPU cores gets its own
# > shard." **Fact:** the policy divides data among *workers*. On one host there is one worker,
# > so every policy gives the same split as `OFF`, as this cell shows.

# %%
Policy = tf.data.experimental.AutoShardPolicy


def sharding_options(policy):
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = policy
    return options


policies = [Policy.OFF, Policy.AUTO, Policy.FILE, Policy.DATA, Policy.HINT]
placements = {policy.name: placement(strategy, 32, 16, True, sharding_options(policy))
              for policy in policies}
print("every policy gives the same split as OFF:",
      all(p == placements["OFF"] for p in placements.values()))

# %% [markdown]
# ### `shard` done wrong, and done right
#
# > **Myth:** "In the input function, shard by replica:
# > `dataset.shard(context.num_replicas_in_sync, context.input_pipeline_id)`."
# > **Fact:** the function is called once per *input pipeline*, not once per replica. On one
# > host it is called once, so that line keeps one eighth of the data and throws the rest away.

# %% tags=["nbval-ignore-output"]
def shard_by_replica_count(context):  # wrong
    return (tf.data.Dataset.range(32)
            .shard(context.num_replicas_in_sync, context.input_pipeline_id)
            .batch(context.get_per_replica_batch_size(16)))


seen = [example for batch in strategy.distribute_datasets_from_function(shard_by_replica_count)
        for share in shares(batch) for example in share]
print(f"one epoch saw {len(seen)} of 32 examples: {seen}")
assert len(seen) == 32 // replicas

# %% [markdown]
# Shard by `num_input_pipelines`, and do it **first**, before `shuffle` and `batch`
# ([`Dataset.shard`](https://www.tensorflow.org/api_docs/python/tf/data/Dataset#shard) says
# to shard before any randomizing operator, and early). Two reasons, each shown below with
# two hand-made input contexts, as a 2-host slice would have:
#
# 1. **Shard before shuffling.** Each host shuffles with its own random order, so sharding
#    after an unseeded shuffle gives the hosts overlapping shares: some examples twice per
#    epoch, others never.
# 2. **Shard early.** Whatever comes before `shard` runs on *all* the data on *every* host:
#    count how often an expensive `map` runs.

# %%
two_hosts = [tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=host,
                                        num_replicas_in_sync=8) for host in range(2)]


def examples_of(dataset):
    return sorted(int(example) for example in dataset)


shuffle_then_shard = [examples_of(tf.data.Dataset.range(40).shuffle(40)
                                  .shard(context.num_input_pipelines, context.input_pipeline_id))
                      for context in two_hosts]
shard_then_shuffle = [examples_of(tf.data.Dataset.range(40)
                                  .shard(context.num_input_pipelines, context.input_pipeline_id)
                                  .shuffle(20))
                      for context in two_hosts]
for name, hosts in [("shuffle, then shard", shuffle_then_shard), ("shard, then shuffle", shard_then_shuffle)]:
    both = set(hosts[0]) & set(hosts[1])
    never = set(range(40)) - set(hosts[0]) - set(hosts[1])
    print(f"{name}: on both hosts: {len(both) > 0}, on neither: {len(never) > 0}")

# %%
map_calls = []


def expensive_decode(example):
    map_calls.append(1)  # runs in Python: counts each decoded example
    return example


def decoded(example):
    return tf.py_function(expensive_decode, [example], tf.int64)


decode_counts = {}
for label, build in [("map, then shard", lambda ds, c: ds.map(decoded).shard(c.num_input_pipelines, c.input_pipeline_id)),
                     ("shard, then map", lambda ds, c: ds.shard(c.num_input_pipelines, c.input_pipeline_id).map(decoded))]:
    map_calls.clear()
    for context in two_hosts:
        examples_of(build(tf.data.Dataset.range(40), context))
    decode_counts[label] = len(map_calls)
print("40 examples, 2 hosts, examples decoded:", decode_counts)

# %% [markdown]
# ### Exercise 2.7: an input function that shards correctly
#
# Write `make_input_fn(features, labels, global_batch)`. It returns `input_fn(input_context)`
# for `strategy.distribute_datasets_from_function`, which builds a dataset of
# `(features, labels)` pairs that
# - gives this input pipeline only its share of the examples: shard by input pipeline, so
#   pipeline *i* of *n* gets examples *i*, *i + n*, *i + 2n*, …, **before** any shuffle or batch
#   (shuffling after sharding is welcome);
# - batches by the per-replica batch size, with `drop_remainder=True` (static shapes).
#
# The checker calls your `input_fn` with hand-made contexts (2 and 3 input pipelines, as on
# several hosts) and through the course's strategy.

# %%
def make_input_fn(features, labels, global_batch):
    """An input function for distribute_datasets_from_function: shard, shuffle, batch per replica."""
    # BEGIN SOLUTION
    def input_fn(input_context):
        per_replica_batch = input_context.get_per_replica_batch_size(global_batch)
        dataset = tf.data.Dataset.from_tensor_slices((features, labels))
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        dataset = dataset.shuffle(len(labels))
        return dataset.batch(per_replica_batch, drop_remainder=True).prefetch(tf.data.AUTOTUNE)

    return input_fn
    # END SOLUTION


# %%
check.ex_2_7(make_input_fn)

# %% [markdown]
# Here it is feeding the strategy (once you have solved the exercise): every replica gets a
# batch of the same, static size.

# %% tags=["nbval-ignore-output"]
features = np.arange(64 * 3, dtype=np.float32).reshape(64, 3)
labels = np.arange(64, dtype=np.int32)
try:
    train_data = strategy.distribute_datasets_from_function(make_input_fn(features, labels, 4 * replicas))
    first_features, first_labels = next(iter(train_data))
    feature_shapes = [tuple(value.shape) for value in strategy.experimental_local_results(first_features)]
    print("each replica's features:", feature_shapes)
    assert feature_shapes == [(4, 3)] * replicas
except NotImplementedError:
    print("Solve exercise 2.7 first.")

# %% [markdown]
# ## 4. Feeding the replicas fast
#
# While the replicas compute a step, the host should already be preparing the next batch. If
# it is not, the accelerator waits. The standard remedies
# ([Better performance with the tf.data API](https://www.tensorflow.org/guide/data_performance)):
# `map(..., num_parallel_calls=tf.data.AUTOTUNE)` runs the per-example work on several
# threads; `cache()` keeps the result after the first epoch; `prefetch(tf.data.AUTOTUNE)`
# prepares batches while the step runs.
#
# Below, decoding an example is a `py_function` that sleeps 2 ms (a stand-in for reading and
# decoding a file), and a training step is a 16 ms sleep. tf.data also rewrites pipelines on
# its own: by default it fuses `map` with `batch`, adds a prefetch at the end, and
# parallelizes maps it knows to be stateless (not this `py_function`)
# ([`tf.data.experimental.OptimizationOptions`](https://www.tensorflow.org/api_docs/python/tf/data/experimental/OptimizationOptions)).
# To measure what each line of code does, the first four bars switch those default rewrites
# off; the last bar shows the plain pipeline with them on.

# %%
import time


def slow_decode(example):
    time.sleep(0.002)
    return example * 2


def decode(example):
    decoded_example = tf.py_function(slow_decode, [example], tf.int64)
    decoded_example.set_shape(example.shape)
    return decoded_example


def train_one_epoch(dataset):
    for batch in dataset:
        time.sleep(0.016)  # a stand-in for a training step


as_written = tf.data.Options()
as_written.experimental_optimization.apply_default_optimizations = False
raw = tf.data.Dataset.range(64)
parallel = raw.map(decode, num_parallel_calls=tf.data.AUTOTUNE)
pipelines = {
    "plain map": raw.map(decode).batch(8).with_options(as_written),
    "parallel map": parallel.batch(8).with_options(as_written),
    "+ prefetch": parallel.batch(8).prefetch(tf.data.AUTOTUNE).with_options(as_written),
    "+ cache, 2nd epoch": parallel.cache().batch(8).prefetch(tf.data.AUTOTUNE).with_options(as_written),
    "plain, default rewrites": raw.map(decode).batch(8),
}
train_one_epoch(pipelines["+ cache, 2nd epoch"])  # the first epoch fills the cache
seconds = {label: tpu_course.measure.time_calls(train_one_epoch, dataset, repeats=3)
           for label, dataset in pipelines.items()}

# %% tags=["nbval-ignore-output"]
figure = tpu_course.measure.bar_chart(seconds, "One epoch: 64 slow decodes, 8 steps (this machine)")
speedups = tpu_course.measure.ratios(seconds)
print({label: round(ratio, 2) for label, ratio in speedups.items()})
assert all(t > 0 for times in seconds.values() for t in times)  # ratios this small are not asserted: load moves them

# %% [markdown]
# What to look for: each remedy shortens the epoch, down to about the time of the steps
# alone, 8 × 16 ms: then the input keeps up and the step is the bottleneck, and caching
# cannot do much more. Parallel `map` helps here even on 2 cores because the decode sleeps
# (as reading from disk or network waits); CPU-bound decoding gains only as many times as
# there are free cores. The last bar, the plain pipeline with tf.data's default rewrites,
# moves from run to run here: the prefetch they add can overlap a little of the work, but they
# cannot parallelize this `py_function`. So leave the defaults on, and still write the
# remedies yourself. On a TPU host the same remedies apply; only the ratios change.

# %% [markdown]
# ## 5. Errors gallery for module 02
#
# | You see | Cause | Fix | Shown in |
# |---|---|---|---|
# | `ValueError: The global_batch_size ... is not divisible by num_replicas_in_sync` | `get_per_replica_batch_size` with a global batch the replicas cannot share | a global batch that is a multiple of the replica count | below |
# | `IndexError: list index out of range` from `experimental_distribute_dataset` | the dataset is not batched: there is no global batch to split | `.batch(global_batch, drop_remainder=True)` before distributing | below |
# | `AttributeError: 'DistributedDataset' object has no attribute 'batch'` | transforming a dataset after distributing it | do all of tf.data first, distribute last | below |
# | `OutOfRangeError: ... End of sequence` | `next(iterator)` inside a `tf.function`, one step after the last batch | run a known number of steps on a `.repeat()`ed dataset, or loop `for batch in dataset` inside the `tf.function` | below |
# | *no error*: each replica reads a different value of one variable | a variable created outside `strategy.scope()`, updated in replica context | create variables inside `strategy.scope()` | below |
# | `Trying to access resource ... located in device ...CPU:1 from device ...CPU:0` | `jit_compile=True` around `strategy.run` with variables, under `MirroredStrategy` over several devices (the CPU fallback's logical CPUs, or several GPUs): an XLA cluster runs on one device ([XLA known issues](https://www.tensorflow.org/xla/known_issues)) | do not wrap `strategy.run` in `jit_compile=True`; on a TPU the replicated step is compiled anyway | [`01_xla_and_static_shapes`](../02_compile/01_xla_and_static_shapes.ipynb), section 6 |
# | `You must feed a value for placeholder tensor ...` | under `MirroredStrategy` on the fallback: an optimizer (Adam) not built before the first replicated step, or Keras `steps_per_execution > 1` | `optimizer.build(model.trainable_variables)` inside `strategy.scope()`, before the first step; `steps_per_execution=1` there, or a custom loop | [`02_tpu_strategy_and_keras`](../02_compile/02_tpu_strategy_and_keras.ipynb), sections 3 and 5 |
# | `Detected unsupported operations when trying to compile graph ...` | an op with no XLA kernel (`py_function`, strings) in a compiled step | move that work into tf.data or after the step | [`01_xla_and_static_shapes`](../02_compile/01_xla_and_static_shapes.ipynb), section 1 |
# | *no error*: one compiled program per batch shape | a `None` batch dimension under XLA: the partial last batch compiles again | `drop_remainder=True` | [`01_xla_and_static_shapes`](../02_compile/01_xla_and_static_shapes.ipynb), section 4 |
#
# The first five rows are new in this notebook, and reproduced below; the notebooks named in
# the last column show the others. `report` prints the error's type and its key phrase; the
# rest of a message names devices and graph nodes, which differ from machine to machine.

# %%
def report(error, key_phrase):
    message = str(error)
    shown = key_phrase if key_phrase in message else (message.splitlines() or [""])[0][:100]
    print(f"{type(error).__name__}: ...{shown}...")
    return key_phrase in message


try:
    eight_replicas.get_per_replica_batch_size(12)
except ValueError as error:
    report(error, "is not divisible by")

# %%
try:
    strategy.experimental_distribute_dataset(tf.data.Dataset.range(32))
    print("(no error: with one replica there is nothing to split)")
except IndexError as error:
    report(error, "list index out of range")

# %%
distributed = strategy.experimental_distribute_dataset(tf.data.Dataset.range(32).batch(16))
try:
    distributed.batch(2)
except AttributeError as error:
    report(error, "object has no attribute 'batch'")

# %%
two_batches = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.range(32).batch(16)))


@tf.function
def double_next_batch(iterator):
    return strategy.run(lambda batch: batch * 2, args=(next(iterator),))


try:
    for step in range(3):
        double_next_batch(two_batches)
except tf.errors.OutOfRangeError as error:
    report(error, "End of sequence")
    print("at step", step)

# %% tags=["nbval-ignore-output"]
unscoped = tf.Variable(0.0)  # created outside strategy.scope()


def add_one():
    unscoped.assign_add(1.0)
    return unscoped.read_value()


@tf.function
def add_one_on_every_replica():
    return strategy.run(add_one)


try:
    print("replicas read:", shares(add_one_on_every_replica()), "variable:", float(unscoped.numpy()))
except Exception as error:  # elsewhere than on the fallback, this may be refused
    report(error, "device")
if on_cpu_fallback:
    assert float(unscoped.numpy()) == replicas

# %% [markdown]
# No error here: on the fallback the one variable lives on one device, every replica adds 1 to
# that same copy, and each reads the total at its own moment. Nothing is mirrored, and
# nothing is aggregated the way the variables of
# [`02_variables_compiled_and_replicated`](../01_assignment/02_variables_compiled_and_replicated.ipynb)
# (module 01) were. Create variables in `strategy.scope()`.

# %% [markdown]
# ## Wrap-up
#
# You can now:
# - tell the global batch from the per-replica batch, and read which examples each replica gets;
# - explain how `distribute_datasets_from_function` feeds replicas on one host (called once; consecutive elements go to replicas in turn) and write an input function that shards by input pipeline and batches per replica;
# - say what each `AutoShardPolicy` does, and why none of them splits data among one host's replicas;
# - avoid the `shard` mistakes that lose or duplicate data, and shard early;
# - measure an input pipeline and speed it up with parallel `map`, `cache` and `prefetch`;
# - read module 02's common errors and fix them.
#
# **Check your understanding**
# 1. With 8 replicas and a global batch of 64, what batch size should an input function for `distribute_datasets_from_function` use, and what happens if it uses 64?
# 2. On a single TPU VM, how many times is your input function called, and what does `shard(context.num_input_pipelines, context.input_pipeline_id)` do there? Why write it anyway?
# 3. Why does `shuffle` before `shard` lose and duplicate examples across hosts, while `shard` before `shuffle` does not?
# 4. After adding `prefetch`, your epoch takes as long as the steps alone. Will `cache()` make it much faster? Why not?
# 5. Your step runs on the CPU fallback, but on a TPU it is slow and the log says ops without XLA kernels were placed on the CPU (or, with soft device placement off, it fails with "Detected unsupported operations"). How could you have caught it on the fallback, and what do you move, and where?
#
# **Further reading**
# - [Distributed input](https://www.tensorflow.org/tutorials/distribute/input) (TensorFlow tutorial): both ways of distributing data, sharding, partial batches
# - [`tf.distribute.InputContext`](https://www.tensorflow.org/api_docs/python/tf/distribute/InputContext) and [`tf.data.experimental.AutoShardPolicy`](https://www.tensorflow.org/api_docs/python/tf/data/experimental/AutoShardPolicy)
# - [Better performance with the tf.data API](https://www.tensorflow.org/guide/data_performance) and [Analyze tf.data performance with the TF Profiler](https://www.tensorflow.org/guide/data_performance_analysis)
# - [Use TPUs](https://www.tensorflow.org/guide/tpu) (TensorFlow guide), its input section in particular
