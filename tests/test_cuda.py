"""The tests that need a CUDA GPU (marked `cuda`, skipped without one; bench/gpu_check.sh runs them): the shared-context
decoder, a training run in float32 and in bf16, and scoring against the CPU's figures."""
import json

import pytest
import torch

from runs import BIN, run

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA GPU')]

def test_shared_context_on_cuda_equals_each_class_and_the_cpu():
    from inverse_surprisal.nn import CausalTransformer, z_positions
    from inverse_surprisal.losses import y_region_token_nll
    torch.manual_seed(0)
    cpu = CausalTransformer(13, 18, d_model=64, z_entry='y').eval()
    gpu = CausalTransformer(13, 18, d_model=64, z_entry='y').eval().cuda()
    gpu.load_state_dict(cpu.state_dict())
    ids = torch.randint(0, 13, (32, 18)); ym = torch.zeros(32, 18, dtype=torch.bool); ym[:, 10:] = True
    z = torch.randn(16, 64)
    with torch.no_grad():
        l_cpu, _ = cpu.class_nll(ids, ym, z)
        l_gpu, tok_gpu = gpu.class_nll(ids.cuda(), ym.cuda(), z.cuda())
        for c in (0, 15):
            logits = gpu(ids.cuda(), z[c].cuda().expand(32, 1, -1), z_positions(ym.cuda()))
            by_hand = y_region_token_nll(logits[:, :-1], ids[:, 1:].cuda(), ym[:, 1:].cuda()).sum(1)
            torch.testing.assert_close(l_gpu[:, c], by_hand, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(l_gpu.cpu(), l_cpu, rtol=1e-4, atol=1e-4)

@pytest.mark.parametrize('precision', ['fp32', 'bf16'])
def test_training_on_cuda(tmp_path, precision):
    out = tmp_path / precision
    run(BIN / 'inverse-surprisal', 'train', '--preset', 'tiny', '--device', 'cuda', '--out', out, '--no-progress',
        '--set', f'precision={precision}', '--set', 'model.z_entry=y')
    m = json.loads((out / 'metrics.json').read_text())
    assert m['step'] == 12 and all(torch.isfinite(torch.tensor(m[k])) for k in ('kl', 'recon_nll', 'information_gain'))

def test_scoring_on_cuda_equals_the_cpu(saved, tmp_path):
    pq = pytest.importorskip('pyarrow.parquet')
    tables = {}
    for device, dtype in (('cpu', 'float32'), ('cuda', 'float32'), ('cuda', 'bfloat16')):
        out = tmp_path / f'{device}-{dtype}.parquet'
        run(BIN / 'inverse-surprisal', 'score', '--data', saved / 'pairs.jsonl', '--base-model', saved / 'base', '--out', out,
            '--device', device, '--dtype', dtype, '--cache', tmp_path / f'{device}-{dtype}.iscache', '--no-progress')
        tables[device, dtype] = pq.read_table(out).to_pydict()
    cpu, gpu, bf16 = (torch.tensor(tables[k]['b']) for k in (('cpu', 'float32'), ('cuda', 'float32'), ('cuda', 'bfloat16')))
    torch.testing.assert_close(gpu, cpu, rtol=1e-4, atol=1e-4)
    n_y = torch.tensor(tables['cpu', 'float32']['n_y_tokens'])
    assert ((bf16 - cpu).abs() / n_y).max() < 0.05
