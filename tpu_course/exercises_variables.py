"""Exercises of 01_assignment/02_variables_compiled_and_replicated: variables that persist,
compile and replicate."""
from .checking import Exercise, Incorrect, LearnerCodeRaised, call, expect_equal


def _number(what, value):
    """A Python float from a scalar the learner returned; Incorrect if it is not one."""
    if value is None:
        raise Incorrect(f"{what}: it returned None; return the new total (assign_add returns it)")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise Incorrect(f"{what}: expected a number, got {type(value).__name__} {value!r:.60}") from None


def _raises_singleton_error(raised):
    return isinstance(raised.error, ValueError) and "singleton tf.Variables" in str(raised.error)


# ---- ex_1_4: a counter whose variable is created once ------------------------------------

def _check_counter(answer):
    import tensorflow as tf

    def add(counter, amount, where, expected):
        try:
            got = call(counter, tf.constant(amount), described_as=f"tf.constant({amount}) ({where})")
        except LearnerCodeRaised as raised:
            if _raises_singleton_error(raised):
                raise Incorrect(f"calling the counter {where} raised tf.function's 'singleton "
                                "tf.Variables' ValueError: it still creates a tf.Variable on every "
                                "call (or every trace)") from None
            raise
        if hasattr(got, "shape") and len(got.shape) > 0:
            raise Incorrect(f"the counter returned a value of shape {tuple(got.shape)}, not one number")
        expect_equal(f"the total returned by the call with {amount} ({where})",
                     _number(f"the call with {amount} ({where})", got), expected)

    counter = call(answer, described_as="no arguments")
    if not callable(counter):
        raise Incorrect(f"make_counter() should return the counter itself, something you call "
                        f"with an amount; it returned {type(counter).__name__} {counter!r:.60}")
    total = 0.0
    for amount in (1.0, 2.5, -0.5):
        total += amount
        add(counter, amount, "called directly", total)
    # A training step calls the counter from inside its own tf.function.
    inside_a_step = tf.function(lambda amount: counter(amount))
    for amount in (2.0, 0.0):
        total += amount
        add(inside_a_step, amount, "from inside another tf.function", total)
    second = call(answer, described_as="no arguments (a second time)")
    add(second, 4.0, "on a second, new counter", 4.0)
    total += 1.0
    add(counter, 1.0, "on the first counter, after the second was used", total)


ex_1_4 = Exercise(
    "ex_1_4", "a counter whose variable is created once", _check_counter,
    hints=[
        "The variable must outlive each call: create it once, when make_counter() runs, not "
        "inside the function that is called on every step.",
        "Inside make_counter: total = tf.Variable(0.0), then define a @tf.function that takes "
        "an amount and returns total.assign_add(amount); return that function.",
        "Each call of make_counter() must make a new variable, so that two counters do not share "
        "one total: do not create it at the top level of the notebook.",
    ])


# ---- ex_1_5: a jit-compiled step counter that traces once --------------------------------

def _check_step_counter(answer):
    import tensorflow as tf

    def made():
        got = call(answer, described_as="no arguments")
        if not (isinstance(got, (tuple, list)) and len(got) == 2):
            raise Incorrect(f"make_step_counter() should return a pair (counter, step); it returned "
                            f"{type(got).__name__} {got!r:.60}")
        counter, step = got
        if not isinstance(counter, tf.Variable):
            raise Incorrect(f"the counter should be a tf.Variable, not {type(counter).__name__}")
        if counter.dtype != tf.int32:
            raise Incorrect(f"the counter's dtype is {counter.dtype.name}, expected int32")
        if not hasattr(step, "experimental_get_tracing_count"):
            raise Incorrect(f"step should be a tf.function, but it is {type(step).__name__} "
                            f"{getattr(step, '__name__', '')}".rstrip())
        expect_equal("the counter before any step", counter.numpy(), 0)
        return counter, step

    counter, step = made()
    total, calls = 0, 0
    # Plain Python ints, as a training loop passes them, then a tensor.
    for steps, shown in ((3, "3"), (1, "1"), (0, "0"), (5, "5"), (-2, "-2"),
                         (tf.constant(2), "tf.constant(2)")):
        call(step, steps, described_as=shown)
        total, calls = total + int(steps), calls + 1
        expect_equal(f"the counter after step({shown}) (the sum of all the steps so far)",
                     counter.numpy(), total)
    traces = step.experimental_get_tracing_count()
    if traces != 1:
        raise Incorrect(f"step was traced {traces} times in {calls} calls, once for each new Python "
                        "number; it should be traced (and compiled) once")
    try:
        step.experimental_get_compiler_ir(tf.constant(1))(stage="hlo")
    except ValueError as error:
        if "jit_compile" in str(error):
            raise Incorrect("step is not compiled with XLA: it needs jit_compile=True") from None
        raise
    other_counter, other_step = made()
    call(other_step, 4)
    expect_equal("a second counter after step(4)", other_counter.numpy(), 4)
    expect_equal("the first counter after the second one stepped", counter.numpy(), total)


ex_1_5 = Exercise(
    "ex_1_5", "a jit-compiled step counter that traces once", _check_step_counter,
    hints=[
        "Create counter = tf.Variable(0, dtype=tf.int32) inside make_step_counter, outside step.",
        "tf.function(jit_compile=True) compiles with XLA. A plain Python number as an argument is "
        "part of the trace's signature, so each new number means a new trace and a new "
        "compilation.",
        "Give the tf.function input_signature=[tf.TensorSpec([], tf.int32)]: then a Python int "
        "is converted to an int32 tensor, and one trace serves every value.",
    ])


# ---- ex_1_6: a replicated counter that every replica agrees on ---------------------------

BATCH = 4
# Real (not padding) examples on replica r, in each step the checker runs.
STEPS = (lambda r: r % 3 + 1, lambda r: 0 if r % 2 else BATCH, lambda r: 0)


def _masks(strategy, real):
    import tensorflow as tf

    def mask(context):
        count = real(context.replica_id_in_sync_group)
        return tf.constant([1.0] * count + [0.0] * (BATCH - count))
    return strategy.experimental_distribute_values_from_function(mask)


def _check_example_counter(answer):
    import tensorflow as tf
    from .hardware import connect_quietly
    for strategy in (connect_quietly(), tf.distribute.get_strategy()):
        replicas = strategy.num_replicas_in_sync
        described = f"a strategy of {replicas} replica(s)"
        got = call(answer, strategy, described_as=described)
        if not (isinstance(got, (tuple, list)) and len(got) == 2):
            raise Incorrect(f"make_example_counter(strategy) should return a pair (counter, "
                            f"count_examples); it returned {type(got).__name__} {got!r:.60}")
        counter, count_examples = got
        if not isinstance(counter, tf.Variable):
            raise Incorrect(f"the counter should be a tf.Variable, not {type(counter).__name__}")
        if not strategy.extended.variable_created_in_scope(counter):
            raise Incorrect(f"with {described}, the counter was created outside strategy.scope(), "
                            "so it is one variable on one device, not a copy on every replica")

        @tf.function
        def one_step(masks):
            strategy.run(count_examples, args=(masks,))

        total = 0
        for number, real in enumerate(STEPS, start=1):
            call(one_step, _masks(strategy, real),
                 described_as=f"the masks of step {number}, in replica context, with {described}")
            total += sum(real(replica) for replica in range(replicas))
            copies = [float(copy) for copy in strategy.experimental_local_results(counter)]
            if len(set(copies)) > 1:
                local = (" (synchronization=ON_READ keeps a separate count on each replica)"
                         if counter.synchronization == tf.VariableSynchronization.ON_READ else "")
                raise Incorrect(f"after step {number}, the replicas' copies of the counter "
                                f"disagree: {[round(c, 3) for c in copies]}{local}")
            expect_equal(f"with {replicas} replica(s), every copy of the counter after step "
                         f"{number}", copies[0], total)


ex_1_6 = Exercise(
    "ex_1_6", "a replicated counter of all the examples seen", _check_example_counter,
    hints=[
        "Create the counter inside `with strategy.scope():`, so that every replica has a copy.",
        "In count_examples, this replica's real examples are tf.reduce_sum(mask); add them with "
        "counter.assign_add(...).",
        "The aggregation decides what the replicas' assign_adds become: which one adds up "
        "what every replica contributed, and gives every copy the result?",
    ])
