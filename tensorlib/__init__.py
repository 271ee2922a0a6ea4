"""tensorlib: automatic differentiation of tensor programs, eager and traced.

>>> import tensorlib as tl
>>> x = tl.tensor([1.0, 2.0, 3.0])
>>> float(tl.grad(lambda x: tl.sum(x * x))(x)[1])
4.0
"""

from . import dtypes
from . import tree
from .dtypes import bool_, complex64, complex128, float16, float32, float64, int32, int64
from .tensor import Tensor, TensorSpec, Variable
from . import backends
from .backends import backend, set_backend
from . import ops
from .ops.creation import arange, eye, full, linspace, ones, tensor, zeros
from .ops.linalg import einsum, matmul, tensordot
from .ops.linalg_functions import matrix_transpose, vecdot
from .ops.math import (
    abs,
    absolute,
    add,
    cast,
    clip,
    cos,
    divide,
    equal,
    exp,
    expm1,
    floor,
    full_like,
    greater,
    greater_equal,
    identity,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    ones_like,
    power,
    round,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    tanh,
    true_divide,
    where,
    zeros_like,
)
from .ops.control_flow import cond, fori_loop, scan, switch, while_loop
from .ops.reduce import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    average,
    count_nonzero,
    logsumexp,
    max,
    mean,
    min,
    prod,
    ptp,
    std,
    sum,
    var,
)
from .ops.nanreduce import (
    nanargmax,
    nanargmin,
    nanmax,
    nanmean,
    nanmedian,
    nanmin,
    nanpercentile,
    nanprod,
    nanquantile,
    nanstd,
    nansum,
    nanvar,
)
from .ops.search import (
    argwhere,
    bincount,
    digitize,
    flatnonzero,
    searchsorted,
    top_k,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from .ops.segment import segment_max, segment_mean, segment_min, segment_sum
from .ops.shape import (
    boolean_mask,
    broadcast_to,
    concat,
    expand_dims,
    gather,
    gather_nd,
    getitem,
    one_hot,
    pad,
    reshape,
    scatter_nd,
    split,
    squeeze,
    stack,
    take,
    tensor_scatter_nd_add,
    tensor_scatter_nd_update,
    tile,
    transpose,
)
from .ops.elementwise import (
    angle,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    ceil,
    conj,
    conjugate,
    cosh,
    deg2rad,
    degrees,
    exp2,
    fabs,
    floor_divide,
    fmax,
    fmin,
    fmod,
    gcd,
    hypot,
    imag,
    invert,
    iscomplex,
    iscomplexobj,
    isreal,
    isrealobj,
    lcm,
    left_shift,
    log10,
    log2,
    logaddexp,
    logaddexp2,
    mod,
    nan_to_num,
    nonzero,
    rad2deg,
    radians,
    real,
    reciprocal,
    remainder,
    right_shift,
    sinc,
    sinh,
    tan,
    where,
)
from .ops.floating import (
    allclose,
    array_equal,
    cbrt,
    copysign,
    fix,
    float_power,
    frexp,
    heaviside,
    isclose,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    ldexp,
    nextafter,
    positive,
    rint,
    signbit,
    spacing,
    trunc,
)
from .ops.array import (
    append,
    argsort,
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    column_stack,
    cross,
    cummax,
    cummin,
    cumprod,
    cumsum,
    cumulative_prod,
    cumulative_sum,
    diag,
    diagonal,
    diff,
    dot,
    dstack,
    flip,
    fliplr,
    flipud,
    hstack,
    inner,
    kron,
    logcumsumexp,
    median,
    moveaxis,
    nancumprod,
    nancumsum,
    outer,
    percentile,
    quantile,
    ravel,
    repeat,
    roll,
    rot90,
    sort,
    swapaxes,
    take_along_axis,
    trace,
    tril,
    triu,
    vdot,
    vstack,
)
from .ops.numpy_extra import (
    argpartition,
    block,
    broadcast_arrays,
    broadcast_shapes,
    choose,
    compress,
    convolve,
    corrcoef,
    correlate,
    cov,
    delete,
    diag_indices,
    dsplit,
    ediff1d,
    geomspace,
    gradient,
    histogram,
    hsplit,
    in1d,
    indices,
    insert,
    interp,
    intersect1d,
    isin,
    lexsort,
    logspace,
    meshgrid,
    partition,
    polyval,
    ravel_multi_index,
    rollaxis,
    select,
    setdiff1d,
    sort_complex,
    trapezoid,
    trapz,
    tri,
    tril_indices,
    triu_indices,
    union1d,
    unravel_index,
    vander,
    vsplit,
)
from .ops.polynomial import poly, polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, roots
from .ops.numpy_more import (
    diag_indices_from,
    diagflat,
    divmod,
    extract,
    ix_,
    mask_indices,
    modf,
    resize,
    setxor1d,
    tril_indices_from,
    trim_zeros,
    triu_indices_from,
    unwrap,
)
from .ops.special import i0
from .ops import nn as _nn_ops  # noqa: F401  (registers the nn ops)
from .ops import _methods  # noqa: F401  (Tensor's operators and methods: after the op families they call)
from . import grad
from .grad import GradientTape, hessian, jacfwd, jacobian, jacrev, jvp, linearize, value_and_grad, vjp
from .grad.custom import custom_gradient, custom_jvp, custom_vjp, remat
from .ops._explain import eval_shape
from .grad.vmap import vmap
from .ops.math import stop_gradient
from . import nn
from .module import Module
from . import initializers
from . import optimizers
from .checkpoint import load_variables, save_variables
from . import linalg
from . import special, stats
from . import fft
from . import signal
from .signal import bartlett, blackman, hamming, hanning, kaiser

from .ops import random
from . import debugging
from .debugging import ensure_shape
from .profiler import profile

__version__ = "0.1.0"
from . import graph
from .graph.tracing import function
from . import testing
from . import distributed
from . import numpy_protocol  # noqa: E402,F401  (NEP 13/18: NumPy's functions on Tensors)
from .ops.standard import (  # noqa: E402  (the Array API standard's spellings and dtype queries)
    acos,
    acosh,
    asarray,
    asin,
    asinh,
    astype,
    atan,
    atan2,
    atanh,
    bitwise_invert,
    can_cast,
    e,
    empty,
    empty_like,
    finfo,
    iinfo,
    inf,
    isdtype,
    nan,
    newaxis,
    permute_dims,
    pi,
    pow,
    result_type,
    unstack,
)
