"""Scoring benchmarks: dataset scoring against a bare inference_mode forward over the same batches, against a per-example
loop, its peak extra memory against the size of one batch of logits, and how its time grows with size and length.
Prints one JSON object. Every ratio is taken side by side in this one process (medians after warm-up)."""
import argparse, json, os, statistics, subprocess, sys, time

import numpy as np
import torch
import transformers

from inverse_surprisal.cache import _flatten, _pad_batch, score_dataset
from inverse_surprisal.reference import FrozenBaseModel, score_batch

def gpt2(vocab, d, layers, device):
    cfg = transformers.GPT2Config(vocab_size=vocab, n_positions=512, n_embd=d, n_layer=layers, n_head=4, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    return FrozenBaseModel(transformers.GPT2LMHeadModel(cfg).to(device))

def dataset(n, lo, hi, vocab, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for T in torch.randint(lo, hi + 1, (n,), generator=g).tolist():
        out.append({'input_ids': torch.randint(0, vocab, (T,), generator=g), 'y_mask': torch.arange(T) >= T // 2})
    return out

def batches(data, batch_size):
    "The same length-bucketed, right-padded batches (input_ids, y_mask, attention_mask or None) that score_dataset builds."
    flat = _flatten([(d['input_ids'], d['y_mask']) for d in data])
    order = torch.from_numpy(np.argsort(flat.lengths.numpy(), kind='stable'))
    return [_pad_batch(flat, order[s:s + batch_size], 0) for s in range(0, len(order), batch_size)]

def sync(device):
    if device.type == 'cuda': torch.cuda.synchronize()

def timed(fn, device):
    sync(device); t = time.perf_counter(); fn(); sync(device); return time.perf_counter() - t

def peak_extra_bytes(fn, device):
    "Peak memory allocated while fn runs, above what was allocated before it."
    if device.type == 'cuda':
        torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); before = torch.cuda.memory_allocated()
        fn(); torch.cuda.synchronize(); return torch.cuda.max_memory_allocated() - before
    status = lambda key: next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith(key))
    open('/proc/self/clear_refs', 'w').write('5')      # reset the peak resident set size (VmHWM)
    before = status('VmRSS'); fn(); return status('VmHWM') - before

def memory(device):
    "Peak extra memory of a bare forward and of scoring one batch of 16 x 256 tokens at vocab 32768, over its logits' size."
    model = gpt2(32768, 256, 4, device)
    ids = torch.randint(0, 32768, (16, 256), device=device); ym = torch.arange(256, device=device).expand(16, -1) >= 128
    logits_bytes = 16 * 256 * 32768 * 4
    def bare():
        with torch.inference_mode(): model(ids).logits
    bare(); score_batch(model, ids, ym)                   # warm-up
    return {'forward_peak_memory_ratio': round(peak_extra_bytes(bare, device) / logits_bytes, 4),
            'scoring_peak_memory_ratio': round(peak_extra_bytes(lambda: score_batch(model, ids, ym), device) / logits_bytes, 4)}

def compare(model, data, bs, device, reps, naive_n):
    """Median seconds per example of (bare forward over the same batches, dataset scoring, per-example loop over the
    first `naive_n` examples), interleaved, and the median ratio bare / scoring. The bare forward computes the logits at
    every position; scoring asks a model that takes `logits_to_keep` only for those from the first y token's predecessor
    on, which is part of what it saves."""
    bat = [(i.to(device), None if a is None else a.to(device)) for i, _, a in batches(data, bs)]
    def bare():                      # with the attention mask of a padded batch, and no key/value cache, as scoring passes them
        with torch.inference_mode():
            for ids, att in bat: model(ids, attention_mask=att, use_cache=False).logits
    score = lambda: score_dataset(model, data, batch_size=bs, device=device, progress=False)
    naive = lambda: [score_batch(model, d['input_ids'][None].to(device), d['y_mask'][None].to(device)) for d in data[:naive_n]]
    bare(); score(); naive()                                  # warm-up
    times = [[], [], []]
    for _ in range(reps):                                     # interleaved, so drift hits all three alike
        for t, fn in zip(times, (bare, score, naive)): t.append(timed(fn, device))
    # the ratio is the median of each repeat's own ratio: a bare forward and a scoring pass timed back to back see the
    # same machine, where medians taken apart can pair a quiet moment with a busy one
    ratio = statistics.median(b / s for b, s in zip(times[0], times[1]))
    return [statistics.median(t) / n for t, n in zip(times, (len(data), len(data), naive_n))] + [ratio]

def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--device', default='cpu'); p.add_argument('--reps', type=int, default=9)
    p.add_argument('--memory', action='store_true', help='measure peak memory only (run in its own process)')
    a = p.parse_args()
    device, res = torch.device(a.device), {}
    if a.memory: return print(json.dumps(memory(device)))
    res['device'] = str(device) if device.type == 'cpu' else torch.cuda.get_device_name(device)
    def record(suffix, what, model, data, bs, naive_n):
        _, t_score, t_naive, ratio = compare(model, data, bs, device, a.reps, naive_n)
        res[f'scoring{suffix or "_small"}'] = what
        res[f'scoring_vs_forward_ratio{suffix}'] = round(ratio, 4)
        res[f'scoring_vs_naive_speedup{suffix}'] = round(t_naive / t_score, 3)
        res[f'scoring_tokens_per_second{suffix}'] = round(sum(len(d['input_ids']) for d in data) / len(data) / t_score)
    # the package's own scale: sequences like the synthetic task's [x ; sep ; y] (18 tokens), of varied lengths, small decoder
    record('', 'GPT-2 d=64, 2 layers, vocab 16; 8192 examples of 12-24 tokens, y = second half, batch 256',
           gpt2(16, 64, 2, device), dataset(8192, 12, 24, 16), 256, 512)
    # a language-model scale: vocabulary 32768, the log-softmax is a visible share of the work
    model = gpt2(32768, 256, 4, device)
    record('_lm', 'GPT-2 d=256, 4 layers, vocab 32768; 256 examples of 16-64 tokens, y = second half, batch 32',
           model, dataset(256, 16, 64, 32768), 32, 64)
    # memory in a process of its own: a fixed mmap threshold makes freed large blocks go back to the OS, so resident-set
    # peaks measure real use (it slows allocation, so the timings above run without it)
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_='65536')
    mem = subprocess.run([sys.executable, __file__, '--memory', '--device', a.device], capture_output=True, text=True, env=env, check=True)
    res.update(json.loads(mem.stdout.strip().splitlines()[-1]))
    # scales: time as the dataset grows and as sequences lengthen (vocab 32768 model)
    res['scoring_scales'] = []
    for n, length in ((128, 32), (512, 32), (128, 128), (512, 128)):
        d = dataset(n, length, length, 32768, seed=1)
        score_dataset(model, d[:32], batch_size=32, device=device, progress=False)
        t = statistics.median(timed(lambda: score_dataset(model, d, batch_size=32, device=device, progress=False), device) for _ in range(3))
        res['scoring_scales'].append(dict(examples=n, length=length, seconds=round(t, 4), tokens_per_second=round(n * length / t)))
    print(json.dumps(res))

if __name__ == '__main__': main()
