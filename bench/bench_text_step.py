"""A training step of the `text` preset's CVAE (16 codes, EM, the base's copy as decoder, batch 32) against one plain
fine-tuning step of the same base on the same batch (forward, backward and Adam, no z): milliseconds per step and the
ratio, with the decoder's gradient through every class (`model.support_delta=0`, one pass), on the support of q* only
(`support_delta=1e-3`: every class's values without gradient, then the classes holding 1 - 1e-3 of q*), and the same
with z in the copy's top block only (`decoder_z_layers=1`: its lower block runs once per pair), and that with the
decoder's gradient on one class per pair drawn from the support (`support_sample=1`), and that with the decoder run
forward only on the classes the embedding view's screen keeps (`view_delta=1e-4`, the preset's step; below), for
a short context (3 tokens, as the real-text probe's x) and a long one (40), y 20 tokens, and the short context with y
of 4 to 20 tokens, right-padded as a batch of real pairs is (`ragged`: the padding and the context are no y, and the
copy's output layer runs on y's positions only); a 2-layer d=64 GPT-2 over 2 000 tokens as the probe's base. A fresh
CVAE's z path is zero, so every code is one function and q* is the prior; here the z path gets random weights (std
0.3), so that the codes differ as after training, and beta is 0.5, which puts q* where the real-text probe's runs have
it: `support_classes` codes of 16 hold 1 - 1e-3 of it (5.6 here; 4.2-5.7 in the probe's runs, their training logs and
experiments/probe_candidates.py), at `q_star_kl` nats from the prior (2.25 here; the runs' held-out KL 1.8-2.1). Beta
weighs nothing else in the step's work.
The output layer's NLL with gradient (`linear_nll`, 4 096 rows of 2 000 tokens): its logits taken again in the backward
against kept whole (`F.cross_entropy`), at widths on both sides of `RECOMPUTE_WIDTH`.
The embedding view is left out (`data.view_encoder='none'`): with random embeddings it would make q* one-hot, where
the real-text probe's q* holds its mass on 4 to 6 codes; its head costs nothing measurable in a step (191 against 192
ms a step at short context, support_sample 1, medians of three). Denormal floats are flushed to zero, as the trainer
runs its steps (`flush_denormal`): with the view, q*'s smallest weights made the head's backward 40 times slower
without it. The preset's own step, the decoder run forward only on the codes that q* without the decoder leaves
1 - 1e-4 of (`view_delta`), needs the view: there each pair's embedding is equally near 8 of the 16 codes' means, and
the screen then runs 3.3 codes a pair forward at short context (2.7 at long; `text_step_screen_classes_*`), as the
real-text probe's runs did after their start (medians over their logged steps, seed by seed: 2.5-3.5 on WordNet,
2.7-3.3 on Debian). Interleaved repeats, medians. Prints one JSON object."""
import json, statistics, time

import torch, transformers

from inverse_surprisal.config import build_model, make_config
from inverse_surprisal.hf_decoder import PretrainedDecoder
from inverse_surprisal.losses import RECOMPUTE_WIDTH, _LinearNLL

BATCH, C, Y, V, REPEATS, STEPS, D, SCREEN = 32, 16, 20, 2000, 5, 3, 384, 8

def setup(x_len: int, delta: float, z_layers: int=0, ragged: bool=False, sample: int=0, screen: int=0):
    """(model, optimiser, batch, base) of the text preset's CVAE on a 2-layer GPT-2, at `support_delta` delta and
    `support_sample` sample; with `ragged`, y of 4 to Y tokens, right-padded; with `screen` k, the embedding view
    (kappa 100, running means) screening the decoder's classes (`view_delta` 1e-4), each pair's embedding equally near
    k of the 16 means (the head's terms then leave some of them out of the screen)."""
    torch.manual_seed(0)
    lm = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=V, n_positions=64, n_embd=64, n_layer=2,
                                                              n_head=4, bos_token_id=1, eos_token_id=1)).eval()
    lm.loss_type = 'ForCausalLM'        # the loss `labels=` computes, named: transformers warns when it guesses it
    view = dict(view_delta=1e-4, view_kappa=100.0, view_decay=0.98) if screen else {}
    cfg = make_config('text', dict(model=dict(code_sizes=(C,), d_model=64, support_delta=delta, support_sample=sample,
                                              decoder_z_layers=z_layers, **view), objective=dict(beta=0.5),
                                   data=dict(path='pairs.jsonl', base_model='base',
                                             view_encoder='minilm' if screen else 'none')))
    model = build_model(cfg, vocab_size=V, seq_len=x_len + 1 + Y, view_dim=D if screen else 0)
    model.decoder = PretrainedDecoder(lm, 64, -1, 'every', z_layers)
    with torch.no_grad():
        for lin in [model.decoder.z_proj, *model.decoder.z_blocks]: torch.nn.init.normal_(lin.weight, std=0.3)
    ids = torch.randint(2, V, (BATCH, x_len + 1 + Y))
    ym = torch.zeros(ids.shape, dtype=torch.bool); ym[:, x_len + 1:] = True
    real = torch.ones_like(ym)
    if ragged:
        n_y = torch.randint(4, Y + 1, (BATCH,), generator=torch.Generator().manual_seed(1))
        real = torch.arange(ids.shape[1])[None] < (x_len + 1 + n_y)[:, None]
        ids, ym = ids.masked_fill(~real, 0), ym & real
    batch = dict(input_ids=ids, y_mask=ym, attention_mask=real.long(), base_surprisal=torch.full((BATCH,), 60.))
    if screen:          # the means: C random unit vectors; each pair's embedding the normalised sum of k of them
        means = torch.nn.functional.normalize(torch.randn(C, D), dim=1)
        model.view_head.sums.copy_(means); model.view_head.counts.fill_(1.0)
        model.view_head.update = lambda *a, **k: None   # the means stay, as the weights do (learning rate 0 below)
        near = torch.rand(BATCH, C).argsort(1)[:, :screen]
        batch['y_view'] = torch.nn.functional.normalize(means[near].sum(1), dim=1)
    # learning rate 0: Adam does its work, the weights stay, so every step sees the same q*
    return model.train(), torch.optim.Adam(model.parameters(), 0.0), batch, lm

def ms_cvae_step(arm) -> float:
    model, opt, batch, _ = arm
    start = time.perf_counter()
    for _ in range(STEPS):
        o = model(**batch, step=300)
        opt.zero_grad(); o.loss.backward(); opt.step()
    return 1000 * (time.perf_counter() - start) / STEPS

def ms_finetune_step(arm) -> float:
    "One plain fine-tuning step of the base on the batch's y: forward, backward, Adam."
    _, _, batch, lm = arm
    lm, ids = lm.train(), batch['input_ids']
    opt = torch.optim.Adam(lm.parameters(), 1e-4)
    start = time.perf_counter()
    for _ in range(STEPS):
        loss = lm(input_ids=ids, attention_mask=batch['attention_mask'],
                  labels=ids.masked_fill(~batch['y_mask'], -100)).loss
        opt.zero_grad(); loss.backward(); opt.step()
    return 1000 * (time.perf_counter() - start) / STEPS

def support(arm) -> tuple:
    "(classes kept per pair, q*'s KL from the prior) on the arm's batch."
    model, _, batch, _ = arm
    o = model(**batch, step=300)
    with torch.no_grad(): q = model.model_posterior(batch['input_ids'], batch['y_mask'], batch['base_surprisal'],
                                                    attention_mask=batch['attention_mask'])
    prior = o.extras['log_p'][0]
    return o.extras['support_size'].float().mean().item(), (q.exp() * (q - prior)).sum(1).mean().item()

def forward_classes(arm) -> float:
    "The classes the view's screen runs forward, per pair, on the arm's batch."
    model, _, batch, _ = arm
    return model(**batch, step=300).extras['forward_classes'].float().mean().item()

def ms_output_layer(width: int) -> dict:
    "Milliseconds of the output layer's NLL, forward and backward: its logits taken again, and kept whole."
    torch.manual_seed(0)
    h, lin = torch.randn(4096, width, requires_grad=True), torch.nn.Linear(width, V, bias=False)
    t = torch.randint(0, V, (4096,))
    arms = dict(again=lambda: _LinearNLL.apply(h, lin.weight, None, t, 256),
                kept=lambda: torch.nn.functional.cross_entropy(lin(h), t, reduction='none'))
    times = {k: [] for k in arms}
    for _ in range(REPEATS + 1):
        for k, f in arms.items():
            start = time.perf_counter(); f().sum().backward(); times[k].append(1000 * (time.perf_counter() - start))
    return {f'linear_nll_ms_{k}_width{width}': statistics.median(v[1:]) for k, v in times.items()}

def main():
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)      # as the trainer runs its steps (the run's `flush_denormal`)
    res = {k: v for w in (RECOMPUTE_WIDTH // 2, RECOMPUTE_WIDTH, 2 * RECOMPUTE_WIDTH) for k, v in ms_output_layer(w).items()}
    contexts = (('short_context', 3, False), ('long_context', 40, False), ('ragged_short_context', 3, True))
    for name, x_len, ragged in contexts:
        arms = dict(exact=setup(x_len, 0.0, ragged=ragged), support=setup(x_len, 1e-3, ragged=ragged),
                    top1=setup(x_len, 1e-3, 1, ragged), sample1=setup(x_len, 1e-3, 1, ragged, 1),
                    screen=setup(x_len, 1e-3, 1, ragged, 1, SCREEN))
        runs = dict(finetune=lambda: ms_finetune_step(arms['exact']), exact=lambda: ms_cvae_step(arms['exact']),
                    support=lambda: ms_cvae_step(arms['support']), top1=lambda: ms_cvae_step(arms['top1']),
                    sample1=lambda: ms_cvae_step(arms['sample1']), screen=lambda: ms_cvae_step(arms['screen']))
        for run in runs.values(): run()                                  # warm-up
        times = {k: [] for k in runs}
        for _ in range(REPEATS):
            for k, run in runs.items(): times[k].append(run())
        t = {k: statistics.median(v) for k, v in times.items()}
        kept, kl = support(arms['support'])
        res |= {f'text_step_ms_finetune_{name}': t['finetune'], f'text_step_ms_exact_{name}': t['exact'],
                f'text_step_ms_support_{name}': t['support'], f'text_step_ms_support_top1_{name}': t['top1'],
                f'text_step_over_finetune_exact_{name}': t['exact'] / t['finetune'],
                f'text_step_over_finetune_support_{name}': t['support'] / t['finetune'],
                f'text_step_over_finetune_support_top1_{name}': t['top1'] / t['finetune'],
                f'text_step_ms_support_top1_sample1_{name}': t['sample1'],
                f'text_step_over_finetune_support_top1_sample1_{name}': t['sample1'] / t['finetune'],
                f'text_step_ms_support_top1_sample1_screen_{name}': t['screen'],
                f'text_step_over_finetune_support_top1_sample1_screen_{name}': t['screen'] / t['finetune'],
                f'text_step_screen_classes_{name}': forward_classes(arms['screen']),
                f'text_step_support_classes_{name}': kept, f'text_step_q_star_kl_{name}': kl}
    print(json.dumps({k: round(v, 4) for k, v in res.items()}))

if __name__ == '__main__': main()
