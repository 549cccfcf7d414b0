"""Every exercise's checker: `from tpu_course import check`, then `check.ex_0_1(answer)`."""
from .exercises_start_here import ex_0_1  # noqa: F401
from .exercises_sharding import ex_2_7, ex_2_8  # noqa: F401
