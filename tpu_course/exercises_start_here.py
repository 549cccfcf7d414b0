"""Exercises of 00_start_here: the strategy warm-up."""
from .checking import Exercise, Incorrect, call, expect_equal


class _CountingStrategy:
    """Forwards to a real strategy and counts calls of run(), to see the work was replicated."""

    def __init__(self, strategy):
        self._strategy, self.runs = strategy, 0

    def run(self, *args, **kwargs):
        self.runs += 1
        return self._strategy.run(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._strategy, name)


def _check_sum_of_squares(answer):
    import tensorflow as tf
    from .hardware import connect_quietly
    for strategy in (connect_quietly(), tf.distribute.get_strategy()):
        replicas = strategy.num_replicas_in_sync
        spy = _CountingStrategy(strategy)
        got = call(answer, spy, described_as=f"a strategy of {replicas} replica(s)")
        if isinstance(got, tf.distribute.DistributedValues):
            raise Incorrect("it returned per-replica values (one per replica); reduce them to one "
                            "number with strategy.reduce(...)")
        if hasattr(got, "shape") and len(getattr(got, "shape")) > 0:
            raise Incorrect(f"it returned a value of shape {tuple(got.shape)}, not one number")
        expected = sum((replica + 1) ** 2 for replica in range(replicas))
        expect_equal(f"with {replicas} replica(s)", got, expected)
        if spy.runs == 0:
            raise Incorrect("the number is right, but it was worked out in Python, not on the "
                            "replicas: compute each replica's value inside strategy.run(...)")


ex_0_1 = Exercise(
    "ex_0_1", "sum a value computed on every replica", _check_sum_of_squares,
    hints=[
        "Inside the function you give to strategy.run, "
        "tf.distribute.get_replica_context().replica_id_in_sync_group is this replica's number, "
        "counting from 0.",
        "strategy.run(fn) returns per-replica values; strategy.reduce('SUM', values, axis=None) "
        "adds them up across replicas.",
        "Cast the replica number to float32 before squaring, and return float(...) of the reduced tensor.",
    ])
