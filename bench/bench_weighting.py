"""The cost of the weighting: a CVAE training step with the example-level term (b from the cache) against the same
step with the plain term, and, for contrast, a step that recomputes b with the base model every time. Prints one JSON
object; medians over interleaved repeats after warm-up, in one process."""
import argparse, json, statistics, time

import torch

from inverse_surprisal.nn import CausalTransformer
from inverse_surprisal.objective import ObjectiveConfig
from inverse_surprisal.reference import FrozenBaseModel, score_batch
from inverse_surprisal.shared_discrete_cvae import SharedDiscreteCVAE, SharedDiscreteCVAEConfig
from inverse_surprisal.synthetic import SyntheticDataset, SyntheticTask

def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--device', default='cpu'); p.add_argument('--reps', type=int, default=31)
    a = p.parse_args()
    dev = torch.device(a.device)
    task = SyntheticTask(); ds = SyntheticDataset(task, 64, seed=0)
    ids, ym = ds.input_ids.to(dev), ds.y_mask.to(dev)
    cached_b = ds.oracle_base_surprisal.float().to(dev)
    base = FrozenBaseModel(CausalTransformer(task.n_tokens, ids.shape[1]).to(dev))
    cfg = SharedDiscreteCVAEConfig(task.n_tokens, ids.shape[1], y_len=task.length, z_entry='prefix')   # as results.json was measured
    models = {}
    for name, recon in (('plain', 'plain'), ('example', 'example'), ('recompute', 'example')):
        torch.manual_seed(0)
        m = SharedDiscreteCVAE(cfg, ObjectiveConfig(recon=recon, eps=0.1, beta=1.0)).to(dev)
        models[name] = (m, torch.optim.Adam(m.parameters(), lr=1e-3))
    def step(name):
        m, opt = models[name]
        b = score_batch(base, ids, ym).b if name == 'recompute' else cached_b
        out = m(ids, ym, b, step=10)
        opt.zero_grad(); out.loss.backward(); opt.step()
        if dev.type == 'cuda': torch.cuda.synchronize()
    for name in models: step(name); step(name)                 # warm-up
    times = {name: [] for name in models}
    for _ in range(a.reps):
        for name in models:
            t = time.perf_counter(); step(name); times[name].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(json.dumps({'weighting_step': 'shared discrete CVAE (exact, 12 classes), d=64, 2 layers, batch 64 of the default task',
                      'weighting_overhead_ratio': round(med['example'] / med['plain'], 4),
                      'recompute_b_overhead_ratio': round(med['recompute'] / med['plain'], 4),
                      'plain_step_seconds': round(med['plain'], 5)}))

if __name__ == '__main__': main()
