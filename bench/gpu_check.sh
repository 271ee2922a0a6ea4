#!/usr/bin/env bash
# One GPU check of the CuPy backend, on a bare CUDA machine, in under 8 minutes:
#   1. install the cuda extra (from wheels in .whl/ when the machine has no registry, else from PyPI),
#   2. say which conv engine tensorlib takes (cuDNN frontend or the CuPy GEMM fallback) and why,
#   3. time the seed forward (N=60000 float32), a CNN training step (batch 128) and an MLP step
#      side by side with PyTorch CUDA (bench/gpu_bench.py prints the table),
#   4. run the test suite with the GPU present (the cupy-parametrized catalogue and tests/test_cupy.py
#      run instead of skipping, random draws with CuPy's generator), float32 without TF32 so that
#      float32 tolerances hold; gradients are checked against float64 finite differences on NumPy.
# Usage, from the repository root:  bash bench/gpu_check.sh [LOG_DIR]   (logs also go to $OUT if set)
set -u
cd "$(dirname "$0")/.."
LOG_DIR="${1:-${OUT:-/tmp/gpu_check}}"
mkdir -p "$LOG_DIR"
LOG="$LOG_DIR/gpu_check.log"
export PYTHONUNBUFFERED=1
PY=python3

step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

{
step "install the cuda extra"
if ls .whl/*.whl >/dev/null 2>&1; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH="/tmp/site:$PWD"
else
    $PY -m pip install -q -e ".[cuda,test]" && export PYTHONPATH="$PWD"
fi
# The cuDNN frontend loads libcudnn.so.9 from LD_LIBRARY_PATH first: point it at the pip-installed cuDNN.
CUDNN_LIB=$($PY - <<'EOF'
import glob, site, sysconfig
roots = site.getsitepackages() + [sysconfig.get_path("purelib")]
hits = [p for r in roots for p in glob.glob(f"{r}/nvidia/**/libcudnn.so.9", recursive=True)]
print(hits[0].rsplit("/", 1)[0] if hits else "")
EOF
)
[ -n "$CUDNN_LIB" ] && export LD_LIBRARY_PATH="$CUDNN_LIB:${LD_LIBRARY_PATH:-}"
echo "cuDNN library dir: ${CUDNN_LIB:-not found}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

step "versions and conv engines"
$PY - <<'EOF'
import cupy, numpy, torch
import tensorlib as tl
from tensorlib.backends import cupy_nn
print("tensorlib", tl.__file__, "| cupy", cupy.__version__, "| numpy", numpy.__version__, "| torch", torch.__version__,
      "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
try:
    import cudnn
    print("cudnn frontend", cudnn.__version__, "backend", cudnn.backend_version())
except Exception as e:
    print("cudnn frontend: not importable:", type(e).__name__, e)
for dtype in ("float32", "float16", "float64"):
    for kind in ("fprop", "dgrad", "wgrad"):
        print(dtype, kind, "seed conv:", cupy_nn.conv_engine(kind, (8, 32, 32, 1), (3, 3, 1, 6), (8, 30, 30, 6), dtype,
                                                             (1, 1), (1, 1), ((0, 0), (0, 0))))
print("float32 fprop SAME 5x5 (cnn conv2):", cupy_nn.conv_engine("fprop", (128, 14, 14, 32), (5, 5, 32, 64),
      (128, 14, 14, 64), "float32", (1, 1), (1, 1), ((2, 2), (2, 2))))
print("float32 fprop asymmetric SAME:", cupy_nn.conv_engine("fprop", (2, 8, 8, 3), (2, 2, 3, 4), (2, 4, 4, 4),
      "float32", (2, 2), (1, 1), ((0, 0), (0, 0))))
EOF

step "benchmark: tensorlib on CuPy vs PyTorch CUDA"
timeout 150 $PY bench/gpu_bench.py --backend cupy --repeats 15

step "test suite with the GPU present (cupy catalogue, tests/test_cupy.py, everything else)"
# Full reports go to their own files in $LOG_DIR; the summaries (FAILED lines) come here.
NVIDIA_TF32_OVERRIDE=0 timeout 100 $PY -m pytest -q -p no:cacheprovider -p no:warnings --timeout 60 --tb=short \
    tests/test_cupy.py tests/test_backends.py tests/test_backend_random.py -rf > "$LOG_DIR/test_cupy.txt" 2>&1
grep -E "^(FAILED|ERROR)|passed|failed" "$LOG_DIR/test_cupy.txt" | tail -40
NVIDIA_TF32_OVERRIDE=0 timeout 150 $PY -m pytest -q -n 12 -p no:cacheprovider -p no:warnings --timeout 120 \
    --tb=short tests/test_catalogue_backends.py -k cupy -rf > "$LOG_DIR/test_catalogue_cupy.txt" 2>&1
grep -E "^(FAILED|ERROR)|passed|failed" "$LOG_DIR/test_catalogue_cupy.txt" | tail -60
NVIDIA_TF32_OVERRIDE=0 timeout 60 $PY -m pytest -q -n 12 -p no:cacheprovider -p no:warnings --timeout 60 \
    --tb=short --ignore=tests/test_catalogue_backends.py --ignore=tests/test_cupy.py > "$LOG_DIR/test_rest.txt" 2>&1
grep -E "^(FAILED|ERROR)|passed|failed" "$LOG_DIR/test_rest.txt" | tail -15
step "done"
} 2>&1 | tee "$LOG"
