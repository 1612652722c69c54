#!/usr/bin/env bash
# The CUDA paths in one pass, on a machine with a GPU: the test suite (the gpu-marked tests run
# there), the net and self-play throughput on the GPU, and a few minutes of side-10 training with
# the net on CUDA in bf16 that must end in a checkpoint and a closing match.
#
#     scripts/gpu_check.sh [OUT] [TRAIN_MINUTES]      # OUT defaults to outputs/gpu_check
#
# Uses whatever `python3` is on the PATH (set PYTHON to choose); trapy_rl is imported from this
# checkout. Logs and the benchmark rows (bench.json) go to OUT.
set -uo pipefail
OUT=${1:-outputs/gpu_check}
MINUTES=${2:-3}
PYTHON=${PYTHON:-python3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
mkdir -p "$OUT"
cd "$ROOT" || exit 1
status=0

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
$PYTHON -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, \
torch.cuda.is_available(), torch.cuda.get_device_name())" | tee -a "$OUT/gpu.txt"

echo "== tests (gpu-marked ones included) =="
$PYTHON -m pytest -q -p no:cacheprovider -n 8 tests/nn tests/mcts tests/train tests/agents \
    tests/eval 2>&1 | tee "$OUT/tests.log" | tail -n 25 || status=1

echo "== benchmarks: net and self-play =="
$PYTHON scripts/bench.py net selfplay --quick --json "$OUT/bench.json" 2>&1 \
    | tee "$OUT/bench.log" || status=1

echo "== side-10 training on CUDA in bf16, $MINUTES minutes =="
$PYTHON -m trapy_rl.train.cli experiment=side10 device=cuda bf16=true model=small \
    selfplay.resign_threshold=-1 selfplay.num_games=256 iterations=1000000 \
    minutes="$MINUTES" eval.every=0 eval.final_games=40 checkpoint.every=0 checkpoint.keep=0 \
    checkpoint.replay=false hydra.run.dir="$OUT/run" 2>&1 | tail -n 30 \
    | tee "$OUT/train.log" || status=1
cp "$OUT/run/checkpoints/latest.pt" "$OUT/gpu_small.pt" 2>/dev/null || status=1
exit $status
