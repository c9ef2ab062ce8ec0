"""MXNet 1.9.1 operators hybridgraph does not register, each with the reason and what to use instead.

`mx.nd.contrib.quantize_v2`, `mx.sym.X`, or a -symbol.json using such an operator must not end in a
bare AttributeError / "not registered": the user gets hybridgraph's UnsupportedAttribute naming the
MXNet operator and the alternative. The registry always wins: an operator another part of the project
registers later is found before this list is consulted. A name that is not an MXNet 1.9.1 operator is
not here and keeps the plain AttributeError. tests/nd/test_unsupported_ops.py checks that every name in
tests/data/mxnet_1.9.1_op_names.txt is registered or listed here.
"""
from __future__ import annotations

from .registry import all_names

# (what is not supported, with {op} for the name; the alternative; the MXNet operator names)
_GROUPS: tuple = (
    ('INT8 quantization (MXNet operator {op})',
     'run the float32 model; INT8 quantization is not part of hybridgraph',
     (
        '_contrib_calibrate_entropy _contrib_dequantize _contrib_quantize _contrib_quantize_asym '
        '_contrib_quantize_v2 _contrib_quantized_act _contrib_quantized_batch_norm '
        '_contrib_quantized_concat _contrib_quantized_conv _contrib_quantized_elemwise_add '
        '_contrib_quantized_elemwise_mul _contrib_quantized_embedding _contrib_quantized_flatten '
        '_contrib_quantized_fully_connected _contrib_quantized_pooling _contrib_quantized_rnn '
        '_contrib_requantize ').split()),
    ('the DGL graph operator {op}',
     "DGL's own sampling and graph functions on its own arrays; DGL's MXNet-backed CSR operators are not "
     'part of hybridgraph',
     (
        '_contrib_dgl_adjacency _contrib_dgl_csr_neighbor_non_uniform_sample '
        '_contrib_dgl_csr_neighbor_uniform_sample _contrib_dgl_graph_compact _contrib_dgl_subgraph '
        '_contrib_edge_id ').split()),
    ('the MKL-DNN fused subgraph operator {op}',
     'the float32 graph it was fused from (Convolution / FullyConnected / BatchNorm followed by '
     'Activation); hybridgraph does not run MKL-DNN subgraph passes',
     (
        '_contrib_BatchNormWithReLU _sg_mkldnn_conv _sg_mkldnn_fully_connected _sg_mkldnn_selfatt_qk '
        '_sg_mkldnn_selfatt_valatt ').split()),
    ("MXNet's OpenCV image operator {op}",
     'mx.image.imread / imdecode / imresize / copyMakeBorder (Pillow based)',
     (
        '_cvcopyMakeBorder _cvimdecode _cvimread _cvimresize _imdecode ').split()),
    ("MXNet's numpy-interface internal operator {op}",
     "the mx.np / mx.npx functions (hybridgraph's mx.np calls its own registered operators)",
     (
        '_np_all _np_amax _np_amin _np_any _np_atleast_1d _np_atleast_2d _np_atleast_3d _np_moveaxis '
        '_np_product _np_repeat _np_sometrue _np_trace _npi_abs _npi_argsort _npi_average '
        '_npi_boolean_mask_assign_scalar _npi_boolean_mask_assign_tensor _npi_cast _npi_choice '
        '_npi_clip _npi_copyto _npi_cvimdecode _npi_cvimread _npi_cvimresize _npi_dsplit '
        '_npi_expand_dims _npi_flip _npi_hsplit _npi_insert_scalar _npi_insert_slice '
        '_npi_insert_tensor _npi_isfinite _npi_isinf _npi_isnan _npi_isneginf _npi_isposinf '
        '_npi_linspace _npi_logspace _npi_multinomial _npi_nonzero _npi_norm _npi_reshape '
        '_npi_scatter_set_nd _npi_share_memory _npi_shuffle _npi_slice _npi_slice_assign '
        '_npi_slice_assign_scalar _npi_sort _npi_std _npi_swapaxes _npi_tile _npi_var '
        '_npi_where_lscalar _npi_where_rscalar _npi_where_scalar2 _npx_activation _npx_arange_like '
        '_npx_batch_flatten _npx_cast _npx_dropout _npx_erf _npx_erfinv _npx_fully_connected '
        '_npx_gamma _npx_gammaln _npx_leaky_relu _npx_log_softmax _npx_nonzero _npx_reshape_like '
        '_npx_rnn _npx_shape_array _npx_slice _npx_smooth_l1 _npx_softmax _npx_topk ').split()),
    ("MXNet's sparse-storage operator {op}",
     'the dense operator without the _sparse_ / _scatter_ prefix (mx.nd.X, mx.nd.sparse.X; _square_sum: '
     'sum of square): hybridgraph holds row_sparse and csr arrays densely',
     (
        '_scatter_elemwise_div _scatter_minus_scalar '
        '_scatter_plus_scalar _scatter_set_nd _sparse_ElementWiseSum _sparse_FullyConnected '
        '_sparse_LinearRegressionOutput _sparse_LogisticRegressionOutput _sparse_MAERegressionOutput '
        '_sparse__contrib_round_ste _sparse__contrib_sign_ste _sparse_abs _sparse_add_n '
        '_sparse_arccos _sparse_arccosh _sparse_arcsin _sparse_arcsinh _sparse_arctan _sparse_arctanh '
        '_sparse_broadcast_add _sparse_broadcast_div _sparse_broadcast_minus _sparse_broadcast_mul '
        '_sparse_broadcast_plus _sparse_broadcast_sub _sparse_cbrt _sparse_ceil '
        '_sparse_cos _sparse_cosh _sparse_degrees _sparse_elemwise_add _sparse_elemwise_div '
        '_sparse_elemwise_mul _sparse_elemwise_sub _sparse_exp _sparse_expm1 _sparse_fix '
        '_sparse_floor _sparse_gamma _sparse_gammaln _sparse_log _sparse_log10 _sparse_log1p '
        '_sparse_log2 _sparse_make_loss _sparse_mean _sparse_negative _sparse_norm _sparse_radians '
        '_sparse_relu _sparse_retain _sparse_rint _sparse_round _sparse_rsqrt _sparse_sigmoid '
        '_sparse_sign _sparse_sin _sparse_sinh _sparse_sqrt _sparse_square _sparse_stop_gradient '
        '_sparse_sum _sparse_tan _sparse_tanh _sparse_trunc _sparse_zeros_like _square_sum ').split()),
    ("MXNet's storage-cast operator {op}",
     'mx.nd.sparse.cast_storage(x, stype) or NDArray.tostype(stype) (Python functions here: hybridgraph '
     'holds row_sparse and csr arrays densely)',
     ['cast_storage', '_sparse_cast_storage']),
    ("MXNet's operator {op}",
     'CSRNDArray.data.size for the stored values (hybridgraph holds csr arrays densely)',
     ['_contrib_getnnz']),
    ("MXNet's operator {op}",
     'mx.nd.Embedding (hybridgraph has no row_sparse gradients; mx.gluon.contrib.nn.SparseEmbedding '
     'runs Embedding)',
     ['_contrib_SparseEmbedding']),
    ("MXNet's internal gradient operator {op}",
     "autograd.backward() or Executor.backward(): hybridgraph derives gradients from each operator's "
     "gradient rule; MXNet's _backward_ operators are not operators of the graph format",
     (
        '_backward_Activation _backward_BatchNorm_v1 _backward_Convolution_v1 '
        '_backward_CustomFunction _backward_Dropout _backward_Embedding '
        '_backward_IdentityAttachKLSparseReg _backward_LeakyReLU _backward_Pooling_v1 '
        '_backward_RROIAlign _backward_SequenceMask _backward_SequenceReverse _backward_SliceChannel '
        '_backward_SoftmaxActivation _backward_SparseEmbedding _backward_SwapAxis '
        '_backward__CrossDeviceCopy _backward__NDArray _backward__Native '
        '_backward__contrib_DeformableConvolution _backward__contrib_DeformablePSROIPooling '
        '_backward__contrib_ModulatedDeformableConvolution _backward__contrib_MultiBoxDetection '
        '_backward__contrib_MultiBoxPrior _backward__contrib_MultiBoxTarget '
        '_backward__contrib_MultiProposal _backward__contrib_PSROIPooling _backward__contrib_Proposal '
        '_backward__contrib_SyncBatchNorm _backward__contrib_count_sketch _backward__contrib_fft '
        '_backward__contrib_ifft _backward_abs _backward_add _backward_amp_cast '
        '_backward_amp_multicast _backward_arccos _backward_arccosh _backward_arcsin '
        '_backward_arcsinh _backward_arctan _backward_arctanh _backward_backward_FullyConnected '
        '_backward_broadcast_add _backward_broadcast_div _backward_broadcast_hypot '
        '_backward_broadcast_maximum _backward_broadcast_minimum _backward_broadcast_mod '
        '_backward_broadcast_mul _backward_broadcast_power _backward_broadcast_sub _backward_cbrt '
        '_backward_clip _backward_col2im _backward_cond _backward_contrib_BatchNormWithReLU '
        '_backward_contrib_bipartite_matching _backward_contrib_box_iou _backward_copy _backward_cos '
        '_backward_cosh _backward_ctc_loss _backward_degrees _backward_div _backward_div_scalar '
        '_backward_erf _backward_erfinv _backward_expm1 _backward_gamma '
        '_backward_gammaln _backward_hard_sigmoid _backward_hypot _backward_hypot_scalar '
        '_backward_linalg_extractdiag _backward_linalg_extracttrian _backward_linalg_gemm '
        '_backward_linalg_gemm2 _backward_linalg_inverse _backward_linalg_makediag '
        '_backward_linalg_maketrian _backward_linalg_syrk _backward_log '
        '_backward_log10 _backward_log1p _backward_log2 _backward_max _backward_maximum '
        '_backward_maximum_scalar _backward_mean _backward_min _backward_minimum '
        '_backward_minimum_scalar _backward_mul _backward_mul_scalar _backward_nanprod '
        '_backward_nansum _backward_norm _backward_np_average _backward_np_concat _backward_np_matmul '
        '_backward_np_max _backward_np_mean _backward_np_min _backward_np_prod _backward_np_sum '
        '_backward_np_trace _backward_np_where _backward_np_where_lscalar _backward_np_where_rscalar '
        '_backward_npi_arctan2 _backward_npi_arctan2_scalar _backward_npi_broadcast_add '
        '_backward_npi_broadcast_div _backward_npi_broadcast_mod _backward_npi_broadcast_mul '
        '_backward_npi_broadcast_power _backward_npi_broadcast_sub _backward_npi_copysign '
        '_backward_npi_copysign_scalar _backward_npi_flip _backward_npi_hypot _backward_npi_ldexp '
        '_backward_npi_ldexp_scalar _backward_npi_norm _backward_npi_rarctan2_scalar '
        '_backward_npi_rcopysign_scalar _backward_npi_rldexp_scalar _backward_pdf_dirichlet '
        '_backward_pdf_exponential _backward_pdf_gamma _backward_pdf_generalized_negative_binomial '
        '_backward_pdf_negative_binomial _backward_pdf_normal _backward_pdf_poisson '
        '_backward_pdf_uniform _backward_power _backward_power_scalar _backward_prod '
        '_backward_radians _backward_rcbrt _backward_rdiv_scalar _backward_reciprocal '
        '_backward_reshape _backward_reverse _backward_rpower_scalar _backward_rsqrt '
        '_backward_sigmoid _backward_sign _backward_sin _backward_sinh _backward_slice '
        '_backward_smooth_l1 _backward_softmin _backward_softsign _backward_sparse_retain '
        '_backward_sqrt _backward_square _backward_square_sum _backward_squeeze _backward_stack '
        '_backward_sub _backward_sum _backward_tan _backward_tanh _backward_topk _backward_tril '
        '_backward_where _broadcast_backward _contrib_backward_gradientmultiplier '
        '_contrib_backward_quadratic _npi_backward_nan_to_num _npi_backward_polyval '
        '_npi_hsplit_backward _split_v2_backward ').split()),
    ("MXNet's deprecated operator {op}",
     'Pooling with the same attributes (Pooling_v1 pads max pooling with zeros, Pooling with -inf: '
     'the values differ where a padded window holds only negative values)',
     (
        'Pooling_v1 ').split()),
    ("MXNet's cached-graph operator {op}",
     'HybridBlock.hybridize() or mx.nd.CachedOp(symbol)',
     (
        '_CachedOpThreadSafe ').split()),
    ("MXNet's device-copy operator {op}",
     'NDArray.copyto(ctx) / NDArray.as_in_context(ctx)',
     (
        '_CrossDeviceCopy _copyto ').split()),
    ("MXNet's legacy Python operator {op}",
     'mx.operator.CustomOp with mx.operator.register (mx.nd.Custom / mx.sym.Custom)',
     (
        '_NDArray _Native _npi_Custom _CustomFunction ').split()),
    ("MXNet's internal graph operator {op}",
     'the public operators: stop_gradient (_NoGradient), elemwise_add (_grad_add), zeros_like '
     '(_zeros_without_dtype), NDArray[:] = value (_set_value), identity (_identity_with_attr_like_rhs)',
     (
        '_NoGradient _grad_add _identity_with_attr_like_rhs _zeros_without_dtype _set_value ').split()),
    ("MXNet's subgraph control-flow operator {op} in a saved graph",
     'mx.nd.contrib.cond (or mx.sym.contrib.cond) in Python; hybridgraph builds cond from a Python '
     'function, not from the _cond nodes of a -symbol.json (saved _foreach nodes do load)',
     ['_cond']),
)
_GROUPS += (
    ("MXNet's probability-density operator {op}",
     "scipy.stats (norm.pdf, gamma.logpdf, ...) on NDArray.asnumpy()",
     ("random_pdf_dirichlet random_pdf_exponential random_pdf_gamma random_pdf_generalized_negative_binomial "
      "random_pdf_negative_binomial random_pdf_normal random_pdf_poisson random_pdf_uniform "
      "_random_pdf_dirichlet _random_pdf_exponential _random_pdf_gamma "
      "_random_pdf_generalized_negative_binomial _random_pdf_negative_binomial _random_pdf_normal "
      "_random_pdf_poisson _random_pdf_uniform").split()),
    ("MXNet's GPU-only operator {op}",
     "numpy.fft.fft / ifft (for _contrib_fft / _contrib_ifft) or a hashed projection with mx.nd.dot (for "
     "_contrib_count_sketch) on CPU arrays; MXNet 1.9.1 registers these three for GPU only",
     ("_contrib_fft _contrib_ifft _contrib_count_sketch").split()),
    ("MXNet's aggregated LAMB operator {op}",
     "mx.optimizer.LAMB (its per-weight lamb_update_phase1 / lamb_update_phase2)",
     ("_multi_lamb_update _multi_mp_lamb_update").split()),
    ("MXNet's sparse-regularisation operator {op}",
     "add the KL sparseness penalty to the loss (the operator is the identity in its forward pass)",
     ["IdentityAttachKLSparseReg"]),
    ("MXNet's operator {op}",
     "mx.nd.contrib.rand_zipfian (sampling with replacement) or numpy's random Generator",
     ["_sample_unique_zipfian"]),
    ("MXNet's legacy NDArray function {op} as a graph operator",
     "mx.nd.onehot_encode / mx.nd.fill_element_0index (Python functions on NDArrays here)",
     ["_onehot_encode", "fill_element_0index"]),
)

#: MXNet operator name -> (what is not supported, the alternative)
UNSUPPORTED_OPS: dict[str, tuple[str, str]] = {
    name: (feature.format(op=name), alternative) for feature, alternative, names in _GROUPS for name in names}

# the sub-namespaces of mx.nd / mx.sym and the prefix MXNet gives their operators' names
_PREFIXES = {"contrib": "_contrib_", "linalg": "_linalg_", "image": "_image_", "random": "_random_",
             "sparse": "_sparse_", "_internal": "", "op": "", "": ""}


def unsupported_reason(name: str) -> str | None:
    """The message for an MXNet 1.9.1 operator hybridgraph lacks, or None when `name` is not one."""
    entry = UNSUPPORTED_OPS.get(name)
    if entry is None or name in all_names():   # an operator the registry has always wins
        return None
    return f"{entry[0]} is not supported by hybridgraph. Instead: {entry[1]}."


def unsupported_error(namespace: str, attr: str) -> Exception | None:
    """hybridgraph's UnsupportedAttribute for `<namespace>.<attr>` when it names an MXNet operator
    hybridgraph lacks, else None (the caller raises its plain AttributeError). `namespace` is "" for
    mx.nd / mx.sym, or a sub-namespace such as "contrib" (whose operators MXNet names _contrib_X)."""
    prefix = _PREFIXES.get(namespace, "")
    for full in dict.fromkeys((prefix + attr, attr)):
        reason = unsupported_reason(full)
        if reason is not None:
            from hybridgraph.unsupported import UnsupportedAttribute  # noqa: PLC0415 - loads after nd
            return UnsupportedAttribute(reason)
    return None


def module_getattr(module_name: str, namespace: str):
    """A module-level `__getattr__` (PEP 562) for mx.nd, mx.sym and their sub-namespaces."""
    def __getattr__(name: str):  # noqa: N807
        err = None if name.startswith("__") else unsupported_error(namespace, name)
        if err is not None:
            raise err
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
    return __getattr__
