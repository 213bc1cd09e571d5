#!/usr/bin/env bash
# The GPU path run for real, on a machine with one NVIDIA GPU where CuPy and JAX's CUDA build
# are installed and nothing can be downloaded (docs/distributed.md, "The GPU check"):
#
#   tools/gpu_check.sh --fetch-wheels   # here, where pip can download: .whl/ (gitignored
#                                       # through .git/info/exclude) gets what the GPU
#                                       # machine lacks (gast, array-api-compat)
#   tools/gpu_check.sh                  # there, from the repository's root (.whl/ carried)
#   tools/gpu_check.sh --dry-run        # anywhere: the commands, the files they need, and the
#                                       # gpu-marked tests (which skip without a GPU)
#
# Steps, each with a time limit (together 8 minutes at most; a step that fails or runs out
# of time is reported and the others still run; the exit status is 1 when any failed; the
# gpu-marked tests get the most: CuPy compiles each elementwise kernel on its first use):
#   1. the environment: Python, NumPy, CuPy, JAX and their devices;
#   2. the gpu-marked tests: CuPy against NumPy (eager, to_static's forward, whole steps on
#      the default executor, auto_cast in float16) and whole XLA steps on the GPU;
#   3. XLA on the GPU: tests/xla/test_train_step.py (every optimizer, schedules, batch norm,
#      loops) and tests/distributed (DataParallel on 4 simulated CPU devices, a launched job);
#   4. benchmarks/bench_train_step.py --quick: W2t and the CNN with XLA on the GPU against
#      hand-written jax.jit, then with --device gpu (CuPy's eager and default executor).
# Logs and the benchmarks' JSON go to $OUT (the device tool's folder) or ./gpu_check_out.

set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
PY=${PYTHON:-python3}
WHEELS=${AUTOSTATIC_WHEELS:-$ROOT/.whl}
OUT_DIR=${OUT:-$ROOT/gpu_check_out}
# what the GPU machine's image lacks of pyproject.toml's dependencies (pure-Python wheels)
MISSING=("gast==0.7.0" "array-api-compat==1.16.0")
MODE=run
case "${1:-}" in
  --fetch-wheels) MODE=fetch ;;
  --dry-run) MODE=dry ;;
  "") ;;
  -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
  *) echo "gpu_check.sh: unknown option $1 (--fetch-wheels, --dry-run, --help)" >&2; exit 2 ;;
esac

if [[ $MODE == fetch ]]; then
  mkdir -p "$WHEELS"
  grep -qx '/.whl/' .git/info/exclude 2>/dev/null || \
    { [[ -d .git ]] && echo '/.whl/' >> .git/info/exclude; }
  exec "$PY" -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp -d "$WHEELS" "${MISSING[@]}"
fi

LOG="$OUT_DIR/gpu_check.log"
if [[ $MODE == run ]]; then
  mkdir -p "$OUT_DIR"
  : > "$LOG"
fi
if compgen -G "$WHEELS/*.whl" > /dev/null; then
  SITE=/tmp/autostatic-gpu-site
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE" "$WHEELS"/*.whl || { echo "gpu_check.sh: installing $WHEELS failed"; exit 1; }
  export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
# JAX takes 75% of the GPU's memory in each process by default: the test step's 4 workers,
# and CuPy beside JAX in one process, would run out of it. Allocate as needed instead.
export XLA_PYTHON_CLIENT_PREALLOCATE=false

FAILED=()
SUMMARY=()
step() {  # step NAME SECONDS COMMAND...: run it (or show it), log it, time it
  local name=$1 limit=$2
  shift 2
  if [[ $MODE == dry ]]; then
    echo "[$name, at most ${limit}s] $*"
    return
  fi
  echo "=== $name (at most ${limit}s): $*" | tee -a "$LOG"
  local start=$SECONDS status
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$LOG"
  status=${PIPESTATUS[0]}
  local took=$((SECONDS - start))
  if [[ $status -eq 0 ]]; then
    SUMMARY+=("ok      $name (${took}s)")
  else
    [[ $status -eq 124 ]] && name="$name: out of time"
    SUMMARY+=("FAILED  $name (status $status, ${took}s)")
    FAILED+=("$name")
  fi
}

ENVIRONMENT='
import sys, numpy, jax
print("python", sys.version.split()[0], "numpy", numpy.__version__, "jax", jax.__version__)
print("jax devices:", jax.devices())
import cupy
print("cupy", cupy.__version__, "devices:", cupy.cuda.runtime.getDeviceCount())
import gast, array_api_compat, autostatic, autostatic_runtime as rt
print("gast", gast.__version__, "array-api-compat", array_api_compat.__version__)
print("autostatic: cuda", rt.is_compiled_with_cuda(), "set_device(gpu) ->", rt.set_device("gpu"))
assert jax.default_backend() == "gpu", "JAX has no GPU: install its CUDA build"
'
GPU_TESTS=(tests/runtime/test_backends.py tests/jit/test_gpu.py tests/jit/test_amp.py
           tests/xla/test_gpu.py)
for f in "${GPU_TESTS[@]}" tests/xla/test_train_step.py tests/distributed \
         benchmarks/bench_train_step.py; do
  [[ -e $f ]] || { echo "gpu_check.sh: $f is missing"; exit 1; }
done

if [[ $MODE == dry ]]; then
  "$PY" -m py_compile benchmarks/bench_train_step.py tests/jit/test_gpu.py tests/xla/test_gpu.py \
    || exit 1
  "$PY" -m pytest -q -p no:cacheprovider -m gpu -rs "${GPU_TESTS[@]}" || exit 1
fi
step environment 30 "$PY" -c "$ENVIRONMENT"
step "gpu-marked tests" 150 "$PY" -m pytest -q -m gpu -rs "${GPU_TESTS[@]}"
step "XLA on the GPU" 120 "$PY" -m pytest -q -n 4 --timeout 120 tests/xla/test_train_step.py \
  tests/distributed
step "bench: XLA on the GPU" 90 "$PY" benchmarks/bench_train_step.py --quick \
  --json "$OUT_DIR/bench_xla_gpu.json"
step "bench: CuPy" 90 "$PY" benchmarks/bench_train_step.py --quick --device gpu \
  --json "$OUT_DIR/bench_cupy.json"

[[ $MODE == dry ]] && exit 0
{
  echo
  echo "=== summary"
  printf '%s\n' "${SUMMARY[@]}"
} | tee -a "$LOG"
[[ ${#FAILED[@]} -eq 0 ]]
