"""idletime: Python side of the idletime Slurm suite (checkpoint binding, PyTorch helper)."""
from .ckpt import (Checkpointer, CheckpointError, ClockSkewError, MungeUnavailableError,  # noqa: F401
                   TimeLimitReached, WorldSizeError)
