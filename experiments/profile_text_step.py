"""Where a `text` step's time goes (issue 79): torch.profiler over training steps of bench/bench_text_step.py's model
(16 codes, batch 32, a 2-layer d=64 GPT-2 over 2 000 tokens as the real-text probe's base, short context), with the
decoder's gradient through every code (support_delta 0), on q*'s support (1e-3), with z in the copy's top block only,
on one code per pair drawn from the support (support_sample 1), and that with the decoder run forward only on the codes
the embedding view's screen keeps (view_delta 1e-4, the text preset's step; the bench's `screen` batch). Per arm: the
milliseconds a step spends in its forward, backward and Adam, the forward's decoder passes (the codes run forward,
without gradient on the support, then the codes with it), and the operators that take the most of it. One torch
thread; run it with nothing else on the machine. Prints the tables and writes them to
experiments/real_text/results/NAME.json (the own-data page reads profile_text_step.json, from before the fused GELU and
support_sample, profile_text_step_preset.json, from before the screen, and profile_text_step_screen.json).
Usage: python experiments/profile_text_step.py [--steps N] [--context N] [--name NAME]"""
import argparse, json, sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, str(Path(__file__).parent.parent / 'bench'))
from bench_text_step import SCREEN, setup
from inverse_surprisal.shared_discrete_cvae import SharedDiscreteCVAE

# the decoder's passes: every code's (or, screened, the view's terms and the codes the screen keeps), then the codes
# that carry the gradient (records before profile_text_step_screen.json named the first 'every code')
PASSES = {'_per_class': 'the codes run forward', '_on_support': 'the gradient codes'}

def labelled(method: str):
    "`SharedDiscreteCVAE.method` run under a profiler label (`PASSES`), so that the forward's passes show apart."
    inner = getattr(SharedDiscreteCVAE, method)
    def run(*a, **k):
        with record_function(PASSES[method]): return inner(*a, **k)
    return run

for _m in PASSES: setattr(SharedDiscreteCVAE, _m, labelled(_m))

def profiled(delta: float, x_len: int, steps: int, z_layers: int=0, sample: int=0, screen: int=0):
    "The profiler's averages over `steps` training steps (after two unprofiled ones) at `support_delta` delta."
    model, opt, batch, _ = setup(x_len, delta, z_layers, sample=sample, screen=screen)
    def step():
        with record_function('forward'): o = model(**batch, step=300)
        with record_function('backward'): opt.zero_grad(); o.loss.backward()
        with record_function('adam'): opt.step()
    for _ in range(2): step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps): step()
    return prof.key_averages()

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--steps', type=int, default=3); ap.add_argument('--context', type=int, default=3)
    ap.add_argument('--name', default='profile_text_step_screen', help='the record: results/NAME.json')
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)      # as the trainer runs its steps (the run's `flush_denormal`)
    rec = dict(steps=a.steps, context=a.context, arms=[])
    for name, delta, z_layers, sample, screen in (
            ('every code, forward and backward', 0.0, 0, 0, 0), ("q*'s support", 1e-3, 0, 0, 0),
            ("q*'s support, z in the top block", 1e-3, 1, 0, 0), ('one code drawn from it', 1e-3, 1, 1, 0),
            ("the codes run forward chosen by the view's screen: the preset", 1e-3, 1, 1, SCREEN)):
        avg = profiled(delta, a.context, a.steps, z_layers, sample, screen)
        phases = {e.key: e.cpu_time_total / 1000 / a.steps for e in avg
                  if e.key in ('forward', 'backward', 'adam', *PASSES.values())}
        print(f"{name}: ms a step " + ', '.join(f"{k} {v:.0f}" for k, v in phases.items()))
        ops = sorted((e for e in avg if e.key.startswith('aten::')), key=lambda e: -e.self_cpu_time_total)[:8]
        print('  ' + ', '.join(f"{e.key[6:]} {e.self_cpu_time_total / 1000 / a.steps:.0f}" for e in ops))
        rec['arms'].append(dict(step=name, ms={k: round(v, 1) for k, v in phases.items()},
                                top_ops_ms={e.key[6:]: round(e.self_cpu_time_total / 1000 / a.steps, 1) for e in ops}))
    out = Path(__file__).parent / 'real_text' / 'results' / f'{a.name}.json'
    out.write_text(json.dumps(rec, indent=1) + '\n')

if __name__ == '__main__': main()
