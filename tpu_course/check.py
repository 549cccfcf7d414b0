"""Every exercise's checker: `from tpu_course import check`, then `check.ex_0_1(answer)`."""
from .exercises_start_here import ex_0_1  # noqa: F401
from .exercises_tracing import ex_1_1, ex_1_2, ex_1_3  # noqa: F401
from .exercises_variables import ex_1_4, ex_1_5, ex_1_6  # noqa: F401
from .exercises_xla import ex_2_1, ex_2_2  # noqa: F401
from .exercises_strategy import ex_2_3  # noqa: F401
from .exercises_training_loop import ex_2_4, ex_2_5  # noqa: F401
from .exercises_sharding import ex_2_6, ex_2_7  # noqa: F401
