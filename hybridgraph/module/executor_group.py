"""The executors behind a Module: one bound executor per context, each taking its
slice of every batch (MXNet's `DataParallelExecutorGroup`)."""
from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.nd.ndarray import NDArray

from ..io import DataDesc


def split_input_slice(batch_size: int, work_load_list: list) -> list[slice]:
    """Split a batch into one slice per device, in proportion to `work_load_list`."""
    total = sum(work_load_list)
    nums = [round(w * batch_size / total) for w in work_load_list]
    if sum(nums) < batch_size:
        nums[-1] += batch_size - sum(nums)
    slices, end = [], 0
    for num in nums:
        begin = int(min(end, batch_size))
        end = int(min(begin + num, batch_size))
        if begin >= end:
            raise ValueError("Too many slices. Some splits are empty.")
        slices.append(slice(begin, end))
    return slices


def _copy_into(src: NDArray, dst: NDArray) -> None:
    """Copy `src` into the bound array `dst` (casting dtype, moving context)."""
    if src.context != dst.context:
        src = src.as_in_context(dst.context)
    dst[:] = src


def _load_general(data: list, targets: list, major_axis: list) -> None:
    """Copy each source array's slices into the per-device target arrays."""
    for d_src, d_targets, axis in zip(data, targets, major_axis):
        for slice_idx, d_dst in d_targets:
            if axis >= 0 and (slice_idx.start != 0 or d_src.shape[axis] != slice_idx.stop):
                part = nd.slice_axis(d_src, axis=axis, begin=slice_idx.start, end=slice_idx.stop)
                _copy_into(part, d_dst)
            else:
                _copy_into(d_src, d_dst)


def _merge_multi_context(outputs: list, major_axis: list) -> list:
    """One array per output: the device results concatenated along the batch axis."""
    rets = []
    for tensors, axis in zip(outputs, major_axis):
        if axis >= 0 and len(tensors) > 1:
            ctx = tensors[0].context
            rets.append(nd.concat(*[t.as_in_context(ctx) for t in tensors], dim=axis))
        else:
            rets.append(tensors[0])
    return rets


def _batch_axis_of_output(symbol: Any, index: int) -> int:
    return DataDesc.get_batch_axis(symbol[index].attr("__layout__"))


def _group2ctxs_per_device(group2ctxs: Any, n: int) -> list:
    """MXNet's forms of `group2ctxs` as one ``{group: Context}`` per device: None; a list with
    one dict per device; or one dict whose values are a Context (every device) or a list of
    one Context, or of one per device."""
    if group2ctxs is None:
        return [None] * n
    if isinstance(group2ctxs, (list, tuple)):
        if len(group2ctxs) != n:
            raise ValueError(f"group2ctxs: {len(group2ctxs)} dicts for {n} contexts; give one per context")
        return list(group2ctxs)
    if not isinstance(group2ctxs, dict):
        raise TypeError(f"group2ctxs must be a dict or a list of dicts, got {type(group2ctxs).__name__}")
    out: list[dict] = [{} for _ in range(n)]
    for group, where in group2ctxs.items():
        ctxs = [where] * n if not isinstance(where, (list, tuple)) else list(where) * n if len(where) == 1 \
            else list(where)
        if len(ctxs) != n:
            raise ValueError(f"group2ctxs[{group!r}]: {len(ctxs)} contexts for {n} devices; give one, or one per "
                             "device")
        for i, c in enumerate(ctxs):
            out[i][group] = c
    return out


class ExecutorGroup:
    """Executors of one symbol on several contexts, sharing the batch by slices.

    Parameters mirror MXNet's DataParallelExecutorGroup: `param_names` get
    gradients (unless fixed), data inputs only with `inputs_need_grad`,
    labels and states never.
    """

    def __init__(self, symbol: Any, contexts: list, workload: list, data_shapes: list,
                 label_shapes: list | None, param_names: list, for_training: bool, inputs_need_grad: bool,
                 shared_group: "ExecutorGroup | None" = None, logger: Any = logging,
                 fixed_param_names: list | None = None, grad_req: Any = "write",
                 state_names: list | None = None, group2ctxs: Any = None):
        self.param_names = param_names
        self.group2ctxs = _group2ctxs_per_device(group2ctxs, len(contexts))
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = contexts
        self.workload = workload
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
        if label_shapes is not None:
            label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        self.grad_req = self._grad_reqs("null" if not for_training else grad_req,
                                        [x.name for x in data_shapes])
        self.shared_data_arrays = shared_group.shared_data_arrays if shared_group else [{} for _ in contexts]
        self.batch_size: int | None = None
        self.slices: list | None = None
        self.execs: list = []
        self._default_execs: list | None = None
        self.output_names = symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.output_layouts = [_batch_axis_of_output(symbol, i) for i in range(self.num_outputs)]
        self.bind_exec(data_shapes, label_shapes, shared_group)

    def _grad_reqs(self, grad_req: Any, data_names: list) -> dict:
        if isinstance(grad_req, (list, tuple)):
            assert len(grad_req) == len(self.arg_names)
            return dict(zip(self.arg_names, grad_req))
        if not isinstance(grad_req, (str, dict)):
            raise ValueError("grad_req must be one of str, list, tuple, or dict.")
        default = grad_req if isinstance(grad_req, str) else "write"
        reqs = {}
        for k in self.arg_names:
            if k in self.param_names:
                reqs[k] = "null" if k in self.fixed_param_names else default
            elif k in data_names:
                reqs[k] = default if self.inputs_need_grad else "null"
            else:
                reqs[k] = "null"
        if isinstance(grad_req, dict):
            reqs.update(grad_req)
        return reqs

    # -- binding ------------------------------------------------------------------------
    def decide_slices(self, data_shapes: list) -> list:
        """Set the batch size and the per-device slices; the batch axis of each input."""
        assert len(data_shapes) > 0
        major_axis = [DataDesc.get_batch_axis(x.layout) for x in data_shapes]
        for (name, shape), axis in zip(data_shapes, major_axis):
            if axis == -1:
                continue
            batch_size = shape[axis]
            if self.batch_size is not None:
                assert batch_size == self.batch_size, (f"all data must have the same batch size: batch_size = "
                                                       f"{self.batch_size}, but {name} has shape {shape}")
            else:
                self.batch_size = batch_size
                self.slices = split_input_slice(self.batch_size, self.workload)
        return major_axis

    def bind_exec(self, data_shapes: list, label_shapes: list | None, shared_group: Any = None,
                  reshape: bool = False) -> None:
        assert reshape or not self.execs
        self.batch_size = None
        self.data_layouts = self.decide_slices(data_shapes)
        self.label_layouts = self.decide_slices(label_shapes) if label_shapes is not None else None
        for i in range(len(self.contexts)):
            data_i = self._sliced_shape(data_shapes, i, self.data_layouts)
            label_i = self._sliced_shape(label_shapes, i, self.label_layouts) if label_shapes is not None else []
            if reshape:
                self.execs[i] = self._default_execs[i].reshape(allow_up_sizing=True, **dict(data_i + label_i))
            else:
                self.execs.append(self._bind_ith_exec(i, data_i, label_i, shared_group))
        self.data_shapes = data_shapes
        self.label_shapes = label_shapes
        self.data_names = [d.name for d in data_shapes]
        self.label_names = [d.name for d in label_shapes] if label_shapes is not None else []
        self._collect_arrays()

    def _bind_ith_exec(self, i: int, data_shapes: list, label_shapes: list, shared_group: Any) -> Any:
        shared_exec = None if shared_group is None else shared_group.execs[i]
        input_shapes = dict(data_shapes)
        input_shapes.update(dict(label_shapes))
        input_types = {x.name: x.dtype for x in data_shapes}
        input_types.update({x.name: x.dtype for x in label_shapes})
        return self.symbol.simple_bind(self.contexts[i], grad_req=self.grad_req, type_dict=input_types,
                                       group2ctx=self.group2ctxs[i],
                                       shared_arg_names=self.param_names, shared_exec=shared_exec,
                                       shared_buffer=self.shared_data_arrays[i], **input_shapes)

    def _sliced_shape(self, shapes: list, i: int, major_axis: list) -> list:
        out = []
        for desc, axis in zip(shapes, major_axis):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            out.append(DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout))
        return out

    def _collect_arrays(self) -> None:
        execs = self.execs
        self.data_arrays = [[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(execs)]
                            for name, _ in self.data_shapes]
        self.state_arrays = [[e.arg_dict[name] for e in execs] for name in self.state_names]
        self.label_arrays = None if self.label_shapes is None else \
            [[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(execs)] for name, _ in self.label_shapes]
        self.param_arrays = [[e.arg_arrays[i] for e in execs] for i, name in enumerate(self.arg_names)
                             if name in self.param_names]
        self.grad_arrays = [[e.grad_arrays[i] for e in execs] for i, name in enumerate(self.arg_names)
                            if name in self.param_names] if self.for_training else None
        self.input_grad_arrays = [[e.grad_arrays[self.arg_names.index(name)] for e in execs]
                                  for name in self.data_names if name in self.arg_names] \
            if self.inputs_need_grad else None
        self.aux_arrays = [[e.aux_arrays[i] for e in execs] for i in range(len(self.aux_names))]

    def reshape(self, data_shapes: list, label_shapes: list | None) -> None:
        """Rebind for new input shapes, sharing the parameter arrays."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    # -- parameters --------------------------------------------------------------------------
    def set_params(self, arg_params: dict, aux_params: dict, allow_extra: bool = False) -> None:
        for exe in self.execs:
            exe.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params: dict, aux_params: dict) -> None:
        """Copy the (device-averaged) parameters into the given CPU arrays."""
        for names, blocks, targets in ((self.param_names, self.param_arrays, arg_params),
                                       (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                host = [w.asnumpy() for w in block]
                value = host[0] if len(host) == 1 else sum(host) / len(host)
                targets[name][:] = np.asarray(value, dtype=targets[name].dtype)

    # -- running -----------------------------------------------------------------------------
    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        _load_general(data_batch.data, self.data_arrays, self.data_layouts)
        if is_train is None:
            is_train = self.for_training
        if self.label_arrays is not None and data_batch.label:
            _load_general(data_batch.label, self.label_arrays, self.label_layouts)
        for exe in self.execs:
            exe.forward(is_train=is_train)

    def backward(self, out_grads: Any = None) -> None:
        assert self.for_training, "re-bind with for_training=True to run backward"
        out_grads = [] if out_grads is None else list(out_grads)
        for i, (exe, islice) in enumerate(zip(self.execs, self.slices)):
            sliced = []
            for grad, axis in zip(out_grads, self.output_layouts):
                if axis >= 0:
                    part = nd.slice_axis(grad, axis=axis, begin=islice.start, end=islice.stop)
                    sliced.append(part.as_in_context(self.contexts[i]))
                else:
                    sliced.append(grad.as_in_context(self.contexts[i]))
            exe.backward(out_grads=sliced or None)

    def get_output_shapes(self) -> list:
        shapes = []
        for key, out, axis in zip(self.output_names, self.execs[0].outputs, self.output_layouts):
            shape = list(out.shape)
            if axis >= 0:
                shape[axis] = self.batch_size
            shapes.append((key, tuple(shape)))
        return shapes

    def get_outputs(self, merge_multi_context: bool = True, begin: int = 0, end: int | None = None) -> list:
        end = self.num_outputs if end is None else end
        outputs = [[exe.outputs[i] for exe in self.execs] for i in range(begin, end)]
        return _merge_multi_context(outputs, self.output_layouts[begin:end]) if merge_multi_context else outputs

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        assert self.inputs_need_grad
        if merge_multi_context:
            return _merge_multi_context(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def get_states(self, merge_multi_context: bool = True) -> list:
        assert not merge_multi_context, "merge_multi_context=True is not supported for get_states yet."
        return self.state_arrays

    def set_states(self, states: Any = None, value: Any = None) -> None:
        if states is not None:
            assert value is None, "Only one of states & value can be specified."
            for src, dsts in zip(states, self.state_arrays):
                for s, d in zip(src, dsts):
                    _copy_into(s, d)
        else:
            assert value is not None, "At least one of states & value must be specified."
            for dsts in self.state_arrays:
                for d in dsts:
                    d[:] = value

    def update_metric(self, eval_metric: Any, labels: list, pre_sliced: bool = False) -> None:
        for k, (exe, islice) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                labels_slice = labels[k]
            else:
                labels_slice = []
                for label, axis in zip(labels, self.label_layouts or [0] * len(labels)):
                    if axis == 0:
                        labels_slice.append(label[islice])
                    elif axis > 0:
                        labels_slice.append(nd.slice_axis(label, axis=axis, begin=islice.start, end=islice.stop))
                    else:
                        labels_slice.append(label)
            eval_metric.update_dict(OrderedDict(zip(self.label_names, labels_slice)),
                                    OrderedDict(zip(self.output_names, exe.outputs)))

    def install_monitor(self, mon: Any) -> None:
        for exe in self.execs:
            mon.install(exe)


#: MXNet's name of the class (`mxnet.module.executor_group.DataParallelExecutorGroup`)
DataParallelExecutorGroup = ExecutorGroup
