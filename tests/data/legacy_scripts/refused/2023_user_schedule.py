# refused: class Pointwise(FusionDefinition) with definition() and schedule() (line 8)
# 2023-2025: a FusionDefinition subclass with definition() and schedule() hooks and a user schedule
# through self.sched (nvfuser/__init__.py from 831821f3a).
import torch
from nvfuser import FusionDefinition, DataType


class Pointwise(FusionDefinition):
    def definition(self):
        self.t0 = self.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        self.add_output(self.ops.relu(self.t0))

    def schedule(self):
        self.sched.split(self.t0, 1, 128)


Pointwise().execute([torch.randn(16, 1024, device="cuda")])
