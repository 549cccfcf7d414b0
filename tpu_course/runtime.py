"""Make the runtime ready: in Colab, install what is missing; in a checkout, nothing.

On a Colab TPU runtime TensorFlow is not preinstalled (googlecolab/colabtools#5164), so the
TPU build is installed at the course's pinned version, as Colab's maintainers advise
(googlecolab/colabtools#5228): tensorflow-tpu with libtpu from Google's release index.
"""
import importlib.metadata
import importlib.util
import subprocess
import sys

from .hardware import local_tpu_signs

TENSORFLOW_VERSION = "2.20.0"
LIBTPU_INDEX = "https://storage.googleapis.com/libtpu-tf-releases/index.html"
COLAB_EXTRAS = ("ipywidgets", "matplotlib")  # preinstalled on Colab; installed only if missing


def in_colab():
    if "google.colab" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("google.colab") is not None
    except ModuleNotFoundError:  # no `google` package at all
        return False


def installed_version(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _pip_install(*arguments):
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", *arguments], check=True)


def tensorflow_install_plan(on_tpu):
    """pip arguments that put the pinned TensorFlow in place, or None if it already is."""
    if on_tpu:
        if installed_version("tensorflow-tpu") == TENSORFLOW_VERSION:
            return None
        return [f"tensorflow-tpu=={TENSORFLOW_VERSION}", "--find-links", LIBTPU_INDEX]
    if installed_version("tensorflow") or installed_version("tensorflow-tpu"):
        return None
    return [f"tensorflow=={TENSORFLOW_VERSION}"]


def prepare():
    """Install what this runtime lacks (Colab only); one line saying what was done, or None."""
    if not in_colab():
        return None
    done = []
    plan = tensorflow_install_plan(on_tpu=bool(local_tpu_signs()))
    if plan:
        _pip_install(*plan)
        done.append(plan[0])
    missing = [name for name in COLAB_EXTRAS if not installed_version(name)]
    if missing:
        _pip_install(*missing)
        done += missing
    return "Runtime: Colab, " + (f"installed {', '.join(done)}." if done else "nothing needed installing.")
