"""The hardware detection: every branch reachable here for real, the TPU and GPU ones mocked."""
import os
import subprocess
import sys
import textwrap
import types

import pytest

from tpu_course import hardware


def run_python(code, **env):
    """Run code in a fresh interpreter (TensorFlow fixes its devices once per process)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("TPU_COURSE_", "TPU_NAME"))}
    environment.update(env)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, env=environment, timeout=120)
    return result.returncode, result.stdout, result.stderr


CONNECT = """
    from tpu_course import connect
    strategy = connect()
    print("replicas", strategy.num_replicas_in_sync, type(strategy).__name__)
"""


@pytest.mark.parametrize("count, expected", [(None, "8 MirroredStrategy"), ("2", "2 MirroredStrategy"),
                                             ("1", "1 _DefaultDistributionStrategy")])
def test_cpu_fallback_replica_counts(count, expected):
    env = {"TPU_COURSE_CPU_REPLICAS": count} if count else {}
    code, out, err = run_python(CONNECT, **env)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("CPU fallback: ")
    assert "no TPU attached" in lines[0] and "TPU_NAME unset" in lines[0] and "no GPU" in lines[0]
    assert lines[1] == f"replicas {expected}"
    assert "Using MirroredStrategy" not in out + err  # TensorFlow's logging stays silent


def test_xla_log_line_is_absorbed_by_connect():
    code, out, err = run_python(CONNECT + """
    import tensorflow as tf
    print(tf.function(lambda x: x * 2, jit_compile=True)(tf.constant(1.0)).numpy())
    """)
    assert code == 0, err
    assert "Compiled cluster using XLA" not in out + err


def test_second_call_returns_the_same_strategy_and_line():
    code, out, err = run_python("""
        from tpu_course import connect
        first, second = connect(), connect()
        print(first is second)
    """, TPU_COURSE_CPU_REPLICAS="2")
    assert code == 0, err
    first_line, second_line, same = out.splitlines()
    assert first_line == second_line and same == "True"


def test_late_call_says_restart_the_kernel():
    code, out, err = run_python("""
        import tensorflow as tf
        tf.constant(1.0) + 1  # TensorFlow starts its devices here
        from tpu_course import connect
        connect()
    """)
    assert code != 0
    assert "HardwareError" in err and "Restart the kernel" in err


def test_late_call_with_one_replica_is_fine():
    code, out, err = run_python("import tensorflow as tf; tf.constant(1.0) + 1\n" + textwrap.dedent(CONNECT),
                                TPU_COURSE_CPU_REPLICAS="1")
    assert code == 0, err


@pytest.mark.parametrize("env, message", [
    ({"TPU_COURSE_DEVICE": "tpu"}, "TPU_COURSE_DEVICE=tpu but no TPU could be used"),
    ({"TPU_COURSE_DEVICE": "gpu"}, "TPU_COURSE_DEVICE=gpu but TensorFlow sees no GPU"),
    ({"TPU_COURSE_DEVICE": "fpga"}, "is not one of tpu, gpu, cpu"),
    ({"TPU_COURSE_CPU_REPLICAS": "eight"}, "is not a whole number"),
    ({"TPU_COURSE_CPU_REPLICAS": "0"}, "is not a whole number"),
])
def test_bad_or_unmet_demands_fail_loudly(env, message):
    code, out, err = run_python(CONNECT, **env)
    assert code != 0 and message in err


def test_cpu_demanded_uses_the_fallback():
    code, out, err = run_python(CONNECT, TPU_COURSE_DEVICE="cpu", TPU_COURSE_CPU_REPLICAS="2")
    assert code == 0, err
    assert out.startswith("CPU fallback: 2 logical devices") and out.split("\n")[0].endswith(
        "because: TPU_COURSE_DEVICE=cpu")


# ---- TPU and GPU branches, through their documented signals (mocked) ----------------------

class FakeStrategy:
    num_replicas_in_sync = 8


@pytest.fixture
def fresh(monkeypatch):
    """Module state reset for one test, restored after; no real CPU split (1 replica)."""
    monkeypatch.setattr(hardware, "_found", None)
    monkeypatch.setattr(hardware, "_absorb_one_time_logs", lambda tf: None)  # would start TF's devices
    for name in ("TPU_COURSE_DEVICE", "TPU_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TPU_COURSE_CPU_REPLICAS", "1")
    import tensorflow as tf
    return tf


def fake_tpu(monkeypatch, tf, fails_with=None):
    calls = []

    class Resolver:
        def __init__(self, tpu=None):
            calls.append(("resolver", tpu))

    def initialize(resolver):
        calls.append(("initialize",))
        if fails_with:
            raise fails_with

    monkeypatch.setattr(tf.distribute.cluster_resolver, "TPUClusterResolver", Resolver)
    monkeypatch.setattr(tf.config, "experimental_connect_to_cluster", lambda r: calls.append(("connect",)))
    monkeypatch.setattr(tf.tpu.experimental, "initialize_tpu_system", initialize)
    monkeypatch.setattr(tf.distribute, "TPUStrategy", lambda resolver: FakeStrategy())
    return calls


def test_tpu_vm_found(fresh, monkeypatch, capsys):
    calls = fake_tpu(monkeypatch, fresh)
    monkeypatch.setattr(hardware, "local_tpu_signs", lambda: ["/dev/accel0"])
    strategy = hardware.connect()
    assert isinstance(strategy, FakeStrategy)
    assert calls == [("resolver", "local"), ("connect",), ("initialize",)]
    assert capsys.readouterr().out == "TPU: TPU VM, 8 cores (TPUStrategy)\n"


def test_named_tpu_used_when_none_attached(fresh, monkeypatch, capsys):
    calls = fake_tpu(monkeypatch, fresh)
    monkeypatch.setattr(hardware, "local_tpu_signs", lambda: [])
    monkeypatch.setenv("TPU_NAME", "my-tpu")
    hardware.connect()
    assert calls[0] == ("resolver", "my-tpu")
    assert capsys.readouterr().out.startswith("TPU: TPU my-tpu, 8 cores")


def test_tpu_failure_is_reported_then_falls_back(fresh, monkeypatch, capsys):
    error = fresh.errors.NotFoundError(None, None, "TPUs not found in the cluster.")
    fake_tpu(monkeypatch, fresh, fails_with=error)
    monkeypatch.setattr(hardware, "local_tpu_signs", lambda: ["/dev/vfio/0"])
    hardware.connect()
    line = capsys.readouterr().out
    assert line.startswith("CPU fallback: 1 device, default strategy because: TPU VM failed: "
                           "NotFoundError: TPUs not found in the cluster.")


def test_tpu_failure_when_demanded_raises(fresh, monkeypatch):
    fake_tpu(monkeypatch, fresh, fails_with=ValueError("Please provide a TPU Name to connect to."))
    monkeypatch.setattr(hardware, "local_tpu_signs", lambda: [])
    monkeypatch.setenv("TPU_NAME", "missing")
    monkeypatch.setenv("TPU_COURSE_DEVICE", "tpu")
    with pytest.raises(hardware.HardwareError, match="TPU missing failed: ValueError: Please provide"):
        hardware.connect()


def test_gpus_found(fresh, monkeypatch, capsys):
    real_list = fresh.config.list_physical_devices
    gpus = [types.SimpleNamespace(name="/physical_device:GPU:0"), types.SimpleNamespace(name="/physical_device:GPU:1")]
    monkeypatch.setattr(fresh.config, "list_physical_devices",
                        lambda kind=None: gpus if kind == "GPU" else real_list(kind))
    monkeypatch.setattr(fresh.distribute, "MirroredStrategy", lambda *a, **k: FakeStrategy())
    monkeypatch.setattr(hardware, "local_tpu_signs", lambda: [])
    assert isinstance(hardware.connect(), FakeStrategy)
    assert capsys.readouterr().out.startswith("GPU: 2 device(s) (MirroredStrategy); no TPU attached")


def test_local_tpu_signs_read_device_files_and_colab(monkeypatch):
    monkeypatch.setattr(hardware.glob, "glob", lambda pattern: [])
    monkeypatch.delenv("TPU_ACCELERATOR_TYPE", raising=False)
    monkeypatch.setenv("COLAB_TPU_1VM", "")
    assert hardware.local_tpu_signs() == []
    monkeypatch.setenv("COLAB_TPU_1VM", "1")
    assert hardware.local_tpu_signs() == ["COLAB_TPU_1VM=1"]
    monkeypatch.setattr(hardware.glob, "glob", lambda pattern: ["/dev/accel0"] if "accel" in pattern else [])
    assert "/dev/accel0" in hardware.local_tpu_signs()


def test_jupyter_shows_the_message_without_the_course_frames():
    error = hardware.HardwareError("Restart the kernel.")
    assert error._render_traceback_() == ["HardwareError: Restart the kernel."]
