"""`mx.context`: devices (MXNet's module of this name)."""
from hybridgraph.nd.backend import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: F401
