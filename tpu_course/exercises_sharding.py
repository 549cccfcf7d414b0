"""Exercises of 02_compile/04_sharding_data: per-replica batches, and an input function that shards."""
from .checking import Exercise, Incorrect, LearnerCodeRaised, NotAttempted, call


# ---- ex_2_6: per_replica_batch_size(global_batch, num_replicas) --------------------------------

_DIVISIBLE = [(16, 8, 2), (128, 8, 16), (8, 8, 1), (12, 4, 3), (7, 1, 7), (1024, 32, 32)]
_MUST_REFUSE = [  # (global_batch, num_replicas, why it cannot work)
    (10, 8, "10 examples do not split evenly over 8 replicas"),
    (12, 8, "12 examples do not split evenly over 8 replicas"),
    (16, 0, "there are no replicas"),
    (-16, 8, "a batch of -16 examples makes no sense"),
    (0, 8, "a batch of 0 examples makes no sense"),
    (16, -8, "a negative number of replicas makes no sense"),
]


def _is_whole_number(value):
    import numbers
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_per_replica_batch_size(answer):
    for global_batch, replicas, expected in _DIVISIBLE:
        got = call(answer, global_batch, replicas)
        shown = f"per_replica_batch_size({global_batch}, {replicas})"
        if not _is_whole_number(got):
            raise Incorrect(f"{shown} returned {got!r}, a {type(got).__name__}: a batch size must be "
                            "a whole number, an int")
        if got != expected:
            raise Incorrect(f"{shown} returned {got}; each of {replicas} replicas should get "
                            f"{global_batch} / {replicas} examples")
    for global_batch, replicas, why in _MUST_REFUSE:
        shown = f"per_replica_batch_size({global_batch}, {replicas})"
        try:
            got = answer(global_batch, replicas)
        except NotImplementedError:
            raise NotAttempted() from None
        except ValueError as error:
            if not str(error).strip():
                raise Incorrect(f"{shown} raised ValueError with no message: say what is wrong "
                                "with the numbers, so whoever sees it can fix them") from None
            continue
        except Exception as error:  # the learner's code raised the wrong kind
            raise Incorrect(f"{shown} raised {type(error).__name__}, not ValueError ({why}): "
                            "check the inputs and raise ValueError yourself") from None
        raise Incorrect(f"{shown} returned {got!r}, but {why}: it should raise ValueError")


ex_2_6 = Exercise(
    "ex_2_6", "per-replica batch size, or a clear error", _check_per_replica_batch_size,
    hints=[
        "Every replica must get the same number of examples, so the global batch has to be a "
        "multiple of the number of replicas; anything else is an error, not something to round.",
        "global_batch % num_replicas tells you whether it divides evenly; // gives an int, "
        "while / gives a float.",
        "Check the inputs first: if either number is 0 or negative, or the remainder is not 0, "
        "raise ValueError(f'...') naming the numbers; an assert raises AssertionError instead.",
    ])


# ---- ex_2_7: make_input_fn(features, labels, global_batch) --------------------------------------

def _examples(count):
    """Features whose first column is the example's number, and labels that are that number."""
    import numpy as np
    labels = np.arange(count, dtype=np.int32)
    features = np.stack([labels, labels * 2, labels * 3], axis=1).astype(np.float32)
    return features, labels


def _read(dataset, count, described):
    """Labels of every element of `dataset`, checking each feature row matches its label."""
    import numpy as np
    seen = []
    try:
        # take() guards against an endless dataset (a stray repeat()).
        for element in dataset.take(count + 1):
            features, labels = element
            features, labels = np.asarray(features), np.asarray(labels)
            if not np.array_equal(features[:, 0].astype(np.int64), labels.astype(np.int64)):
                raise Incorrect(f"{described}: a batch pairs features with the wrong labels; "
                                "keep each example's features and label together "
                                "(from_tensor_slices((features, labels)))")
            seen.extend(int(label) for label in labels)
    except (Incorrect, NotAttempted):
        raise
    except Exception as error:
        raise LearnerCodeRaised(error, f"{described}, while reading its dataset") from None
    return seen


def _element_spec_problem(dataset, per_replica, global_batch, replicas):
    """What is wrong with the structure or static shapes of one pipeline's elements, or None."""
    import tensorflow as tf
    if not isinstance(dataset, tf.data.Dataset):
        return f"the input function returned {type(dataset).__name__}, not a tf.data.Dataset"
    spec = dataset.element_spec
    if not (isinstance(spec, tuple) and len(spec) == 2
            and all(isinstance(part, tf.TensorSpec) for part in spec)):
        return ("each element should be a (features, labels) pair of tensors, got "
                f"{str(spec)[:120]}")
    batch_dims = {part.shape[0] if part.shape.rank else "no" for part in spec}
    if "no" in batch_dims:
        return "the elements have no batch dimension: batch the dataset"
    if None in batch_dims:
        return ("the batch dimension is None (not static): batch with drop_remainder=True so "
                "every batch has the same, known size, as a TPU needs")
    if batch_dims != {per_replica}:
        size = batch_dims.pop()
        extra = " (the global batch)" if size == global_batch else ""
        return (f"batches have {size} examples{extra}, but with a global batch of {global_batch} "
                f"on {replicas} replicas each replica's batch should have {per_replica}")
    return None


def _check_pipelines(answer, count, global_batch, pipelines, replicas):
    import tensorflow as tf
    features, labels = _examples(count)
    input_fn = call(answer, features, labels, global_batch,
                    described_as=f"{count} examples and a global batch of {global_batch}")
    if not callable(input_fn):
        raise Incorrect(f"make_input_fn returned {type(input_fn).__name__}, not a function of "
                        "an input context")
    per_replica = global_batch // replicas
    seen_by = []
    for pipeline in range(pipelines):
        context = tf.distribute.InputContext(num_input_pipelines=pipelines, input_pipeline_id=pipeline,
                                             num_replicas_in_sync=replicas)
        described = (f"input pipeline {pipeline} of {pipelines} ({replicas} replicas, "
                     f"{count} examples, global batch {global_batch})")
        dataset = call(input_fn, context, described_as=f"the InputContext of {described}")
        problem = _element_spec_problem(dataset, per_replica, global_batch, replicas)
        if problem:
            raise Incorrect(f"{described}: {problem}")
        seen = _read(dataset, count, described)
        if len(seen) != len(set(seen)):
            raise Incorrect(f"{described}: some examples came more than once in one pass "
                            "(no repeat(), and each example once per epoch)")
        seen_by.append(set(seen))
    for pipeline, seen in enumerate(seen_by):
        for other in range(pipeline):
            both = seen & seen_by[other]
            if both:
                raise Incorrect(f"input pipelines {other} and {pipeline} of {pipelines} both got "
                                f"example {min(both)}: shard by input pipeline so that each "
                                "example goes to exactly one pipeline")
    for pipeline, seen in enumerate(seen_by):
        strays = sorted(label for label in seen if label % pipelines != pipeline)
        if strays:
            raise Incorrect(f"input pipeline {pipeline} of {pipelines} got example {strays[0]}, which "
                            f"sharding the examples gives to pipeline {strays[0] % pipelines}: shard "
                            "the examples first, before shuffling or batching, so each pipeline "
                            "reads only its own share")
    covered = sum(len(seen) for seen in seen_by)
    # drop_remainder may drop fewer than one per-replica batch in each pipeline; no more.
    if covered < count - pipelines * (per_replica - 1):
        raise Incorrect(f"the {pipelines} input pipelines together got only {covered} of the {count} "
                        "examples: shard by the number of input pipelines, not by anything larger")


def _check_through_strategy(answer):
    from .hardware import connect_quietly
    strategy = connect_quietly()
    replicas = strategy.num_replicas_in_sync
    global_batch, count = 4 * replicas, 4 * replicas * 3 + 3
    features, labels = _examples(count)
    input_fn = call(answer, features, labels, global_batch,
                    described_as=f"{count} examples and a global batch of {global_batch}")
    described = f"the course's strategy ({replicas} replicas)"
    try:
        distributed = strategy.distribute_datasets_from_function(input_fn)
        batches = [[value.numpy() for value in strategy.experimental_local_results(labels_batch)]
                   for _, labels_batch in distributed]
    except (Incorrect, NotAttempted):
        raise
    except Exception as error:
        raise LearnerCodeRaised(error, f"strategy.distribute_datasets_from_function on {described}") from None
    seen = []
    for step in batches:
        sizes = {len(replica_labels) for replica_labels in step}
        if sizes != {4}:
            raise Incorrect(f"through {described} with a global batch of {global_batch}, replicas "
                            f"got batches of {sorted(sizes)} examples, not 4 each")
        seen.extend(int(label) for replica_labels in step for label in replica_labels)
    if len(seen) != len(set(seen)) or len(seen) < count - 3:
        raise Incorrect(f"through {described}, one epoch gave {len(seen)} examples "
                        f"({len(set(seen))} different) of {count}")


def _check_make_input_fn(answer):
    # Hand-made input contexts: what each host of a 2-host TPU slice (or 2 workers) would get.
    _check_pipelines(answer, count=42, global_batch=16, pipelines=2, replicas=8)
    _check_pipelines(answer, count=50, global_batch=12, pipelines=3, replicas=4)
    _check_pipelines(answer, count=23, global_batch=8, pipelines=1, replicas=8)
    _check_through_strategy(answer)


ex_2_7 = Exercise(
    "ex_2_7", "an input function that shards by input pipeline", _check_make_input_fn,
    hints=[
        "The input context says how many input pipelines there are "
        "(input_context.num_input_pipelines) and which one this call builds "
        "(input_context.input_pipeline_id): give this pipeline only its share of the examples.",
        "Order matters: Dataset.from_tensor_slices((features, labels)), then .shard(...), then "
        "shuffle if you like, then .batch(...). Sharding after batching or shuffling splits "
        "something else than the examples.",
        "Each replica gets one batch of this dataset per step, so batch by "
        "input_context.get_per_replica_batch_size(global_batch), with drop_remainder=True.",
    ])
