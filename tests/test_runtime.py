"""The Colab set-up: what it would install where (pip itself is mocked)."""
from tpu_course import runtime


def versions(**installed):
    return lambda name: installed.get(name.replace("-", "_"))


def test_tpu_runtime_gets_the_pinned_tpu_build(monkeypatch):
    monkeypatch.setattr(runtime, "installed_version", versions())
    assert runtime.tensorflow_install_plan(on_tpu=True) == [
        "tensorflow-tpu==2.20.0", "--find-links", runtime.LIBTPU_INDEX]
    monkeypatch.setattr(runtime, "installed_version", versions(tensorflow_tpu="2.20.0"))
    assert runtime.tensorflow_install_plan(on_tpu=True) is None


def test_other_runtimes_install_tensorflow_only_if_missing(monkeypatch):
    monkeypatch.setattr(runtime, "installed_version", versions(tensorflow="2.19.0"))
    assert runtime.tensorflow_install_plan(on_tpu=False) is None
    monkeypatch.setattr(runtime, "installed_version", versions())
    assert runtime.tensorflow_install_plan(on_tpu=False) == ["tensorflow==2.20.0"]


def test_a_checkout_installs_nothing(monkeypatch):
    monkeypatch.setattr(runtime, "in_colab", lambda: False)
    monkeypatch.setattr(runtime, "_pip_install", lambda *a: (_ for _ in ()).throw(AssertionError("pip ran")))
    assert runtime.prepare() is None


def test_colab_tpu_runtime_installs_and_says_so(monkeypatch):
    installed = []
    monkeypatch.setattr(runtime, "in_colab", lambda: True)
    monkeypatch.setattr(runtime, "local_tpu_signs", lambda: ["COLAB_TPU_1VM=1"])
    monkeypatch.setattr(runtime, "installed_version", versions(matplotlib="3.10"))
    monkeypatch.setattr(runtime, "_pip_install", lambda *arguments: installed.append(arguments))
    line = runtime.prepare()
    assert installed[0][0] == "tensorflow-tpu==2.20.0" and installed[1] == ("ipywidgets",)
    assert line == "Runtime: Colab, installed tensorflow-tpu==2.20.0, ipywidgets."


def test_colab_pins_the_same_tensorflow_as_requirements():
    from conftest import ROOT
    pins = dict(line.split("#")[0].strip().split("==") for line in (ROOT / "requirements.txt").read_text().splitlines()
                if "==" in line.split("#")[0])
    assert pins["tensorflow"] == runtime.TENSORFLOW_VERSION
