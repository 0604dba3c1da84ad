"Build a base-surprisal cache for a fixed model and dataset; run alone or under torchrun (gloo) to compare."
import json, os, sys
from pathlib import Path

import torch
import torch.distributed as dist

from inverse_surprisal.cache import build_cache, example_fingerprint
from inverse_surprisal.reference import FrozenBaseModel

def model_and_data(seed=0, n=37, vocab=13):
    g = torch.Generator().manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Embedding(vocab, 16), torch.nn.Tanh(), torch.nn.Linear(16, vocab))
    with torch.no_grad():
        for p in model.parameters(): p.copy_(torch.randn(p.shape, generator=g))
    data = []
    for _ in range(n):
        T = int(torch.randint(3, 12, (1,), generator=g))
        y = torch.zeros(T, dtype=torch.bool); y[int(torch.randint(1, T, (1,), generator=g)):] = True
        data.append({'input_ids': torch.randint(0, vocab, (T,), generator=g), 'y_mask': y})
    return model, data

if __name__ == '__main__':
    out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    if 'RANK' in os.environ: dist.init_process_group('gloo')
    rank = dist.get_rank() if dist.is_initialized() else 0
    model, data = model_and_data()
    cache = build_cache(FrozenBaseModel(model), data, out / 'b.iscache', batch_size=4, progress=False)
    fps = [example_fingerprint(d['input_ids'], d['y_mask']) for d in data]
    (out / f'rank{rank}.json').write_text(json.dumps({'base_mean': cache.base_mean(fps), 'n': len(cache), 'b': cache.lookup(fps).tolist()}))
    if dist.is_initialized(): dist.destroy_process_group()
