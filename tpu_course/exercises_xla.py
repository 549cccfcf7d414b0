"""Exercises of 02_compile/01_xla_and_static_shapes: make code XLA can compile, with static shapes."""
import re

from .checking import Exercise, Incorrect, LearnerCodeRaised, call

# ---- ex_2_1: a function XLA compiles, with every shape static ---------------------------------

_ROWS = [
    ("a mix of signs", [[1.0, -2.0, 3.0, 0.0], [0.5, 0.5, -1.0, 4.0]]),
    ("a row with no positive value", [[-1.0, -2.0, -3.0], [2.0, -1.0, 0.0]]),
    ("only positive values", [[1.0, 2.0, 3.0, 4.0, 5.0]]),
    ("rows of zeros", [[0.0, 0.0], [0.0, 3.0], [-0.0, -5.0]]),
    ("a 6 x 9 batch", None),  # random values, made in _inputs()
]


def _inputs():
    import numpy as np
    random = np.random.default_rng(2)
    for description, rows in _ROWS:
        values = np.asarray(rows, np.float32) if rows is not None else random.normal(size=(6, 9)).astype(np.float32)
        yield description, values


def mean_of_positives_reference(rows):
    """What ex_2_1 asks for, in NumPy: per row, the mean of its values > 0, else 0."""
    import numpy as np
    return np.array([row[row > 0].mean() if (row > 0).any() else 0.0 for row in rows], np.float32)


def _compile_problem(error):
    """A learner-facing sentence for an XLA compilation error, or None if it is something else."""
    text = str(error)
    if "Detected unsupported operations" in text:
        found = re.search(r"on XLA_\w+: (\w+)", text)
        op = found.group(1) if found else "one of its operations"
        return (f"XLA cannot compile the op {op} (it has no XLA kernel, so it cannot run on a TPU's "
                "cores either): compute the same thing with TensorFlow ops")
    if "must be a compile-time constant" in text:
        return ("XLA refused a shape that depends on the values (\"must be a compile-time "
                "constant\"): keep every shape fixed by the input's shape")
    return None


def _check_mean_of_positives(answer):
    import numpy as np
    import tensorflow as tf
    for description, values in _inputs():
        x = tf.constant(values)
        where = f"with {description} (shape {tuple(values.shape)})"
        try:
            got = call(answer, x, described_as=f"a float32 tensor of shape {tuple(values.shape)}")
        except LearnerCodeRaised as raised:
            problem = _compile_problem(raised.error)
            if problem:
                raise Incorrect(f"{where}: {problem}") from None
            raise
        if not hasattr(answer, "experimental_get_compiler_ir"):
            raise Incorrect("it is a plain Python function, so nothing was compiled: pass the "
                            "function made by tf.function(..., jit_compile=True)")
        try:
            hlo = answer.experimental_get_compiler_ir(x)(stage="hlo")
        except ValueError as error:
            problem = _compile_problem(error)
            if problem:
                raise Incorrect(f"{where}: {problem}") from None
            raise Incorrect("it is a tf.function, but XLA does not compile it: tf.function "
                            "only compiles with XLA when asked with jit_compile=True") from None
        got = np.asarray(got)
        expected = mean_of_positives_reference(values)
        if got.shape != expected.shape:
            raise Incorrect(f"{where}: expected one value per row, shape {expected.shape}, "
                            f"got shape {got.shape}")
        if got.dtype != np.float32:
            raise Incorrect(f"{where}: expected float32 values, got {got.dtype}")
        for row, (g, e) in enumerate(zip(got, expected)):
            if not np.isclose(g, e, rtol=1e-5, atol=1e-6):
                raise Incorrect(f"{where}: row {row} {values[row].tolist()}: expected {e:.4g}, got {g:.4g}")
        dynamic = re.search(r"\w+\[[\d,]*<=\d+[^\]]*\]", hlo)
        if dynamic:
            raise Incorrect(f"{where}: the values are right, but the compiled program has a shape "
                            f"that depends on the data ({dynamic.group(0)} in its HLO, \"at most\"): "
                            "XLA had to bound it and pad. Keep every shape fixed: mask, don't select")


ex_2_1 = Exercise(
    "ex_2_1", "rewrite a host function so that XLA compiles it, with static shapes",
    _check_mean_of_positives,
    hints=[
        "tf.numpy_function runs Python, which XLA cannot compile. Write the same computation "
        "with TensorFlow ops (tf.where, tf.reduce_sum, tf.cast, ...), then compile it with "
        "tf.function(mean_of_positives, jit_compile=True).",
        "Don't select the positive values (tf.boolean_mask makes a shape that depends on the "
        "data). Keep all of them: tf.where(x > 0, x, 0.0) zeroes the rest, and the mask cast to "
        "float32 counts them. Sum both along axis=-1.",
        "A row with no positive value has sum 0 and count 0: tf.math.divide_no_nan(total, count) "
        "gives 0 there instead of NaN.",
    ])

# ---- ex_2_2: a dataset with fully static batches --------------------------------------------

# (the sequences' lengths, batch_size, length)
_DATASETS = [
    ([3, 1, 4, 1, 5, 9, 2, 6, 0, 7], 4, 5),   # 10 sequences: 2 full batches, 2 left over
    ([2, 7, 1, 8, 2, 8], 3, 4),               # an exact multiple of the batch size
    ([5, 5, 5], 4, 6),                        # fewer sequences than one batch: no batch at all
    ([1, 2, 3, 4, 5], 5, 2),                  # one batch, everything cut
]


def _sequences(lengths):
    """Sequence i is 100*i + 1, 100*i + 2, ... (its length from `lengths`): every value says where it came from."""
    import tensorflow as tf
    lengths = tf.constant(lengths, tf.int32)
    return tf.data.Dataset.range(len(lengths)).map(
        lambda i: 100 * tf.cast(i, tf.int32) + 1 + tf.range(lengths[i]))


def tpu_friendly_reference(lengths, batch_size, length):
    """What ex_2_2 asks for, as a list of NumPy batches."""
    import numpy as np
    rows = []
    for i, n in enumerate(lengths):
        row = (100 * i + 1 + np.arange(n, dtype=np.int32))[:length]
        rows.append(np.pad(row, (0, length - len(row))))
    full = len(rows) // batch_size
    return [np.stack(rows[b * batch_size:(b + 1) * batch_size]) for b in range(full)]


def _check_tpu_friendly(answer):
    import numpy as np
    import tensorflow as tf
    for lengths, batch_size, length in _DATASETS:
        where = f"with {len(lengths)} sequences, batch_size={batch_size}, length={length}"
        got = call(answer, _sequences(lengths), batch_size, length,
                   described_as=f"a dataset of {len(lengths)} sequences, batch_size={batch_size}, length={length}")
        if not isinstance(got, tf.data.Dataset):
            raise Incorrect(f"{where}: expected a tf.data.Dataset, got {type(got).__name__}")
        spec = got.element_spec
        if not isinstance(spec, tf.TensorSpec):
            raise Incorrect(f"{where}: expected batches of one tensor, but element_spec is {spec}")
        shape = tuple(spec.shape.as_list()) if spec.shape.rank is not None else None
        if shape is None or len(shape) != 2:
            raise Incorrect(f"{where}: expected element_spec of shape ({batch_size}, {length}), "
                            f"got {spec.shape}")
        if shape[0] is None:
            raise Incorrect(f"{where}: element_spec has shape {spec.shape}: the batch dimension is "
                            "None, so a last, smaller batch can come: one more shape to compile a "
                            "program for. Make every batch exactly batch_size")
        if shape[1] is None:
            raise Incorrect(f"{where}: element_spec has shape {spec.shape}: the sequence dimension "
                            "is None, so it changes from batch to batch. Make every sequence exactly "
                            "`length` long")
        if shape != (batch_size, length):
            raise Incorrect(f"{where}: expected element_spec of shape ({batch_size}, {length}), "
                            f"got {spec.shape}")
        if spec.dtype != tf.int32:
            raise Incorrect(f"{where}: expected int32 batches (as the sequences are), got {spec.dtype.name}")
        try:
            batches = [batch.numpy() for batch in got]
        except tf.errors.OpError as error:
            text = re.sub(r"\{\{[^}]*\}\}\s*|\s*\[Op:\w+\].*", "", str(error)).strip()
            first_line = (text.splitlines() or [""])[0]
            message = f"{where}: reading your dataset raised {type(error).__name__}: {first_line[:160].rstrip('. ')}"
            if "pad to a smaller size" in first_line:
                message += ". A sequence longer than `length` must be cut first"
            raise Incorrect(message) from None
        expected = tpu_friendly_reference(lengths, batch_size, length)
        if len(batches) != len(expected):
            raise Incorrect(f"{where}: expected {len(expected)} batches, got {len(batches)}")
        for number, (g, e) in enumerate(zip(batches, expected)):
            for row, (g_row, e_row) in enumerate(zip(g, e)):
                if not np.array_equal(g_row, e_row):
                    raise Incorrect(f"{where}: batch {number}, row {row}: expected {e_row.tolist()}, "
                                    f"got {g_row.tolist()}")


ex_2_2 = Exercise(
    "ex_2_2", "make a dataset TPU-friendly: fully static batches", _check_tpu_friendly,
    hints=[
        "Two dimensions must be fixed: the sequence length (cut or pad every sequence to "
        "`length`) and the batch size (no last, smaller batch). Check with "
        "your_dataset.element_spec: no None may be left.",
        "dataset.map(lambda s: s[:length]) cuts the long sequences; then "
        "padded_batch(batch_size, padded_shapes=[length], ...) pads with zeros at the end.",
        "batch and padded_batch take drop_remainder=True, which drops a last, incomplete batch and "
        "makes the batch dimension static in element_spec.",
    ])
