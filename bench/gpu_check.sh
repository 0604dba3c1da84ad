#!/usr/bin/env bash
# The GPU check (issue 33), in one go inside 10 minutes on a machine with one CUDA GPU and a Python whose torch sees it
# (PYTHON, default python3; the package's dependencies installed, or a .venv carried along):
#   1. the tests marked `cuda` (tests/test_cuda.py): the shared-context decoder, training in fp32 and bf16, scoring;
#   2. bench/run.py on cuda: scoring against the bare forward and tokens/s (bench_scoring), training step time,
#      examples/s and bf16 against float32 on the same batches (bench_step), recorded in bench/results.md under the
#      device's name;
#   3. the full preset on the GPU: seconds to 0.95 of the oracle information (bench_gpu_full).
# Results: bench/results.json and bench/results.md (commit them), the log in bench/gpu_check.log.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && PY=.venv/bin/python
exec > >(tee bench/gpu_check.log) 2>&1
"$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA GPU: torch.cuda.is_available() is False')"
"$PY" -c "import torch; print('device:', torch.cuda.get_device_name(), '| torch', torch.__version__)"
"$PY" -c "import inverse_surprisal" 2>/dev/null || "$PY" -m pip install -q --no-deps -e .
start=$(date +%s)
timeout 150 "$PY" -m pytest -q -m cuda tests/test_cuda.py
timeout 240 "$PY" bench/run.py --device cuda --only bench_scoring bench_step
timeout 180 "$PY" bench/run.py --device cuda --only bench_gpu_full
echo "gpu check: $(( $(date +%s) - start )) s"
