"""The machinery of the course: hardware, exercise checkers, timing and plots.

Notebooks hold the teaching; this package holds what they share.
"""
import warnings

from . import measure
from .hardware import connect

__all__ = ["start", "connect", "measure"]


def start(seed=0):
    """The set-up every notebook runs first: runtime, hardware, seeds. Returns the strategy."""
    from . import runtime
    done = runtime.prepare()
    if done:
        print(done)
    strategy = connect()
    import tensorflow as tf
    # Keras and TensorFlow warn about their own internals; keep that out of the lessons.
    for module in ("keras", "tensorflow", "absl"):
        warnings.filterwarnings("ignore", module=module)
    if not tf.__version__.startswith(runtime.TENSORFLOW_VERSION.rsplit(".", 1)[0]):
        print(f"Note: the course is tested on TensorFlow {runtime.TENSORFLOW_VERSION}; "
              f"this runtime has {tf.__version__}, so some outputs may differ.")
    tf.keras.utils.set_random_seed(seed)
    return strategy
