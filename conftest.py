"""Shared by every pytest run here (unit tests and nbval).

On a host with a TPU attached, demand it, so a broken TPU set-up fails instead of falling back.
"""
import os

from tpu_course.hardware import local_tpu_signs

if local_tpu_signs() and not os.environ.get("TPU_COURSE_DEVICE"):
    os.environ["TPU_COURSE_DEVICE"] = "tpu"
