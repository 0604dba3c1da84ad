"""The view's weight, learned (issue 81, item 2): the precision kappa that maximises the likelihood of the held-out
pairs' sentence embeddings under a finished probe run's view head, each pair under its own code. The view's NLL is
kappa/2 |e - m_c|^2 - D/2 log(kappa / 2 pi) (`views.view_nll`); over n pairs its minimum in kappa lies at
kappa* = D / mean |e - m_c|^2, the precision a learned kappa would reach with the codes held where the run left them.
The pairs and their codes are the run's own `export` (the held-out split, each pair's most probable code); the means
are the head's running averages (`sums / counts`); the embeddings are the run's own cache (`views.safetensors`, read by `views.cached_views`).
Reads the probe's runs (experiments/probe_real_text.py CORPUS ARM SEED --base plateau, in real_text/work/, not in git);
writes one record per corpus, arm and seed to real_text/results/CORPUS_view_kappa_mle_ARM_sSEED.json (skipped when
present).
Usage: python experiments/view_kappa_mle.py CORPUS [CORPUS ...] [--seeds 0 1 2 3 4] [--arm ARM]"""
import argparse, csv, json, subprocess, sys, tempfile
from pathlib import Path

import torch
from safetensors.torch import load_file

from inverse_surprisal.views import cached_views, resolve_encoder, view_nll

HERE = Path(__file__).parent / 'real_text'
ARM = 'view-avg-k100-every-model-step-lr3-sample1-screen'       # the `text` preset's arm

def held_out_views(run: Path) -> tuple:
    "(embeddings (n,D) float64, the head's means (C,D) float64, codes (n,)) of a run's held-out pairs."
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([str(Path(sys.executable).parent / 'inverse-surprisal'), 'export', str(run), '--out',
                        f'{d}/held.csv', '--device', 'cpu'], check=True, capture_output=True)
        rows = list(csv.DictReader(open(f'{d}/held.csv')))
    encoder = resolve_encoder(json.loads((run / 'config.json').read_text())['data']['view_encoder'])
    e = cached_views([r['y'] for r in rows], encoder, run / 'views.safetensors').double()   # the run's cache, checked
    state = load_file(run / 'cvae.safetensors')
    sums, counts = state['model.view_head.sums'], state['model.view_head.counts'][:, None]
    means = torch.where(counts > 0, sums / counts.clamp(min=1e-30), 0.0).double()   # as `ViewHead.means`: 0 unreached
    return e, means, torch.tensor([int(r['code']) for r in rows])

def ml_precision(e, means, codes) -> dict:
    "kappa* = D / mean |e - m_c|^2 (the minimum of the summed view NLL), with the figures it comes from."
    sq = (e - means[codes]).pow(2).sum(1)
    return dict(pairs=len(e), dim=e.shape[1], mean_sq=sq.mean().item(), kappa_ml=e.shape[1] / sq.mean().item(),
                nll_at={k: view_nll(means[codes], e, k).mean().item() for k in (50.0, 100.0, 200.0)})

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('corpora', nargs='+'); ap.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2, 3, 4])
    ap.add_argument('--arm', default=ARM); ap.add_argument('--out', default=str(HERE))
    a = ap.parse_args(argv)
    recs = []
    for corpus in a.corpora:
        for seed in a.seeds:
            out = Path(a.out) / 'results' / f'{corpus}_view_kappa_mle_{a.arm}_s{seed}.json'
            if not out.exists():
                run = Path(a.out) / 'work' / corpus / 'runs' / f'{a.arm}_s{seed}_300_plateau'
                rec = dict(corpus=corpus, seed=seed, arm=a.arm, kappa=json.loads((run / 'config.json').read_text())
                           ['model']['view_kappa'], **ml_precision(*held_out_views(run)))
                out.write_text(json.dumps(rec, indent=1))
            recs.append(json.loads(out.read_text()))
            print(f"{corpus} s{seed}: kappa {recs[-1]['kappa']:g}, learned {recs[-1]['kappa_ml']:.1f}", flush=True)
    return recs

if __name__ == '__main__': main()
