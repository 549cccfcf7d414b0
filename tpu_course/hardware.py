"""Find the hardware and return a tf.distribute strategy for it, once per process.

Order: a TPU attached to this VM (tpu='local'), a TPU named by TPU_NAME, GPUs
(MirroredStrategy), else the CPU split into logical devices (MirroredStrategy), so
replicas, per-replica batches and cross-replica reductions are real on any laptop.

Environment variables:
  TPU_COURSE_DEVICE        demand a kind: tpu, gpu or cpu (no fallback if it is absent)
  TPU_NAME                 a Cloud TPU to connect to by name or grpc:// address
  TPU_COURSE_CPU_REPLICAS  logical CPU devices for the fallback (default 8; 1 = default strategy)
"""
import glob
import os
import sys

KINDS = ("tpu", "gpu", "cpu")
DEFAULT_CPU_REPLICAS = 8

_found = None  # (strategy, summary line), set by the first successful connect()


class HardwareError(RuntimeError):
    """The hardware cannot be set up as asked; the message says what to do."""

    def _render_traceback_(self):
        """In IPython and Jupyter, show the message alone: the frames are the course's, not yours."""
        return [f"HardwareError: {self}"]


def local_tpu_signs():
    """What shows a TPU attached to this machine, without starting TensorFlow.

    Trying tpu='local' on a machine without one starts TensorFlow's runtime, after which
    the CPU can no longer be split into replicas, so it is tried only where these show.
    """
    signs = glob.glob("/dev/accel[0-9]*") + glob.glob("/dev/vfio/[0-9]*")
    signs += [f"{name}={os.environ[name]}" for name in ("TPU_ACCELERATOR_TYPE", "COLAB_TPU_1VM")
              if os.environ.get(name) not in (None, "", "0")]
    return signs


def demanded_kind():
    kind = os.environ.get("TPU_COURSE_DEVICE", "").strip().lower()
    if kind and kind not in KINDS:
        raise HardwareError(f"TPU_COURSE_DEVICE={kind!r} is not one of {', '.join(KINDS)}: "
                            "set it to one of those, or unset it to take the best available.")
    return kind or None


def cpu_replica_count():
    text = os.environ.get("TPU_COURSE_CPU_REPLICAS", str(DEFAULT_CPU_REPLICAS))
    if not text.strip().isdigit() or int(text) < 1:
        raise HardwareError(f"TPU_COURSE_CPU_REPLICAS={text!r} is not a whole number of 1 or "
                            "more: set it to, say, 8 (or 1 for no replication).")
    return int(text)


def silence_tensorflow_logs():
    """Keep TensorFlow's C++ and Python log lines out of notebook outputs (before import)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import absl.logging
    absl.logging.set_verbosity(absl.logging.ERROR)
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    return tf


def _connect_tpu(tf, tpu):
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


def _try_tpu(tf, reasons):
    """A TPUStrategy, or None with the reasons it was ruled out appended."""
    attempts = []
    if local_tpu_signs():
        attempts.append(("local", "TPU VM"))
    else:
        reasons.append("no TPU attached (no /dev/accel*, /dev/vfio or TPU_ACCELERATOR_TYPE)")
    if os.environ.get("TPU_NAME"):
        attempts.append((os.environ["TPU_NAME"], f"TPU {os.environ['TPU_NAME']}"))
    elif not attempts:
        reasons.append("TPU_NAME unset")
    for tpu, label in attempts:
        try:
            return _connect_tpu(tf, tpu), label
        except (ValueError, tf.errors.OpError, RuntimeError) as error:
            first_line = (str(error).strip().splitlines() or [""])[0][:160]
            reasons.append(f"{label} failed: {type(error).__name__}: {first_line}")
    return None, None


def _split_cpu(tf, replicas):
    cpu = tf.config.list_physical_devices("CPU")[0]
    wanted = [tf.config.LogicalDeviceConfiguration() for _ in range(replicas)]
    try:
        tf.config.set_logical_device_configuration(cpu, wanted)
    except RuntimeError as error:
        if len(tf.config.list_logical_devices("CPU")) == replicas:
            return  # already split this way
        raise HardwareError(
            f"TensorFlow has already started its devices, so the CPU cannot be split into "
            f"{replicas} replicas now. Restart the kernel and run the set-up cell first, before "
            "any other TensorFlow code.") from error


def _choose(tf):
    """(strategy, summary line) for the best hardware allowed."""
    demand = demanded_kind()
    reasons = []
    if demand in (None, "tpu"):
        strategy, label = _try_tpu(tf, reasons)
        if strategy is not None:
            return strategy, f"TPU: {label}, {strategy.num_replicas_in_sync} cores (TPUStrategy)"
        if demand == "tpu":
            raise HardwareError("TPU_COURSE_DEVICE=tpu but no TPU could be used: "
                                + "; ".join(reasons) + ". On Colab choose Runtime > Change "
                                "runtime type > TPU; elsewhere unset TPU_COURSE_DEVICE.")
    if demand in (None, "gpu"):
        gpus = tf.config.list_physical_devices("GPU")
        if gpus:
            strategy = tf.distribute.MirroredStrategy()
            return strategy, (f"GPU: {len(gpus)} device(s) (MirroredStrategy)"
                              + (f"; {'; '.join(reasons)}" if reasons else ""))
        if demand == "gpu":
            raise HardwareError("TPU_COURSE_DEVICE=gpu but TensorFlow sees no GPU. "
                                "Unset TPU_COURSE_DEVICE to use the CPU fallback.")
        reasons.append("no GPU")
    if demand == "cpu":
        reasons.append("TPU_COURSE_DEVICE=cpu")
    replicas = cpu_replica_count()
    if replicas == 1:
        strategy, how = tf.distribute.get_strategy(), "1 device, default strategy"
    else:
        _split_cpu(tf, replicas)
        devices = [d.name for d in tf.config.list_logical_devices("CPU")]
        strategy = tf.distribute.MirroredStrategy(devices)
        how = f"{replicas} logical devices (MirroredStrategy), emulating {replicas} TPU cores"
    because = f" because: {'; '.join(reasons)}" if reasons else ""
    return strategy, f"CPU fallback: {how}{because}"


def connect():
    """The strategy for this machine; prints one line saying what was found and why.

    Idempotent: later calls return the same strategy and print the same line.
    """
    strategy = connect_quietly()
    print(_found[1])
    return strategy


def _absorb_one_time_logs(tf):
    """XLA logs "Compiled cluster using XLA!" once per process, straight to the process's
    stderr through absl, which TF_CPP_MIN_LOG_LEVEL does not reach; Jupyter would show it
    in the first compiling cell. Compile a trivial function once here, with stderr muted."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            with tf.device("/CPU:0"):
                tf.function(lambda x: x + 1, jit_compile=True)(tf.constant(0.0)).numpy()
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def connect_quietly():
    """The strategy, as connect() returns it, without printing (for checkers)."""
    global _found
    if _found is None:
        tf = silence_tensorflow_logs()
        _found = _choose(tf)
        _absorb_one_time_logs(tf)
    return _found[0]


def summary():
    """The line connect() printed, or None before it ran."""
    return _found[1] if _found else None
