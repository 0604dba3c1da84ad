"""How well does the encoder's q choose the codes that run forward (issue 79, `model.encoder_delta`)? On a finished run
of the real-text probe, over its training pairs (where the E-step runs): EM's q* (every code run forward) beside the
encoder's q, and for each delta the codes holding 1 - delta of q per pair (the candidates) and the mass of q* outside
them (the miss: mean, the largest, and the share of pairs missing more than 1e-3); beside them the codes holding
1 - 1e-3 of q* itself (what `support_delta` keeps for the gradient). Writes experiments/real_text/results/
CORPUS_candidates_ARM_sSEED.json; skipped when there.
With --screen view, the same for the screen of `model.view_delta` instead of the encoder's q: q* without the decoder's
terms (the prior, the bag-of-words head and the embedding view), at smaller deltas (`VIEW_DELTAS`); the run must have
the view. Writes CORPUS_screen_ARM_sSEED.json.
Usage: python experiments/probe_candidates.py CORPUS ARM SEED [--out DIR] [--screen encoder|view]"""
import argparse, json, sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from inverse_surprisal.nn import posterior_and_prior
from inverse_surprisal.runs import load_run
from inverse_surprisal.support import posterior_support
from inverse_surprisal.text import batch_rows

HERE = Path(__file__).parent / 'real_text'
DELTAS = (1e-3, 1e-2, 0.05, 0.1, 0.2, 0.3)
VIEW_DELTAS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)

def screen_weights(model, r: dict, base_mean: float) -> torch.Tensor:
    "(bs,C) the screen of `view_delta` on a batch: q* without the decoder's terms."
    costs = (r['y_mask'], r['base_surprisal'], r['base_token_surprisal'], base_mean)
    log_pc = model.joint_log_prob(posterior_and_prior(model, r['input_ids'], r['y_mask'], r['attention_mask'])[1])
    heads = model._per_class(r['input_ids'], r['y_mask'], r.get('y_view'), decoder=False)
    return model._q_star(log_pc, heads, *costs).exp()

def candidates_table(run: Path, batch_size: int=128, screen: str='encoder') -> dict:
    """q* and the screen (the encoder's q, or q* without the decoder) over the run's training pairs; each delta's
    candidates and q*'s mass they miss."""
    tr = load_run(run, device='cpu').trainer
    model, data = tr.model.eval(), tr.data.tensors(tr.train_set, tr.b['train'])
    q_star, q = [], []
    with torch.no_grad():
        for i in torch.arange(len(data['input_ids'])).split(batch_size):
            r = batch_rows(data, i)
            q_star.append(model.model_posterior(r['input_ids'], r['y_mask'], r['base_surprisal'],
                                                r['base_token_surprisal'], tr.b['base_mean'], r['attention_mask'],
                                                y_view=r.get('y_view')).exp())
            q.append(model.joint_log_prob(model.posterior(r['input_ids'], r['attention_mask'].bool())).exp()
                     if screen == 'encoder' else screen_weights(model, r, tr.b['base_mean']))
    q_star, q = torch.cat(q_star), torch.cat(q)
    rows = []
    for delta in DELTAS if screen == 'encoder' else VIEW_DELTAS:
        cand = posterior_support(q, delta)[0]
        miss = (q_star * ~cand).sum(1)
        rows.append(dict(delta=delta, candidates=round(cand.sum(1).float().mean().item(), 3),
                         miss_mean=float(f'{miss.mean().item():.3g}'), miss_max=float(f'{miss.max().item():.3g}'),
                         pairs_missing_over_1e3=round((miss > 1e-3).float().mean().item(), 4)))
    kept = posterior_support(q_star, 1e-3)[0].sum(1).float()
    ent = lambda p: -(p * p.clamp_min(1e-30).log()).sum(1).mean().item()
    return dict(pairs=len(q), q_star_support_1e3=round(kept.mean().item(), 3), q_star_entropy=round(ent(q_star), 3),
                q_entropy=round(ent(q), 3), rows=rows)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('corpus'); ap.add_argument('arm'); ap.add_argument('seed', type=int)
    ap.add_argument('--out', default=str(HERE))
    ap.add_argument('--screen', default='encoder', choices=('encoder', 'view'))
    a = ap.parse_args(argv)
    kind = 'candidates' if a.screen == 'encoder' else 'screen'
    record = Path(a.out) / 'results' / f'{a.corpus}_{kind}_{a.arm}_s{a.seed}.json'
    if record.exists(): print(record.read_text()); return
    rec = dict(corpus=a.corpus, arm=a.arm, seed=a.seed, screen=a.screen,
               **candidates_table(Path(a.out) / 'work' / a.corpus / 'runs' / f'{a.arm}_s{a.seed}_300_plateau',
                                  screen=a.screen))
    record.write_text(json.dumps(rec, indent=1) + '\n')
    print(json.dumps(rec, indent=1))

if __name__ == '__main__': main()
