"""The decoder copied from the base under exact enumeration (C = 16 classes, batch 32): milliseconds per training step
of its per-class NLL (forward, backward, Adam) with the context's keys and values computed once and shared by the
classes (`PretrainedDecoder.class_nll`) against the whole sequence once per class, for a short context (3 tokens, as the
real-text probe's x) and a long one (40 tokens), y 20 tokens; a 2-layer d=64 GPT-2 as the probe's base; interleaved
repeats, medians. Prints one JSON object."""
import argparse, json, statistics, time

import torch, transformers

from inverse_surprisal.hf_decoder import PretrainedDecoder

BATCH, C, Y, REPEATS, STEPS = 32, 16, 20, 5, 5

def setup(x_len: int, device):
    torch.manual_seed(0)
    lm = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=2000, n_positions=64, n_embd=64, n_layer=2,
                                                              n_head=4)).eval()
    dec = PretrainedDecoder(lm, z_dim=64).to(device)
    torch.nn.init.normal_(dec.z_proj.weight, std=0.02)
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

def main():
    p = argparse.ArgumentParser(description=__doc__); p.add_argument('--device', default='cpu')
    device = torch.device(p.parse_args().device)
    res = {}
    for name, x_len in (('short_context', 3), ('long_context', 40)):
        arm = setup(x_len, device)
        for shared in (False, True): ms_per_step(arm, shared)     # warm-up
        times = {False: [], True: []}
        for _ in range(REPEATS):
            for shared in (False, True): times[shared].append(ms_per_step(arm, shared))
        whole, shared = statistics.median(times[False]), statistics.median(times[True])
        res |= {f'pretrained_step_ms_whole_{name}': whole, f'pretrained_step_ms_shared_{name}': shared,
                f'pretrained_per_class_step_ratio_{name}': shared / whole}
    print(json.dumps({k: round(v, 4) for k, v in res.items()}))

if __name__ == '__main__': main()
