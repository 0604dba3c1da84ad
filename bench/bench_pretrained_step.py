"""The decoder copied from the base under exact enumeration (C = 16 classes, batch 32): milliseconds per training step
of its per-class NLL (forward, backward, Adam) with the context's keys and values computed once and shared by the
classes (`PretrainedDecoder.class_nll`) against the whole sequence once per class, for a short context (3 tokens, as the
real-text probe's x) and a long one (40 tokens), y 20 tokens; a 2-layer d=64 GPT-2 as the probe's base; interleaved
repeats, medians. Beside them the shared step with z in every block (`z_layers='every'`), and each shared step over one
plain forward of the base on the same batch (no gradient): what a CVAE step costs in base passes. Prints one JSON
object."""
import argparse, json, statistics, time

import torch, transformers

from inverse_surprisal.hf_decoder import PretrainedDecoder

BATCH, C, Y, REPEATS, STEPS = 32, 16, 20, 5, 5

def setup(x_len: int, device, z_layers: str='input'):
    torch.manual_seed(0)
    lm = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=2000, n_positions=64, n_embd=64, n_layer=2,
                                                              n_head=4)).eval()
    dec = PretrainedDecoder(lm, z_dim=64, z_layers=z_layers).to(device)
    for lin in [dec.z_proj] + list(dec.z_blocks or []): torch.nn.init.normal_(lin.weight, std=0.02)
    ids = torch.randint(0, 2000, (BATCH, x_len + 1 + Y))
    ym = torch.zeros(ids.shape, dtype=torch.bool); ym[:, x_len + 1:] = True
    return dec, torch.optim.Adam(dec.parameters(), 1e-3), ids.to(device), ym.to(device), torch.randn(C, 64).to(device)

def ms_per_step(arm, shared: bool) -> float:
    dec, opt, ids, ym, z = arm
    start = time.perf_counter()
    for _ in range(STEPS):
        if shared: l = dec.class_nll(ids, ym, z)[0]
        else: l = dec.nll(ids.repeat_interleave(C, 0), ym.repeat_interleave(C, 0), z.repeat(BATCH, 1)[:, None])[0]
        opt.zero_grad(); l.mean().backward(); opt.step()
        l.sum().item()                                           # waits for the device
    return 1000 * (time.perf_counter() - start) / STEPS

def ms_per_forward(arm) -> float:
    "One plain forward of the base (the copy without z) over the batch, no gradient."
    dec, _, ids, _, _ = arm
    start = time.perf_counter()
    with torch.no_grad():
        for _ in range(STEPS): dec(ids).sum().item()
    return 1000 * (time.perf_counter() - start) / STEPS

def main():
    p = argparse.ArgumentParser(description=__doc__); p.add_argument('--device', default='cpu')
    device = torch.device(p.parse_args().device)
    res = {}
    for name, x_len in (('short_context', 3), ('long_context', 40)):
        arm, every = setup(x_len, device), setup(x_len, device, 'every')
        runs = dict(whole=lambda: ms_per_step(arm, False), shared=lambda: ms_per_step(arm, True),
                    every=lambda: ms_per_step(every, True), base=lambda: ms_per_forward(arm))
        for run in runs.values(): run()                                  # warm-up
        times = {k: [] for k in runs}
        for _ in range(REPEATS):
            for k, run in runs.items(): times[k].append(run())
        t = {k: statistics.median(v) for k, v in times.items()}
        res |= {f'pretrained_step_ms_whole_{name}': t['whole'], f'pretrained_step_ms_shared_{name}': t['shared'],
                f'pretrained_per_class_step_ratio_{name}': t['shared'] / t['whole'],
                f'pretrained_step_ms_shared_every_{name}': t['every'], f'base_forward_ms_{name}': t['base'],
                f'pretrained_step_over_base_forward_{name}': t['shared'] / t['base'],
                f'pretrained_every_step_over_base_forward_{name}': t['every'] / t['base']}
    print(json.dumps({k: round(v, 4) for k, v in res.items()}))

if __name__ == '__main__': main()
