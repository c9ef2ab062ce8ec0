"""`mx.mod.SequentialModule`: modules chained so each one's outputs are the next one's data."""
from __future__ import annotations

import copy
import logging
from typing import Any



from .base_module import DEFAULT_INITIALIZER, BaseModule


class SequentialModule(BaseModule):
    """A chain of modules. `add(module, take_labels=True)` gives that module the labels;
    `auto_wiring=True` renames the previous outputs to the module's data names."""

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger: Any = logging):
        super().__init__(logger=logger)
        self._modules: list = []
        self._metas: list[dict] = []
        self._label_shapes = self._data_shapes = None
        self._meta_keys = {self.META_TAKE_LABELS, self.META_AUTO_WIRING}

    def add(self, module: BaseModule, **kwargs: Any) -> "SequentialModule":
        """Append a module (chainable)."""
        for key in kwargs:
            if key not in self._meta_keys:
                raise AssertionError(f'Unknown meta "{key}", a typo?')
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = self.params_initialized = self.optimizer_initialized = False
        return self

    @property
    def data_names(self) -> list:
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self) -> list:
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self) -> Any:
        assert self.binded
        return self._modules[0].data_shapes

    @property
    def label_shapes(self) -> Any:
        assert self.binded
        return self._label_shapes

    @property
    def output_shapes(self) -> Any:
        assert self.binded
        return self._modules[-1].output_shapes

    def get_params(self) -> tuple[dict, dict]:
        assert self.binded and self.params_initialized
        arg_params: dict = {}
        aux_params: dict = {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer: Any = DEFAULT_INITIALIZER, arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        if self.params_initialized and not force_init:
            return
        assert self.binded, "call bind before initializing the parameters"
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                               allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
        seen: tuple[dict, dict] = ({}, {})
        for i, module in enumerate(self._modules):
            for names, known in zip(module.get_params(), seen):
                for name in names:
                    if name in known:
                        j = known[name]
                        raise AssertionError(f'Duplicated parameter names: name "{name}" in layer {i} '
                                             f"({type(module)}) is already used in layer {j} "
                                             f"({type(self._modules[j])}).")
                    known[name] = i
        self.params_initialized = True

    def bind(self, data_shapes: list, label_shapes: list | None = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: Any = None,
             grad_req: str = "write") -> None:
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise AssertionError("inputs_need_grad needs for_training")
        if shared_module is not None:
            raise AssertionError("Shared module is not supported")
        if not self._modules:
            raise AssertionError("Attempting to bind an empty SequentialModule")
        self.binded = True
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._label_shapes = label_shapes
        shapes = data_shapes
        needs_label = False
        for i, (module, meta) in enumerate(zip(self._modules, self._metas)):
            takes = bool(meta.get(self.META_TAKE_LABELS))
            needs_label |= takes
            if meta.get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(shapes):
                    raise AssertionError(f"auto_wiring: module {i} has {len(names)} data names for "
                                         f"{len(shapes)} inputs")
                shapes = [(name, shape) for name, (_, shape) in zip(names, shapes)]
            module.bind(data_shapes=shapes, label_shapes=label_shapes if takes else None,
                        for_training=for_training, inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            shapes = module.output_shapes
        if not needs_label:
            self._label_shapes = None

    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        assert self.binded and self.params_initialized
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params,
                                  force_init=force_init)
        self.optimizer_initialized = True

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        assert self.binded and self.params_initialized
        data_batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(data_batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            data_batch.data = module.get_outputs()
            if hasattr(data_batch, "provide_data"):
                names = [x[0] for x in module.output_shapes]
                data_batch.provide_data = [(name, x.shape) for name, x in zip(names, data_batch.data)]

    def backward(self, out_grads: Any = None) -> None:
        assert self.binded and self.params_initialized
        for i in range(len(self._modules) - 1, -1, -1):
            self._modules[i].backward(out_grads=out_grads)
            if i:
                out_grads = self._modules[i].get_input_grads()

    def update(self) -> None:
        assert self.binded and self.params_initialized and self.optimizer_initialized
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        assert self.binded and self.params_initialized
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        assert self.binded and self.params_initialized and self.inputs_need_grad
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric: Any, labels: list, pre_sliced: bool = False) -> None:
        assert self.binded and self.params_initialized
        for meta, module in zip(self._metas, self._modules):
            if meta.get(self.META_TAKE_LABELS):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        assert self.binded
        for module in self._modules:
            module.install_monitor(mon)
