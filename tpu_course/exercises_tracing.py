"""Exercises of 01_assignment / 01_tensors_and_tracing: functional updates and tracing."""
import numbers

from .checking import Exercise, Incorrect, NotAttempted, call

# ---- ex_1_1: replace negatives without assigning into the tensor ---------------------------


def _describe(x):
    kind = "tf.Variable" if _is_variable(x) else "tensor"
    article = "an" if x.dtype.name[0] in "aeiou" else "a"
    return f"{article} {x.dtype.name} {kind} of shape {tuple(x.shape)}"


def _is_variable(value):
    import tensorflow as tf
    return isinstance(value, tf.Variable)


def _replace_negatives_cases():
    """(input, value) pairs: several dtypes and shapes, zeros, an empty tensor, a variable."""
    import tensorflow as tf
    return [
        (tf.constant([[-1.5, 0.0, 2.0], [3.0, -0.25, -7.0]]), 0.5),
        (tf.constant([4, -3, 0, -1, 9], dtype=tf.int32), 7),
        (tf.constant([[[-2.0], [5.0]], [[0.0], [-1e-9]]], dtype=tf.float64), -1.0),
        (tf.constant([1, 2, 3], dtype=tf.int64), 0),          # nothing to replace
        (tf.zeros([0, 3], dtype=tf.float32), 1.0),             # empty
        (tf.constant(-4.0, dtype=tf.float16), 2.0),            # a scalar
        (tf.Variable([-1.0, 1.0, -2.0]), 0.0),                 # must stay unchanged
    ]


def _check_replace_negatives(answer):
    import numpy as np
    import tensorflow as tf
    for x, value in _replace_negatives_cases():
        before = np.array(x.numpy(), copy=True)
        described = f"{_describe(x)} and value={value!r}"
        got = call(answer, x, value, described_as=described)
        if not np.array_equal(x.numpy(), before):
            raise Incorrect(f"called with {described}, it changed its input; leave the input as it "
                            "is and return a new tensor")
        if _is_variable(got):
            raise Incorrect(f"called with {described}, it returned a tf.Variable; return a new "
                            "tensor instead (a variable is for state that lives across calls)")
        if not tf.is_tensor(got):
            raise Incorrect(f"called with {described}, it returned a {type(got).__name__}, not a "
                            "tensor: build the result with TensorFlow ops")
        if got.dtype != x.dtype:
            raise Incorrect(f"called with {described}, the result's dtype is {got.dtype.name}, "
                            f"expected {x.dtype.name} (the input's)")
        if tuple(got.shape) != tuple(x.shape):
            raise Incorrect(f"called with {described}, the result's shape is {tuple(got.shape)}, "
                            f"expected {tuple(x.shape)} (the input's)")
        expected = np.where(before < 0, np.array(value, dtype=before.dtype), before)
        differs = np.argwhere(got.numpy() != expected)
        if differs.size:
            where = tuple(int(i) for i in differs[0])
            raise Incorrect(f"called with {described}, the element at index {list(where)} was "
                            f"{before[where].item()!r} and became {got.numpy()[where].item()!r}, "
                            f"expected {expected[where].item()!r}")


ex_1_1 = Exercise(
    "ex_1_1", "replace negative values without item assignment", _check_replace_negatives,
    hints=[
        "You cannot write into a tensor. Build a new one: for each element, keep it or take `value`.",
        "tf.where(condition, a, b) picks from a where condition is True and from b elsewhere; "
        "a Python number for a or b is converted to the other argument's dtype.",
        "Negative means strictly below zero: x < 0. Return the tensor tf.where gives you.",
    ])


# ---- ex_1_2: a tf.function that traces once --------------------------------------------------


def sum_of_powers(values, power):
    """sum(values ** power) for a 1-D float32 vector and an integer power."""
    import tensorflow as tf
    return tf.reduce_sum(values ** tf.cast(power, values.dtype))


def largest_times_power(values, power):
    """A second function of the same arguments, to see compile_once wraps what it is given."""
    import tensorflow as tf
    return tf.reduce_max(tf.concat([values, [0.0]], axis=0)) * tf.cast(power, values.dtype)


def _compile_once_calls():
    """(values, power, description) calls: lengths vary, powers are Python ints."""
    import numpy as np
    import tensorflow as tf
    return [
        (tf.constant([1.0, 2.0, 3.0]), 2, "a float32 tensor of length 3 and power=2"),
        (tf.constant([0.5, -1.0, 2.0, 4.0, 1.5]), 3, "a float32 tensor of length 5 and power=3"),
        (np.array([2.0, 3.0, 1.0, 0.5], dtype=np.float32), 1,
         "a float32 NumPy array of length 4 and power=1"),
        (tf.constant([3.0]), 0, "a float32 tensor of length 1 and power=0"),
        (tf.zeros([0]), 2, "an empty float32 tensor and power=2"),
        (tf.constant([1.5, -2.0]), 2, "a float32 tensor of length 2 and power=2"),
    ]


def _numpy_result(function, values, power):
    import numpy as np
    values = np.asarray(values, dtype=np.float32)
    if function is sum_of_powers:
        return float(np.sum(values ** np.float32(power)))
    return float(np.max(np.concatenate([values, [0.0]])) * power)


def _check_compile_once(answer):
    import numpy as np
    for function in (sum_of_powers, largest_times_power):
        compiled = call(answer, function, described_as=f"the function {function.__name__}")
        if compiled is None:
            raise Incorrect("compile_once returned None; return the tf.function you built")
        if not hasattr(compiled, "experimental_get_tracing_count"):
            raise Incorrect(f"compile_once returned a {type(compiled).__name__}, which is not a "
                            "tf.function (it has no experimental_get_tracing_count); return "
                            "tf.function(...) itself, not a wrapper around it")
        traces_before = compiled.experimental_get_tracing_count()
        calls = _compile_once_calls()
        for values, power, described in calls:
            got = call(compiled, values, power, described_as=f"{described} ({function.__name__})")
            expected = _numpy_result(function, values, power)
            try:
                got_number = float(got)
            except (TypeError, ValueError):
                raise Incorrect(f"with {described}, the compiled {function.__name__} returned "
                                f"{type(got).__name__} {got!r:.60}, not one number") from None
            if not np.isclose(got_number, expected, rtol=1e-5, atol=1e-6):
                raise Incorrect(f"with {described}, the compiled {function.__name__} returned "
                                f"{got_number:g}, expected {expected:g}; it must compute what "
                                "the function it was given computes")
        traces = compiled.experimental_get_tracing_count() - traces_before
        if traces > 1:
            raise Incorrect(f"the compiled {function.__name__} traced {traces} times for "
                            f"{len(calls)} calls (vectors of different lengths, different Python "
                            "int powers); it should trace once")


ex_1_2 = Exercise(
    "ex_1_2", "a tf.function that traces once", _check_compile_once,
    hints=[
        "A plain tf.function traces again for every new Python int and every new vector length. "
        "Count: experimental_get_tracing_count().",
        "Tell tf.function in advance which inputs to expect: input_signature=[spec for values, "
        "spec for power], each a tf.TensorSpec(shape, dtype). Python ints are then converted to "
        "tensors.",
        "A None in a TensorSpec's shape means 'any length': tf.TensorSpec([None], tf.float32) for "
        "the vector, tf.TensorSpec([], tf.int32) for the scalar power.",
    ])


# ---- ex_1_3: predict the number of traces ----------------------------------------------------

# Each sequence starts from a fresh `scale`; the learner reads this code (print_sequences) and
# predicts experimental_get_tracing_count() at its end. The checker runs the very same text.
_SCALE = '''\
@tf.function{options}
def scale(x, factor):
    return x * factor
'''

SEQUENCES = {
    "A": ("", '''\
for factor in [1, 2, 3, 2]:
    scale(tf.constant([1.0, 2.0]), factor)'''),
    "B": ("", '''\
for factor in [1.0, 2.0, 3.0, 2.0]:
    scale(tf.constant([1.0, 2.0]), tf.constant(factor))'''),
    "C": ("", '''\
for length in [2, 3, 2, 4]:
    scale(tf.ones([length]), tf.constant(2.0))'''),
    "D": ("(reduce_retracing=True)", '''\
for length in [2, 3, 2, 4, 5]:
    scale(tf.ones([length]), tf.constant(2.0))'''),
    "E": ("", '''\
scale(tf.constant([1.0, 2.0]), tf.constant(2.0))
scale(tf.constant([1, 2]), tf.constant(2))
scale(tf.constant([3.0, 4.0]), tf.constant(5.0))'''),
}

_WHERE_TO_LOOK = {
    "A": "look at which argument is a Python number, and which of its values repeat",
    "B": "think about what a trace is keyed on for a tensor argument: its value, or its shape and dtype",
    "C": "a trace is kept for each shape already seen; count only the shapes that are new",
    "D": "think about which shapes the second trace accepts when reduce_retracing=True",
    "E": "compare the dtypes and shapes of the three calls",
}


def sequence_code(name):
    """The full code of one sequence, fresh function included."""
    options, calls = SEQUENCES[name]
    return _SCALE.format(options=options) + "\n" + calls


def print_sequences():
    """Print every sequence's code, for the learner to predict from."""
    for name in SEQUENCES:
        print(f"# --- sequence {name} ---")
        print(sequence_code(name))
        print()


def actual_traces(name):
    """Run one sequence on a fresh function; how many times it traced."""
    import tensorflow as tf
    namespace = {"tf": tf}
    exec(sequence_code(name), namespace)
    return namespace["scale"].experimental_get_tracing_count()


def _check_predictions(answer):
    if answer is ... or answer is None:
        raise NotAttempted()
    if not hasattr(answer, "keys") or not hasattr(answer, "__getitem__"):
        raise Incorrect(f"expected a dict of predictions, like {{'A': 1, ...}}, got "
                        f"{type(answer).__name__}")
    unknown = sorted(str(key) for key in answer.keys() if key not in SEQUENCES)
    if unknown:
        raise Incorrect(f"there is no sequence {unknown[0]!r}; the sequences are "
                        f"{', '.join(SEQUENCES)}")
    for name in SEQUENCES:
        if name not in answer or answer[name] is ...:
            raise Incorrect(f"no prediction for sequence {name!r} yet")
        predicted = answer[name]
        is_whole = (isinstance(predicted, numbers.Integral)
                    or (isinstance(predicted, numbers.Real) and float(predicted).is_integer()))
        if isinstance(predicted, bool) or not is_whole or predicted < 0:
            raise Incorrect(f"the prediction for sequence {name!r} is {predicted!r}; "
                            "predict a whole number of traces")
    for name in SEQUENCES:
        if int(answer[name]) != actual_traces(name):
            raise Incorrect(f"your prediction for sequence {name} ({answer[name]!r}) is off: "
                            f"{_WHERE_TO_LOOK[name]}")


ex_1_3 = Exercise(
    "ex_1_3", "predict how many times a function traces", _check_predictions,
    hints=[
        "A tensor argument is traced by its dtype and shape, never by its value. A Python "
        "argument (int, float, list, ...) is traced by its value.",
        "Traces are cached: a call whose arguments match a trace already made runs it without "
        "tracing again.",
        "With reduce_retracing=True, the second shape seen for an argument makes a trace with that "
        "dimension unknown (None), which later lengths reuse.",
    ])
